import CSodium

/// BLAKE2b (libsodium's `crypto_generichash`), plain and keyed.
public enum Blake2b {
    /// The shortest output libsodium produces (16 bytes).
    public static let minimumLength = Int(crypto_generichash_BYTES_MIN)
    /// The longest output libsodium produces (64 bytes).
    public static let maximumLength = Int(crypto_generichash_BYTES_MAX)

    /// The BLAKE2b hash of `parts` taken one after another, `length` bytes
    /// long (clamped to 16...64).
    public static func hash(_ parts: [UInt8]..., length: Int = 32) -> [UInt8] {
        hash(parts: parts, key: nil, length: length)
    }

    /// The BLAKE2b hash of `parts` keyed with `key` (a MAC), `length` bytes long.
    public static func keyedHash(key: SecretBytes, _ parts: [UInt8]..., length: Int = 32) -> [UInt8] {
        hash(parts: parts, key: key, length: length)
    }

    /// The BLAKE2b hash of the concatenation of `parts`, keyed when `key` is given.
    public static func hash(parts: [[UInt8]], key: SecretBytes?, length: Int = 32) -> [UInt8] {
        if parts.count == 1 { return parts[0].withUnsafeBytes { hash($0, key: key, length: length) } }
        var joined: [UInt8] = []
        joined.reserveCapacity(parts.reduce(0) { $0 + $1.count })
        for part in parts { joined.append(contentsOf: part) }
        return joined.withUnsafeBytes { hash($0, key: key, length: length) }
    }

    /// The BLAKE2b hash of bytes in contiguous memory, keyed when `key` is given.
    public static func hash(_ data: UnsafeRawBufferPointer, key: SecretBytes? = nil, length: Int = 32) -> [UInt8] {
        Sodium.ensureReady()
        let length = min(max(length, minimumLength), maximumLength)
        var out = [UInt8](repeating: 0, count: length)
        let input = data.baseAddress?.assumingMemoryBound(to: UInt8.self)
        out.withUnsafeMutableBufferPointer { o in
            if let key {
                key.withUnsafeBytes { k in
                    _ = sweeper_generichash(
                        o.baseAddress, length, input, UInt64(data.count),
                        k.baseAddress?.assumingMemoryBound(to: UInt8.self), k.count)
                }
            } else {
                _ = sweeper_generichash(o.baseAddress, length, input, UInt64(data.count), nil, 0)
            }
        }
        return out
    }
}

/// SHA-256 (libsodium's `crypto_hash_sha256`), for what the world outside
/// Sweeper names by it: TLS certificate fingerprints, as browsers show them.
public enum SHA256Digest {
    /// The 32-byte SHA-256 of `bytes`.
    public static func of(_ bytes: [UInt8]) -> [UInt8] {
        Sodium.ensureReady()
        var out = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        bytes.withUnsafeBufferPointer { input in
            _ = crypto_hash_sha256(&out, input.baseAddress, UInt64(input.count))
        }
        return out
    }
}
