import SweeperConventions

/// A set of cell indices stored as ascending, non-touching runs: what one
/// reveal op carries. A flood over a nearly empty 500×500 board is a handful
/// of runs, whatever its cell count.
public struct CellRuns: Hashable, Sendable, Sequence {
    /// The largest cell count of any board (500×500): no run may pass it.
    public static let cellLimit = 500 * 500

    /// The runs, ascending, each non-empty, with at least one cell between runs.
    public let runs: [Range<Int>]

    /// Builds runs from any cell indices (sorted and de-duplicated here).
    public init(cells: some Sequence<Int>) {
        let sorted = Set(cells).sorted()
        var runs: [Range<Int>] = []
        var i = 0
        while i < sorted.count {
            let start = sorted[i]
            var end = start + 1
            i += 1
            while i < sorted.count && sorted[i] == end {
                end += 1
                i += 1
            }
            runs.append(start..<end)
        }
        self.runs = runs
    }

    init(validRuns: [Range<Int>]) { runs = validRuns }

    /// Whether there are no cells.
    public var isEmpty: Bool { runs.isEmpty }

    /// The number of cells.
    public var cellCount: Int { runs.reduce(0) { $0 + $1.count } }

    /// One past the largest cell (0 when empty).
    public var upperBound: Int { runs.last?.upperBound ?? 0 }

    /// The cells, ascending.
    public func makeIterator() -> FlattenSequence<[Range<Int>]>.Iterator { runs.joined().makeIterator() }

    /// Encoding: run count, then per run the gap from the previous run's end
    /// (from 0 for the first) and the run length minus one, all LEB128.
    func encode(into w: inout ByteWriter) {
        w.varint(runs.count)
        var previousEnd = 0
        for r in runs {
            w.varint(r.lowerBound - previousEnd)
            w.varint(r.count - 1)
            previousEnd = r.upperBound
        }
    }

    static func decode(from r: inout ByteReader) throws(ByteDecodingError) -> CellRuns {
        let count = try r.int("run count", max: cellLimit / 2 + 1)
        guard count > 0 else { throw .badRuns }
        var runs: [Range<Int>] = []
        runs.reserveCapacity(Swift.min(count, r.remaining / 2 + 1))
        var previousEnd = 0
        for i in 0..<count {
            let gap = try r.int("run gap", max: cellLimit)
            if i > 0 && gap == 0 { throw .badRuns }
            let length = try r.int("run length", max: cellLimit) + 1
            let start = previousEnd + gap
            let end = start + length
            guard end <= cellLimit else { throw .cellOutOfRange(end - 1) }
            runs.append(start..<end)
            previousEnd = end
        }
        return CellRuns(validRuns: runs)
    }
}
