import SweeperConventions
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
        guard let b = Hex.decode(hex), b.count == Self.byteCount else { return nil }
        bytes = b
    }

    public var description: String { Hex.encode(bytes) }

    public static func < (lhs: GameID, rhs: GameID) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }

    public static func == (lhs: GameID, rhs: GameID) -> Bool { lhs.bytes == rhs.bytes }

    /// Hashes every byte, a word at a time (fast, unlike hashing the array
    /// element by element): ids arrive from peers, and a crafted set sharing
    /// their first bytes must not make a table quadratic.
    public func hash(into hasher: inout Hasher) { hasher.combine(wordsOf: bytes) }
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

    public var description: String { Hex.encode(bytes) }

    public static func == (lhs: OpHash, rhs: OpHash) -> Bool { lhs.bytes == rhs.bytes }

    /// Hashes every byte, a word at a time (fast, unlike hashing the array
    /// element by element): ids arrive from peers, and a crafted set sharing
    /// their first bytes must not make a table quadratic.
    public func hash(into hasher: inout Hasher) { hasher.combine(wordsOf: bytes) }
}
