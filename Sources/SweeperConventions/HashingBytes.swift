extension Hasher {
    /// Feeds every byte of `bytes` in, eight at a time: the hasher takes
    /// whole words much faster than a buffer of bytes. For keys made of
    /// bytes a peer may choose (keys, hashes): every byte counts, so a
    /// crafted set sharing a prefix does not make a table quadratic.
    public mutating func combine(wordsOf bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            let words = raw.count / 8
            for i in 0..<words { combine(raw.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)) }
            if raw.count > words * 8 { combine(bytes: UnsafeRawBufferPointer(rebasing: raw[(words * 8)...])) }
        }
    }
}
