import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Another daemon holds a resource this one needs.
public struct InstanceLockError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is held (the state directory or socket path).
    public var resource: String
    /// The holder's pid, if its lock file says.
    public var holder: Int32?
    /// Why taking the lock failed, when not because it is held.
    public var detail: String?

    public var description: String {
        if let detail { return "cannot lock \(resource): \(detail)" }
        if let holder { return "another sweeperd (pid \(holder)) is already using \(resource); stop it first (kill \(holder))" }
        return "another sweeperd is already using \(resource)"
    }
}

/// An exclusive advisory lock (flock) on a lock file holding the owner's pid.
/// Released when the process exits, however it exits.
public final class InstanceLock: Sendable {
    /// The lock file's path.
    public let path: String
    private let fd: Int32

    /// Takes the lock at `path`, refusing if another process holds it.
    /// `resource` names what the lock protects, for the message.
    public init(path: String, resource: String) throws(InstanceLockError) {
        self.path = path
        // Never through a symbolic link, and only a file of this user: the
        // pid written below must not truncate a file someone pointed here.
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            let detail = errno == ELOOP ? "\(path) is a symbolic link" : String(cString: strerror(errno))
            throw InstanceLockError(resource: resource, holder: nil, detail: detail)
        }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == geteuid() else {
            close(fd)
            throw InstanceLockError(resource: resource, holder: nil, detail: "\(path) is not a file of this user")
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let holder = Self.readPID(fd)
            close(fd)
            throw InstanceLockError(resource: resource, holder: holder, detail: nil)
        }
        ftruncate(fd, 0)
        let text = "\(getpid())\n"
        _ = text.withCString { pwrite(fd, $0, strlen($0), 0) }
        self.fd = fd
    }

    private static func readPID(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = pread(fd, &buffer, 31, 0)
        guard n > 0 else { return nil }
        return Int32(String(decoding: buffer[0..<n], as: UTF8.self).trimmedOfWhitespace)
    }

    /// Releases the lock (the file stays; removing it would race a new owner).
    public func release() {
        flock(fd, LOCK_UN)
    }

    deinit { close(fd) }
}
