import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A blocking connection to a daemon's control socket, one line at a time,
/// for what the CLI would never send (malformed lines, floods) and for
/// clients that must outlive the daemon: it sends with `MSG_NOSIGNAL` (a
/// killed daemon must not SIGPIPE the test runner) and never blocks longer
/// than its timeouts. `@unchecked Sendable`: one thread may write while
/// another reads, and only the reader touches the buffer.
public final class ControlLineClient: @unchecked Sendable {
    private let fd: Int32
    private var pending: [UInt8] = []

    /// Connects to the socket at `path`; reads give up after 30 s of
    /// silence, writes after `sendTimeout` seconds of a daemon not reading.
    public init(path: String, sendTimeout: Int = 30) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ProcessError("socket: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            let why = String(cString: strerror(errno))
            close(fd)
            throw ProcessError("connect \(path): \(why)")
        }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var sendTimeout = timeval(tv_sec: sendTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Writes bytes; false when the daemon closed or stopped reading for the send timeout.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    /// Closes the writing half of the connection (the daemon reads the end
    /// of input); answers can still be read.
    public func finishSending() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// Writes `line` and a newline.
    @discardableResult
    public func send(_ line: String) -> Bool { send(Array((line + "\n").utf8)) }

    /// The next line, or nil at the end of the stream or after 30 s of silence.
    public func readLine() -> String? {
        while true {
            if let nl = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<nl], as: UTF8.self)
                pending.removeSubrange(...nl)
                return line
            }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { return nil }
            pending += buffer[0..<n]
        }
    }

    /// The next line as a JSON object.
    public func readJSON() -> [String: Any]? {
        guard let line = readLine() else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    /// Sends one request and reads its answer; nil when the connection died.
    public func request(_ object: [String: Any]) -> [String: Any]? {
        guard let data = try? JSONSerialization.data(withJSONObject: object),
            send(Array(data) + [0x0A])
        else { return nil }
        return readJSON()
    }
}

/// SplitMix64: a small seeded generator, so a test's random choices can be
/// replayed from the seed it prints.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
