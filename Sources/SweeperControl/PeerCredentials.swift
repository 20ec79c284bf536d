import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// Who is at the other end of a Unix socket, as the kernel says
/// (`SO_PEERCRED`): the daemon checks its callers with it, and the client
/// checks the daemon before it sends anything.
public struct PeerCredentials: Sendable, Equatable {
    /// The process id.
    public var pid: Int32 = 0
    /// The user id.
    public var uid: UInt32 = 0
    /// The group id.
    public var gid: UInt32 = 0

    /// Credentials with every field zero.
    public init() {}

    /// The credentials of the process at the other end of `channel`, nil
    /// when the channel is not a Unix socket or the kernel would not say.
    public static func of(_ channel: any Channel) async -> PeerCredentials? {
        guard let provider = channel as? any SocketOptionProvider else { return nil }
        return try? await provider.unsafeGetSocketOption(
            level: .socket, name: NIOBSDSocket.Option(rawValue: SO_PEERCRED)
        ).get()
    }

    /// The credentials of the process at the other end of the connected
    /// Unix socket `descriptor`, nil when the kernel would not say: for a
    /// blocking client that has no channel (shell completion).
    public static func of(descriptor: Int32) -> PeerCredentials? {
        // Laid out as the kernel's `struct ucred` (pid, uid, gid), as ``of(_:)`` reads it too.
        var out = PeerCredentials()
        var size = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &out, &size) == 0, size == MemoryLayout<PeerCredentials>.size else { return nil }
        return out
    }
}
