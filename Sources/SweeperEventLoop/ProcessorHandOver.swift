#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Lets a thread that this one has just woken run first.
///
/// A write to a local socket wakes its reader. Linux places that reader on
/// the writer's processor, because the writer usually waits for an answer
/// at once. The daemon does not wait after a latency-critical write: it
/// still has bookkeeping to do. After a peer's move it writes the event to
/// its viewers and then queues the ops for the store. After its own move it
/// pushes the op and then commits it. Meanwhile the woken reader waits for
/// the daemon's turn to end: about 0.2 ms on an idle machine. The reader
/// is the viewer the player looks at, or, where two daemons share a
/// machine, the other daemon.
///
/// ``handOver()`` gives that reader the processor first. When nothing else
/// is runnable, it costs one system call and returns at once.
public enum ProcessorHandOver {
    /// Yields the processor to any thread ready to run on it (`sched_yield`);
    /// this thread runs again in its turn.
    public static func handOver() {
        sched_yield()
    }
}
