import CSodium

/// Why a frame of a secret stream was refused.
public enum SecretStreamError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The stream header has the wrong length.
    case badHeader
    /// The frame did not authenticate: tampered, replayed, reordered or
    /// from another stream.
    case forged
    /// The frame is shorter than its authentication tag.
    case tooShort

    public var description: String {
        switch self {
        case .badHeader: "bad secret stream header"
        case .forged: "frame failed authentication (tampered, replayed or out of order)"
        case .tooShort: "frame shorter than its authentication tag"
        }
    }
}

/// The sending half of an encrypted, authenticated stream of frames
/// (libsodium's `crypto_secretstream_xchacha20poly1305`). Each frame's
/// nonce follows from the last, so frames cannot be dropped, replayed or
/// reordered without the receiver noticing.
///
/// Not thread-safe: one task owns it.
public final class SecretStreamSender {
    private let state: UnsafeMutablePointer<crypto_secretstream_xchacha20poly1305_state>
    /// The header the receiver needs first.
    public let header: [UInt8]

    /// Starts a stream under `key` (32 bytes).
    public init(key: SecretBytes) {
        Sodium.ensureReady()
        let state = UnsafeMutablePointer<crypto_secretstream_xchacha20poly1305_state>.allocate(capacity: 1)
        var header = [UInt8](repeating: 0, count: crypto_secretstream_xchacha20poly1305_headerbytes())
        key.withUnsafeBytes { k in
            // A key is 32 bytes: its base address exists.
            if let kp = k.bindMemory(to: UInt8.self).baseAddress {
                _ = crypto_secretstream_xchacha20poly1305_init_push(state, &header, kp)
            }
        }
        self.state = state
        self.header = header
    }

    deinit {
        sweeper_memzero(state, MemoryLayout<crypto_secretstream_xchacha20poly1305_state>.size)
        state.deallocate()
    }

    /// The overhead each frame adds.
    public static var overhead: Int { crypto_secretstream_xchacha20poly1305_abytes() }

    /// Encrypts one frame.
    public func seal(_ plain: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: plain.count + Self.overhead)
        plain.withUnsafeBufferPointer { p in
            _ = crypto_secretstream_xchacha20poly1305_push(
                state, &out, nil, sweeper_nonnull(p.baseAddress), UInt64(plain.count), nil, 0, 0)
        }
        return out
    }
}

/// The receiving half of a secret stream; see ``SecretStreamSender``.
///
/// Not thread-safe: one task owns it.
public final class SecretStreamReceiver {
    private let state: UnsafeMutablePointer<crypto_secretstream_xchacha20poly1305_state>

    /// The length of the header that starts a stream.
    public static var headerLength: Int { crypto_secretstream_xchacha20poly1305_headerbytes() }

    /// Starts receiving a stream under `key`, given the sender's header.
    public init(key: SecretBytes, header: [UInt8]) throws(SecretStreamError) {
        Sodium.ensureReady()
        guard header.count == Self.headerLength else { throw .badHeader }
        let state = UnsafeMutablePointer<crypto_secretstream_xchacha20poly1305_state>.allocate(capacity: 1)
        let ok = key.withUnsafeBytes { k in
            guard let kp = k.bindMemory(to: UInt8.self).baseAddress else { return false }
            return crypto_secretstream_xchacha20poly1305_init_pull(state, header, kp) == 0
        }
        guard ok else {
            state.deallocate()
            throw .badHeader
        }
        self.state = state
    }

    deinit {
        sweeper_memzero(state, MemoryLayout<crypto_secretstream_xchacha20poly1305_state>.size)
        state.deallocate()
    }

    /// Decrypts and authenticates one frame.
    public func open(_ sealed: some Collection<UInt8>) throws(SecretStreamError) -> [UInt8] {
        let bytes = Array(sealed)
        guard bytes.count >= SecretStreamSender.overhead else { throw .tooShort }
        var out = [UInt8](repeating: 0, count: bytes.count - SecretStreamSender.overhead)
        var tag: UInt8 = 0
        let ok = bytes.withUnsafeBufferPointer { c in
            out.withUnsafeMutableBufferPointer { o in
                crypto_secretstream_xchacha20poly1305_pull(
                    state, o.baseAddress ?? UnsafeMutablePointer(mutating: sweeper_nonnull(nil)), nil, &tag,
                    c.baseAddress ?? sweeper_nonnull(nil), UInt64(bytes.count), nil, 0) == 0
            }
        }
        guard ok else { throw .forged }
        return out
    }
}
