import NIOCore

/// What the board's limits on the home network count by: a browser's
/// IPv4 address, or the /64 of its IPv6 address (a device takes new
/// addresses within its /64 at will). A guest on the Wi-Fi who holds every
/// connection or guesses pairing codes fills the share of one address.
enum WebClientAddress {
    /// The key of `address`: "" for none (a Unix socket, or unknown).
    static func key(of address: SocketAddress?) -> String {
        switch address {
        case .v4?:
            return address?.ipAddress ?? ""
        case let .v6(a)?:
            let bytes = withUnsafeBytes(of: a.address.sin6_addr) { Array($0) }
            // An IPv4 address as a dual-stack socket shows it (::ffff:a.b.c.d).
            if bytes.prefix(10).allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
                return bytes.suffix(4).map(String.init).joined(separator: ".")
            }
            return bytes.prefix(8).map { String($0, radix: 16) }.joined(separator: ":") + "::/64"
        default:
            return ""
        }
    }
}
