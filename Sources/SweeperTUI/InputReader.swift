import Dispatch
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The write end of the self-pipe SIGWINCH pokes (set once before the handler is installed).
nonisolated(unsafe) private var resizePipeWrite: Int32 = -1

private func resizeHandler(_: Int32) {
    var byte: UInt8 = 1
    let saved = errno
    _ = write(resizePipeWrite, &byte, 1)
    errno = saved
}

/// Reads the terminal on a thread of its own and posts decoded input, and
/// terminal resizes (SIGWINCH through a self-pipe), to the viewer's loop.
enum InputReader {
    /// How long an unfinished escape sequence may wait for its end before a
    /// lone escape counts as the Escape key (milliseconds).
    static let escapeWait: Int32 = 40

    static func start(fd: Int32, continuation: AsyncStream<SessionMessage>.Continuation) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        for f in fds { _ = fcntl(f, F_SETFL, fcntl(f, F_GETFL) | O_NONBLOCK) }
        resizePipeWrite = fds[1]
        var action = sigaction()
        action.__sigaction_handler.sa_handler = resizeHandler
        sigemptyset(&action.sa_mask)
        action.sa_flags = Int32(SA_RESTART)
        sigaction(SIGWINCH, &action, nil)
        let resizeRead = fds[0]
        // A queue of its own: the blocking poll never holds a thread that
        // Swift concurrency schedules on.
        DispatchQueue(label: "sweeper-input").async {
            var decoder = InputDecoder()
            var buffer = [UInt8](repeating: 0, count: 4096)
            var polls = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: resizeRead, events: Int16(POLLIN), revents: 0)]
            while true {
                polls[0].revents = 0
                polls[1].revents = 0
                let ready = poll(&polls, 2, decoder.hasPending ? escapeWait : -1)
                if ready < 0 {
                    if errno == EINTR { continue }
                    continuation.yield(.inputEnded)
                    return
                }
                if ready == 0 {
                    let events = decoder.flush()
                    if !events.isEmpty { continuation.yield(.input(events)) }
                    continue
                }
                if polls[1].revents & Int16(POLLIN) != 0 {
                    while read(resizeRead, &buffer, buffer.count) > 0 {}
                    continuation.yield(.resize)
                }
                if polls[0].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                    let n = read(fd, &buffer, buffer.count)
                    if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                    guard n > 0 else {
                        continuation.yield(.inputEnded)
                        return
                    }
                    let events = decoder.feed(buffer[0..<n])
                    if !events.isEmpty { continuation.yield(.input(events)) }
                }
            }
        }
    }
}
