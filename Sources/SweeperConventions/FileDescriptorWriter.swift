#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes to a file descriptor with `write(2)`, which reports failures
/// (Foundation's `FileHandle.write(_:)` traps on them): the terminal the
/// viewer draws on and the command line's standard output and error.
public enum FileDescriptorWriter {
    /// Writes all of `bytes` to `descriptor`, retrying short writes, EINTR
    /// and EAGAIN (waited out in poll(2), never spun). Returns false when the descriptor fails (EPIPE: its
    /// reader went away), with what was not written dropped.
    @discardableResult
    public static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                // A full non-blocking descriptor (a terminal or pipe slow to drain): wait for room, never spin.
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    FileDescriptorWait.until(descriptor, is: Int16(POLLOUT))
                    continue
                }
                return false
            }
            offset += n
        }
        return true
    }
}
