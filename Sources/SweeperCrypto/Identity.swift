import CSodium
import SweeperConventions

/// An Ed25519 detached signature (64 bytes).
public struct Signature: Hashable, Sendable {
    /// The length of a signature in bytes.
    public static let byteCount = Int(crypto_sign_BYTES)
    /// The signature bytes.
    public let bytes: [UInt8]

    /// Wraps 64 signature bytes; `nil` for any other length.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = Array(bytes)
    }
}

/// Why a printed peer id could not be read.
public enum PeerIDError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A character that is not a base32 letter or digit.
    case invalidCharacter(Character, position: Int)
    /// Too few or too many characters.
    case wrongLength(expected: Int, actual: Int)
    /// The check characters don't match the rest: something was mistyped.
    case checkMismatch
    /// The bytes are not an Ed25519 public key (wrong length).
    case wrongByteCount(expected: Int, actual: Int)

    public var description: String {
        switch self {
        case .invalidCharacter(let c, let p):
            "peer id character \(p) ('\(c)') is not a base32 letter or digit"
        case .wrongLength(let e, let a):
            "a peer id has \(e) characters (hyphens aside); this one has \(a)"
        case .checkMismatch:
            "the peer id's check does not match: a character is mistyped or two are swapped"
        case .wrongByteCount(let e, let a):
            "a peer key has \(e) bytes; got \(a)"
        }
    }
}

/// A peer: its Ed25519 public key. Printed (``description``) as grouped
/// Crockford base32 of the key followed by a 2-byte BLAKE2b check, such as
/// `7ZQ4M-…-K3`, so a mistyped id is refused rather than taken for another.
public struct PeerID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The length of a public key in bytes.
    public static let byteCount = Int(crypto_sign_PUBLICKEYBYTES)
    static let checkByteCount = 2
    /// The number of base32 symbols in a printed id, hyphens aside.
    public static let symbolCount = ((byteCount + checkByteCount) * 8 + 4) / 5

    /// The public key bytes.
    public let bytes: [UInt8]

    /// Wraps 32 public key bytes.
    public init(bytes: some Collection<UInt8>) throws(PeerIDError) {
        guard bytes.count == Self.byteCount else { throw .wrongByteCount(expected: Self.byteCount, actual: bytes.count) }
        self.bytes = Array(bytes)
    }

    /// Parses a printed peer id (case, hyphens and spaces don't matter).
    public init(parsing text: String) throws(PeerIDError) {
        let symbols = CrockfordBase32.symbols(of: text)
        guard symbols.count == Self.symbolCount else {
            throw .wrongLength(expected: Self.symbolCount, actual: symbols.count)
        }
        let decoded: [UInt8]
        do {
            decoded = try CrockfordBase32.decode(String(symbols))
        } catch {
            switch error {
            case .invalidCharacter(let c, let p): throw .invalidCharacter(c, position: p)
            case .nonZeroPadding: throw .checkMismatch
            }
        }
        let key = Array(decoded.prefix(Self.byteCount))
        let check = Array(decoded.dropFirst(Self.byteCount))
        guard key.count == Self.byteCount, check == Self.check(of: key) else { throw .checkMismatch }
        self.bytes = key
    }

    static func check(of key: [UInt8]) -> [UInt8] {
        Array(Blake2b.hash(Array("sweeper/peer-id-check/v1".utf8), key, length: 16).prefix(checkByteCount))
    }

    /// The id as people read it: 11 hyphen-separated groups of 5 symbols.
    public var description: String {
        CrockfordBase32.encode(bytes + Self.check(of: bytes), groupedBy: 5)
    }

    /// The first group of the printed id, enough to tell a family's peers apart.
    public var shortDescription: String { String(description.prefix(5)) }

    /// Whether `signature` is this key's signature of `message`.
    public func isValidSignature(_ signature: Signature, of message: [UInt8]) -> Bool {
        Sodium.ensureReady()
        return signature.bytes.withUnsafeBufferPointer { s in
            message.withUnsafeBufferPointer { m in
                bytes.withUnsafeBufferPointer { k in
                    sweeper_sign_verify_detached(s.baseAddress, m.baseAddress, UInt64(m.count), k.baseAddress) == 0
                }
            }
        }
    }

    public static func < (lhs: PeerID, rhs: PeerID) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }

    public static func == (lhs: PeerID, rhs: PeerID) -> Bool { lhs.bytes == rhs.bytes }

    /// Hashes every byte, a word at a time (fast, unlike hashing the array
    /// element by element): ids arrive from peers, and a crafted set sharing
    /// their first bytes must not make a table quadratic.
    public func hash(into hasher: inout Hasher) { hasher.combine(wordsOf: bytes) }
}

/// Why a saved identity could not be loaded.
public enum IdentityError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The saved secret key has the wrong length.
    case wrongByteCount(expected: Int, actual: Int)
    /// The public half stored in the secret key does not match its seed.
    case inconsistentKey

    public var description: String {
        switch self {
        case .wrongByteCount(let e, let a): "an identity secret key has \(e) bytes; this one has \(a)"
        case .inconsistentKey: "the identity secret key is damaged: its public half does not match"
        }
    }
}

/// A daemon's Ed25519 identity: the secret key (kept in wiped memory) and
/// its public ``PeerID``.
public struct SigningIdentity: Sendable {
    /// The length of a saved secret key (libsodium's seed ‖ public key form).
    public static let secretKeyByteCount = Int(crypto_sign_SECRETKEYBYTES)

    /// The public key.
    public let peerID: PeerID
    let secretKey: SecretBytes

    /// Generates a fresh identity from the system's secure random source.
    public init() {
        Sodium.ensureReady()
        var pk = [UInt8](repeating: 0, count: PeerID.byteCount)
        let sk = SecretBytes(count: Self.secretKeyByteCount) { buffer in
            pk.withUnsafeMutableBufferPointer { p in
                _ = sweeper_sign_keypair(p.baseAddress, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self))
            }
        }
        self.secretKey = sk
        self.peerID = PeerID(unchecked: pk)
    }

    /// Derives an identity from a 32-byte seed (deterministic; for tests and
    /// simulations, where identities must be reproducible).
    public init(seed: [UInt8]) throws(IdentityError) {
        Sodium.ensureReady()
        guard seed.count == Int(crypto_sign_SEEDBYTES) else {
            throw .wrongByteCount(expected: Int(crypto_sign_SEEDBYTES), actual: seed.count)
        }
        var pk = [UInt8](repeating: 0, count: PeerID.byteCount)
        let sk = SecretBytes(count: Self.secretKeyByteCount) { buffer in
            pk.withUnsafeMutableBufferPointer { p in
                seed.withUnsafeBufferPointer { s in
                    _ = sweeper_sign_seed_keypair(p.baseAddress, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), s.baseAddress)
                }
            }
        }
        self.secretKey = sk
        self.peerID = PeerID(unchecked: pk)
    }

    /// Loads an identity saved with ``secretKeyBytes`` (64 bytes), checking
    /// that its public half matches its seed.
    public init(secretKeyBytes bytes: [UInt8]) throws(IdentityError) {
        guard bytes.count == Self.secretKeyByteCount else {
            throw .wrongByteCount(expected: Self.secretKeyByteCount, actual: bytes.count)
        }
        let rebuilt = try SigningIdentity(seed: Array(bytes.prefix(Int(crypto_sign_SEEDBYTES))))
        guard constantTimeEqual(rebuilt.peerID.bytes, bytes.suffix(PeerID.byteCount)) else { throw .inconsistentKey }
        self = rebuilt
    }

    /// The secret key (seed ‖ public key), for saving with mode 0600. Wipe
    /// the returned array once written.
    public var secretKeyBytes: [UInt8] { secretKey.bytes }

    /// Signs `message` (detached Ed25519 signature).
    public func sign(_ message: [UInt8]) -> Signature {
        var sig = [UInt8](repeating: 0, count: Signature.byteCount)
        sig.withUnsafeMutableBufferPointer { s in
            message.withUnsafeBufferPointer { m in
                secretKey.withUnsafeBytes { k in
                    _ = sweeper_sign_detached(s.baseAddress, m.baseAddress, UInt64(m.count), k.baseAddress?.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        return Signature(unchecked: sig)
    }
}

extension Signature {
    init(unchecked bytes: [UInt8]) { self.bytes = bytes }
}

extension PeerID {
    init(unchecked bytes: [UInt8]) { self.bytes = bytes }
}
