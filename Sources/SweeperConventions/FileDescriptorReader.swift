#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a file or a descriptor to its end with `read(2)`, so that
/// `/dev/null`, pipes and files in `/proc` read as what they hold, whatever
/// size `stat` gives them.
public enum FileDescriptorReader {
    /// Why a read failed: the C library's words for `errno`.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What was being done: "opened" or "read".
        public var action: String
        /// `strerror(errno)`.
        public var reason: String
        public var description: String { "cannot be \(action): \(reason)" }
    }

    /// Every byte of `descriptor` up to its end, or at most `limit` + 1 (so
    /// a caller can tell that there was more than `limit`).
    public static func readAll(from descriptor: Int32, limit: Int = .max) throws(Failure) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while bytes.count <= limit {
            let room = limit - bytes.count
            let wanted = room < chunk.count ? room + 1 : chunk.count
            let n = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, wanted) }
            if n < 0 {
                if errno == EINTR { continue }
                // A non-blocking descriptor with nothing yet: wait for it, never spin.
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    FileDescriptorWait.until(descriptor, is: Int16(POLLIN))
                    continue
                }
                throw Failure(action: "read", reason: String(cString: strerror(errno)))
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return bytes
    }

    /// Every byte of the file at `path`.
    public static func readAll(path: String, limit: Int = .max) throws(Failure) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Failure(action: "opened", reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        return try readAll(from: descriptor, limit: limit)
    }
}

/// Waits, without spinning, until a non-blocking descriptor is ready.
enum FileDescriptorWait {
    /// Blocks in `poll(2)` until `descriptor` has `events` (or an error or
    /// hang-up, which the next read or write reports).
    static func until(_ descriptor: Int32, is events: Int16) {
        var entry = pollfd(fd: descriptor, events: events, revents: 0)
        while poll(&entry, 1, -1) < 0 && errno == EINTR {}
    }
}
