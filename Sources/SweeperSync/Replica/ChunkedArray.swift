/// An array that grows a chunk at a time: the first chunk grows as a short
/// one needs, then each new chunk is made whole at once. A long one never
/// doubles its buffer (and copies it) to grow, nor holds up to twice the
/// room it uses, as a plain array does: its spare room is less than a chunk.
struct ChunkedArray<Element: Sendable>: Sendable {
    /// Elements a chunk holds.
    static var chunkSize: Int { 4096 }

    private var chunks: [[Element]] = []
    /// The number of elements.
    private(set) var count = 0

    /// An empty array.
    init() {}

    /// Element `i` (0 ≤ `i` < ``count``).
    subscript(i: Int) -> Element {
        get {
            let (chunk, index) = i.quotientAndRemainder(dividingBy: Self.chunkSize)
            return chunks[chunk][index]
        }
        set {
            let (chunk, index) = i.quotientAndRemainder(dividingBy: Self.chunkSize)
            chunks[chunk][index] = newValue
        }
    }

    /// Appends `element`.
    mutating func append(_ element: Element) {
        if count % Self.chunkSize == 0 {
            var chunk: [Element] = []
            if count > 0 { chunk.reserveCapacity(Self.chunkSize) }
            chunks.append(chunk)
        }
        chunks[chunks.count - 1].append(element)
        count += 1
    }

    /// Keeps the first `n` elements only.
    mutating func removeAll(after n: Int) {
        guard n < count else { return }
        let (full, rest) = n.quotientAndRemainder(dividingBy: Self.chunkSize)
        chunks.removeLast(chunks.count - full - (rest > 0 ? 1 : 0))
        if rest > 0 { chunks[full].removeLast(chunks[full].count - rest) }
        count = n
    }
}
