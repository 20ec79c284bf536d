import CSodium

/// The key of a private game: its ops' contents are sealed with it
/// (libsodium's `crypto_secretbox`: XSalsa20-Poly1305, a random 24-byte
/// nonce per seal), and it reaches each player sealed to their identity
/// key (``SealedBox``), so members who do not play relay the game without
/// reading it.
public struct GameKey: Sendable, Equatable {
    /// The length of a key.
    public static let byteCount = Int(crypto_secretbox_KEYBYTES)
    /// The length of a nonce.
    public static let nonceByteCount = Int(crypto_secretbox_NONCEBYTES)
    /// What a seal adds to the plaintext: the nonce and the MAC.
    public static let overhead = nonceByteCount + Int(crypto_secretbox_MACBYTES)
    /// The length of the key sealed to one player.
    public static let sealedByteCount = byteCount + SealedBox.overhead

    private let secret: SecretBytes

    /// A fresh random key.
    public init() {
        secret = SecretBytes(randomCount: Self.byteCount)
    }

    /// The key sealed to a player, opened by `identity`; `nil` when it was
    /// sealed to someone else, altered, or not a key.
    public init?(opening sealed: [UInt8], with identity: SigningIdentity) {
        guard let opened = identity.openSealed(sealed), opened.count == Self.byteCount else { return nil }
        secret = opened
    }

    /// The key sealed to `player`, or `nil` when the player's key has no
    /// X25519 form (see ``SealedBox/seal(_:to:)``).
    public func sealed(to player: PeerID) -> [UInt8]? {
        var plain = secret.bytes
        defer { sweeper_memzero(&plain, plain.count) }
        return SealedBox.seal(plain, to: player)
    }

    /// A key of these bytes (test vectors); `nil` when not 32 bytes.
    init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        secret = SecretBytes(copying: bytes)
    }

    /// `plain` sealed: nonce (24) ‖ ciphertext with its MAC.
    public func seal(_ plain: [UInt8]) -> [UInt8] {
        Sodium.ensureReady()
        var nonce = [UInt8](repeating: 0, count: Self.nonceByteCount)
        sweeper_randombytes(&nonce, Self.nonceByteCount)
        return seal(plain, nonce: nonce)
    }

    /// `plain` sealed with this nonce (never twice with one key: test vectors only).
    func seal(_ plain: [UInt8], nonce: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: plain.count + Self.overhead)
        out.replaceSubrange(0..<Self.nonceByteCount, with: nonce)
        let ok = secret.withUnsafeBytes { key -> Bool in
            guard let k = key.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
            return out.withUnsafeMutableBufferPointer { o -> Bool in
                guard let base = o.baseAddress else { return false }
                return plain.withUnsafeBufferPointer { p in
                    crypto_secretbox_easy(base + Self.nonceByteCount, sweeper_nonnull(p.baseAddress), UInt64(p.count), nonce, k) == 0
                }
            }
        }
        // crypto_secretbox_easy fails only on a message over its limit (far past any op).
        return ok ? out : []
    }

    /// The plaintext of a ``seal(_:)``, or `nil` when it was sealed with
    /// another key or altered.
    public func open(_ sealed: [UInt8]) -> [UInt8]? {
        Sodium.ensureReady()
        guard sealed.count >= Self.overhead else { return nil }
        let nonce = Array(sealed[0..<Self.nonceByteCount])
        let box = Array(sealed[Self.nonceByteCount...])
        let length = box.count - Int(crypto_secretbox_MACBYTES)
        // One byte at least, so the buffer has an address.
        var plain = [UInt8](repeating: 0, count: max(1, length))
        let ok = secret.withUnsafeBytes { key -> Bool in
            guard let k = key.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
            return plain.withUnsafeMutableBufferPointer { p in
                guard let base = p.baseAddress else { return false }
                return crypto_secretbox_open_easy(base, box, UInt64(box.count), nonce, k) == 0
            }
        }
        return ok ? Array(plain.prefix(length)) : nil
    }

    public static func == (lhs: GameKey, rhs: GameKey) -> Bool { lhs.secret == rhs.secret }
}
