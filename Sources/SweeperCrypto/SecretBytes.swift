import CSodium

/// Secret bytes in memory of their own, wiped with `sodium_memzero` when the
/// last reference goes away, and compared in constant time.
///
/// The storage is never copied into Swift arrays by this type; reading it
/// goes through ``withUnsafeBytes(_:)``. ``bytes`` makes a copy that the
/// caller owns (to save a key to disk, for instance) and must not keep.
public final class SecretBytes: @unchecked Sendable, Equatable {
    // Immutable after init, so sharing between threads is safe.
    private let storage: UnsafeMutableRawBufferPointer

    /// The number of bytes.
    public var count: Int { storage.count }

    /// Copies `bytes` into fresh secret storage. The caller should wipe its
    /// own copy if it can.
    public init(copying bytes: some Collection<UInt8>) {
        Sodium.ensureReady()
        let count = bytes.count
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        var i = 0
        for b in bytes {
            storage[i] = b
            i += 1
        }
        length = count
    }

    /// `count` fresh random bytes.
    public init(randomCount count: Int) {
        Sodium.ensureReady()
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        length = count
        sweeper_randombytes(storage.baseAddress, count)
    }

    /// Fills `count` bytes with `fill`, which writes into the buffer it is given.
    init(count: Int, fill: (UnsafeMutableRawBufferPointer) -> Void) {
        Sodium.ensureReady()
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        length = count
        fill(UnsafeMutableRawBufferPointer(rebasing: storage[0..<count]))
    }

    private let length: Int

    deinit {
        sweeper_memzero(storage.baseAddress, storage.count)
        storage.deallocate()
    }

    /// Calls `body` with the secret bytes; the pointer must not escape.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<length]))
    }

    /// A copy of the bytes, for saving; wipe it when done.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// Constant-time equality.
    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        guard lhs.length == rhs.length else { return false }
        if lhs.length == 0 { return true }
        return sweeper_memcmp(lhs.storage.baseAddress, rhs.storage.baseAddress, lhs.length) == 0
    }
}
