import SweeperCrypto

/// A game's identity: 16 bytes derived from its genesis (see
/// ``Genesis/gameID(creator:)``), printed as 32 hex digits.
public struct GameID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The length in bytes.
    public static let byteCount = 16
    /// The identifier bytes.
    public let bytes: [UInt8]

    /// Wraps 16 bytes; `nil` for any other length.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = Array(bytes)
    }

    init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    /// Parses the 32-hex-digit form printed by ``description``.
    public init?(hex: String) {
        guard let b = hexBytes(hex), b.count == Self.byteCount else { return nil }
        bytes = b
    }

    public var description: String { hexString(bytes) }

    public static func < (lhs: GameID, rhs: GameID) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }

    public static func == (lhs: GameID, rhs: GameID) -> Bool { lhs.bytes == rhs.bytes }

    /// Hashes the first 8 bytes only: they are uniformly random (a key or a
    /// hash), and hashing a whole byte array is slow.
    public func hash(into hasher: inout Hasher) {
        if bytes.count >= 8 {
            hasher.combine(bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) })
        } else {
            hasher.combine(bytes)
        }
    }
}

/// The hash of an op: BLAKE2b-256 over a domain string and the op's
/// canonical unsigned encoding. Each op names its author's previous op by
/// this hash, which chains an author's ops together.
public struct OpHash: Hashable, Sendable, CustomStringConvertible {
    /// The length in bytes.
    public static let byteCount = 32
    /// All zeros: the "previous op" of an author's first op in a game.
    public static let none = OpHash(unchecked: [UInt8](repeating: 0, count: byteCount))
    /// The hash bytes.
    public let bytes: [UInt8]

    /// Wraps 32 bytes; `nil` for any other length.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = Array(bytes)
    }

    init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    public var description: String { hexString(bytes) }

    public static func == (lhs: OpHash, rhs: OpHash) -> Bool { lhs.bytes == rhs.bytes }

    /// Hashes the first 8 bytes only: they are uniformly random (a key or a
    /// hash), and hashing a whole byte array is slow.
    public func hash(into hasher: inout Hasher) {
        if bytes.count >= 8 {
            hasher.combine(bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) })
        } else {
            hasher.combine(bytes)
        }
    }
}

func hexString(_ bytes: [UInt8]) -> String {
    // Written as ASCII straight into the string's storage: ids are shown in
    // every event a move sends.
    String(unsafeUninitializedCapacity: bytes.count * 2) { out in
        var i = 0
        for b in bytes {
            out[i] = hexDigit(b >> 4)
            out[i + 1] = hexDigit(b & 15)
            i += 2
        }
        return i
    }
}

/// The lowercase ASCII hex digit of `v` (0–15).
@inline(__always) private func hexDigit(_ v: UInt8) -> UInt8 { v < 10 ? 0x30 + v : 0x57 + v }

func hexBytes(_ text: String) -> [UInt8]? {
    let chars = Array(text.utf8)
    guard chars.count % 2 == 0 else { return nil }
    func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
    var out: [UInt8] = []
    var i = 0
    while i < chars.count {
        guard let hi = value(chars[i]), let lo = value(chars[i + 1]) else { return nil }
        out.append(hi << 4 | lo)
        i += 2
    }
    return out
}

