import NIOCore

/// Runs Swift concurrency jobs on one SwiftNIO event loop.
///
/// The daemon keeps its actors (the peer node, the game host) on one event
/// loop, as their serial executor, and runs its tasks (link readers and
/// writers, control connections) with this executor as their preference
/// (`withTaskExecutorPreference`). A frame read from a peer's socket is
/// then decrypted, verified, applied and written to a viewer's socket on
/// the thread that read it, with no thread woken in between: the way a
/// single-threaded daemon (MPD, Redis) handles its clients, with the
/// structure of Swift concurrency kept.
///
/// The control client runs each connection's tasks on that connection's
/// loop the same way, so that an answer or an event read from the socket
/// reaches the code awaiting it without waking another thread: on an idle
/// machine each thread woken costs a player a tenth of a millisecond or more.
public final class EventLoopTaskExecutor: TaskExecutor {
    /// The loop the jobs run on.
    public let eventLoop: any EventLoop

    /// An executor running jobs on `eventLoop`.
    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
