import SweeperConventions
import SweeperCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One address a daemon listens at: an IPv4 or IPv6 unicast address and a
/// port, as an address note carries it.
public struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address's bytes: 4 for IPv4, 16 for IPv6.
    public let ip: [UInt8]
    /// The TCP port (never 0).
    public let port: UInt16

    /// An address, or nil when it is no one's to dial: not 4 or 16 bytes,
    /// port 0, or an address that names no host of another network
    /// (unspecified, loopback, link-local, multicast, broadcast, or an
    /// IPv4 address written as IPv6).
    public init?(ip: [UInt8], port: UInt16) {
        guard port != 0, Self.isDialable(ip) else { return nil }
        self.ip = ip
        self.port = port
    }

    /// An address from its text (`1.2.3.4`, `2001:db8::1`), or nil when it
    /// does not parse or is not dialable.
    public init?(host: String, port: UInt16) {
        var bytes = [UInt8](repeating: 0, count: 16)
        if host.contains(":") {
            guard inet_pton(AF_INET6, host, &bytes) == 1 else { return nil }
        } else {
            guard inet_pton(AF_INET, host, &bytes) == 1 else { return nil }
            bytes = Array(bytes.prefix(4))
        }
        self.init(ip: bytes, port: port)
    }

    /// Whether `ip` is a unicast address another host may reach.
    static func isDialable(_ ip: [UInt8]) -> Bool {
        switch ip.count {
        case 4:
            let a = ip[0]
            if a == 0 || a == 127 || a >= 224 { return false }  // this network, loopback, multicast and reserved
            if a == 169 && ip[1] == 254 { return false }  // link-local
            return true
        case 16:
            if ip.allSatisfy({ $0 == 0 }) || ip == [UInt8](repeating: 0, count: 15) + [1] { return false }  // :: and ::1
            if ip[0] == 0xFF { return false }  // multicast
            if ip[0] == 0xFE && ip[1] & 0xC0 == 0x80 { return false }  // link-local fe80::/10
            if ip.prefix(10).allSatisfy({ $0 == 0 }) && ip[10] == 0xFF && ip[11] == 0xFF { return false }  // ::ffff:a.b.c.d
            return true
        default:
            return false
        }
    }

    /// `host:port`, IPv6 in brackets, as a static peer is written.
    public var description: String {
        var text = [CChar](repeating: 0, count: 64)
        var bytes = ip
        let family = ip.count == 4 ? AF_INET : AF_INET6
        guard inet_ntop(family, &bytes, &text, socklen_t(text.count)) != nil else { return "?" }
        let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return ip.count == 4 ? "\(host):\(port)" : "[\(host)]:\(port)"
    }

    /// The host part alone, as `inet_ntop` writes it.
    public var host: String {
        let text = description
        guard ip.count == 16 else { return String(text.prefix { $0 != ":" }) }
        return String(text.dropFirst().prefix { $0 != "]" })
    }
}

/// Where a daemon can be reached: the addresses it listens at, signed by
/// it and spread to every member, so that a device that reaches one member
/// can dial every member it can reach (a house that mDNS does not cross:
/// another subnet, a VPN, a tailnet). The newest (by serial) of each
/// author wins; a receiver forgets one it has not had news of for a while.
///
/// Encoding (the body of a ``PeerMessage/addresses(_:)``, peer protocol 17):
///
///     author key (32) ‖ serial (LEB128) ‖ count (1 byte, ≤ 8)
///     ‖ count × (family (1 byte: 4 or 6) ‖ address (4 or 16 bytes) ‖ port (u16be, ≥ 1))
///     ‖ signature (64): Ed25519 over "sweeper/addresses/v1\0" ‖ the bytes before it
///
/// Every address is a unicast address of another network's reach (no
/// loopback, link-local, multicast, unspecified or mapped address) and
/// none appears twice; anything else is malformed.
public struct AddressNote: Sendable, Hashable {
    static let signatureDomain = Array("sweeper/addresses/v1\0".utf8)
    /// The most addresses one note carries.
    public static let addressLimit = 8

    /// Whose addresses these are.
    public let author: PeerID
    /// Grows with every note the author makes (its milliseconds since 1970 then, made to grow).
    public let serial: UInt64
    /// Where the author listens, in its order.
    public let addresses: [ListenAddress]
    /// The author's signature.
    public let signature: Signature

    static func signedBytes(author: PeerID, serial: UInt64, addresses: [ListenAddress]) -> [UInt8] {
        var out = ByteWriter()
        out.append(author.bytes)
        out.varint(serial)
        out.byte(UInt8(addresses.count))
        for a in addresses {
            out.byte(a.ip.count == 4 ? 4 : 6)
            out.append(a.ip)
            out.append([UInt8(a.port >> 8), UInt8(a.port & 0xFF)])
        }
        return out.bytes
    }

    /// A note signed by `identity`, of the first ``addressLimit`` of
    /// `addresses` (repeats left out).
    public init(signing identity: SigningIdentity, serial: UInt64, addresses: [ListenAddress]) {
        var unique: [ListenAddress] = []
        for a in addresses where !unique.contains(a) && unique.count < Self.addressLimit { unique.append(a) }
        author = identity.peerID
        self.serial = serial
        self.addresses = unique
        signature = identity.sign(Self.signatureDomain + Self.signedBytes(author: author, serial: serial, addresses: unique))
    }

    /// Whether the signature is the author's.
    public var isAuthentic: Bool {
        author.isValidSignature(signature, of: Self.signatureDomain + Self.signedBytes(author: author, serial: serial, addresses: addresses))
    }

    /// The encoding.
    public var encoded: [UInt8] { Self.signedBytes(author: author, serial: serial, addresses: addresses) + signature.bytes }

    /// Decodes a note (its signature is not checked here: ``isAuthentic``).
    public init(decoding bytes: some Collection<UInt8>) throws(ByteDecodingError) {
        var r = ByteReader(Array(bytes))
        let author = try r.peer("address note author")
        let serial = try r.varint("address note serial")
        let count = Int(try r.byte("address count"))
        guard count <= Self.addressLimit else { throw .tooLarge(field: "address count", limit: Self.addressLimit) }
        var addresses: [ListenAddress] = []
        for _ in 0..<count {
            let family = try r.byte("address family")
            guard family == 4 || family == 6 else { throw .unknownKind(field: "address family", value: family) }
            let ip = try r.take(family == 4 ? 4 : 16, "address")
            let port = try r.take(2, "address port")
            guard let address = ListenAddress(ip: ip, port: UInt16(port[0]) << 8 | UInt16(port[1])) else {
                throw .invalid(field: "address", reason: "is not a unicast address and port another host can dial")
            }
            guard !addresses.contains(address) else { throw .invalid(field: "address", reason: "appears twice") }
            addresses.append(address)
        }
        let signature = try r.signatureAtEnd("address note signature")
        self.author = author
        self.serial = serial
        self.addresses = addresses
        self.signature = signature
    }
}

extension AddressNote: SignedNote {}
