import SweeperConventions

/// The secret that makes a family's circle: 32 random bytes shared by every
/// member's daemon. Knowing it is what membership means.
public struct CircleKey: Sendable, Equatable {
    /// The length of a circle key in bytes.
    public static let byteCount = 32
    /// The length of a ``membershipProof(for:)`` in bytes.
    public static let proofByteCount = 16

    /// The key, in wiped memory.
    public let secret: SecretBytes

    /// A fresh random circle key: a daemon that has joined nothing is alone in one of these.
    public init() { secret = SecretBytes(randomCount: Self.byteCount) }

    /// A circle key from saved bytes (exactly 32).
    public init(bytes: [UInt8]) throws(CircleKeyError) {
        guard bytes.count == Self.byteCount else { throw .wrongByteCount(expected: Self.byteCount, actual: bytes.count) }
        secret = SecretBytes(copying: bytes)
    }

    /// The key bytes, for saving; wipe the copy when done.
    public var bytes: [UInt8] { secret.bytes }

    /// A public tag for this circle, for mDNS TXT records: 8 bytes of keyed
    /// BLAKE2b, as 16 lower-case hex digits. Peers of one circle share it;
    /// it reveals nothing about the key.
    public var tag: String {
        let digest = Blake2b.keyedHash(key: secret, Array("sweeper/circle-tag/v1".utf8), length: 16)
        return Hex.encode(digest.prefix(8))
    }

    /// The proof that `member` belongs to this circle: keyed BLAKE2b-128
    /// of a domain string and the member's public key under the circle key.
    /// Only holders of the key can make it; it binds one key, so it is
    /// useless to anyone who cannot sign as that key.
    public func membershipProof(for member: PeerID) -> [UInt8] {
        Blake2b.keyedHash(key: secret, Array("sweeper/membership/v1".utf8), member.bytes, length: Self.proofByteCount)
    }

    /// Whether `proof` is this circle's proof for `member` (constant time).
    public func isValidMembershipProof(_ proof: [UInt8], for member: PeerID) -> Bool {
        constantTimeEqual(proof, membershipProof(for: member))
    }

    public static func == (lhs: CircleKey, rhs: CircleKey) -> Bool { lhs.secret == rhs.secret }
}

/// Why circle key bytes were refused.
public enum CircleKeyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not 32 bytes.
    case wrongByteCount(expected: Int, actual: Int)

    public var description: String {
        switch self {
        case .wrongByteCount(let e, let a): "a circle key has \(e) bytes; got \(a)"
        }
    }
}
