import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Sends sd_notify-style datagrams to `$NOTIFY_SOCKET` (a path, or an
/// abstract name starting with `@`), written without libsystemd. Does
/// nothing when the variable is unset.
public struct SystemdNotifier: Sendable {
    /// The socket address, as given.
    public let socket: String?
    /// Half of `$WATCHDOG_USEC`, when a watchdog is asked for (and meant for this pid).
    public let watchdogInterval: Duration?

    /// Reads `$NOTIFY_SOCKET`, `$WATCHDOG_USEC` and `$WATCHDOG_PID`.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let s = environment["NOTIFY_SOCKET"]
        socket = (s?.isEmpty ?? true) ? nil : s
        if let usec = environment["WATCHDOG_USEC"].flatMap(UInt64.init), usec > 0,
            environment["WATCHDOG_PID"].flatMap(Int32.init).map({ $0 == getpid() }) ?? true
        {
            watchdogInterval = .microseconds(Int64(clamping: usec / 2))
        } else {
            watchdogInterval = nil
        }
    }

    /// Whether a notify socket is set.
    public var isEnabled: Bool { socket != nil }

    /// Sends `state` (e.g. `READY=1\nSTATUS=serving`). Returns false when it
    /// could not be sent (or no socket is set); never throws.
    @discardableResult
    public func notify(_ state: String) -> Bool {
        guard let socket else { return false }
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(socket.utf8)
        let abstract = pathBytes.first == UInt8(ascii: "@")
        if abstract { pathBytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity || (abstract && pathBytes.count <= capacity) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
        }
        let length = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + pathBytes.count + (abstract ? 0 : 1)
        let payload = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                payload.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), sa, socklen_t(length)) }
            }
        }
        return sent == payload.count
    }
}
