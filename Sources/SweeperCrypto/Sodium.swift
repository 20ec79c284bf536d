import CSodium

/// Process-wide libsodium initialisation. `sodium_init` is safe to call more
/// than once and from several threads; it runs once here, before first use.
enum Sodium {
    /// Initialises libsodium (once). Every entry point of this module calls it.
    static let ready: Bool = {
        // sodium_init returns 0 on success, 1 when already initialised, -1 on failure.
        sodium_init() >= 0
    }()

    /// Makes sure libsodium is initialised before a call into it.
    @inline(__always) static func ensureReady() {
        _ = ready
    }
}

/// Compares two byte sequences in time that depends only on their length,
/// never on where they differ (libsodium's `sodium_memcmp`). Sequences of
/// different lengths are unequal.
public func constantTimeEqual(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
    Sodium.ensureReady()
    let x = Array(a)
    let y = Array(b)
    guard x.count == y.count else { return false }
    if x.isEmpty { return true }
    return x.withUnsafeBytes { px in
        y.withUnsafeBytes { py in
            sweeper_memcmp(px.baseAddress, py.baseAddress, x.count) == 0
        }
    }
}
