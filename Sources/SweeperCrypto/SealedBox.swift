import CSodium

/// Anonymous public-key encryption to a peer's identity key: libsodium's
/// sealed box (`crypto_box_seal`: a fresh X25519 key pair, XSalsa20-Poly1305)
/// to the X25519 form of the peer's Ed25519 key
/// (`crypto_sign_ed25519_pk_to_curve25519`). Only the holder of the
/// identity's secret key can open it; the sender stays anonymous, so what
/// is sealed must be signed elsewhere when its origin matters.
public enum SealedBox {
    /// What sealing adds to the plaintext: an ephemeral public key (32) and a MAC (16).
    public static let overhead = Int(crypto_box_sealbytes())

    /// `plain` sealed to `recipient`, or `nil` when the recipient's key has
    /// no X25519 form (it is not a valid Ed25519 point).
    public static func seal(_ plain: [UInt8], to recipient: PeerID) -> [UInt8]? {
        Sodium.ensureReady()
        var curve = [UInt8](repeating: 0, count: Int(crypto_box_PUBLICKEYBYTES))
        guard crypto_sign_ed25519_pk_to_curve25519(&curve, recipient.bytes) == 0 else { return nil }
        var out = [UInt8](repeating: 0, count: plain.count + overhead)
        let ok = plain.withUnsafeBufferPointer { p in
            crypto_box_seal(&out, sweeper_nonnull(p.baseAddress), UInt64(p.count), curve) == 0
        }
        return ok ? out : nil
    }
}

extension SigningIdentity {
    /// Opens a ``SealedBox`` sealed to this identity, in wiped memory, or
    /// `nil` when it was sealed to someone else or altered.
    public func openSealed(_ boxed: [UInt8]) -> SecretBytes? {
        Sodium.ensureReady()
        guard boxed.count >= SealedBox.overhead else { return nil }
        var curvePublic = [UInt8](repeating: 0, count: Int(crypto_box_PUBLICKEYBYTES))
        var curveSecret = [UInt8](repeating: 0, count: Int(crypto_box_SECRETKEYBYTES))
        defer { sweeper_memzero(&curveSecret, curveSecret.count) }
        guard crypto_sign_ed25519_pk_to_curve25519(&curvePublic, peerID.bytes) == 0 else { return nil }
        let converted = secretKey.withUnsafeBytes { k -> Bool in
            guard let base = k.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
            return crypto_sign_ed25519_sk_to_curve25519(&curveSecret, base) == 0
        }
        guard converted else { return nil }
        var plain = [UInt8](repeating: 0, count: boxed.count - SealedBox.overhead)
        defer { sweeper_memzero(&plain, plain.count) }
        guard crypto_box_seal_open(&plain, boxed, UInt64(boxed.count), curvePublic, curveSecret) == 0 else { return nil }
        return SecretBytes(copying: plain)
    }
}
