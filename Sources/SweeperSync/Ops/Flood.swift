import SweeperConventions
import SweeperGame

/// A reveal or a chord as the cell clicked and the exceptions to its flood:
/// what a `flood` op (kind 9) carries instead of every cell it opens, so
/// that its size does not grow with the flood. Every replica computes the
/// same cells from the game's layout alone (``cells(in:)``), whatever it
/// holds: the exceptions say where the author's flood stopped that the
/// layout cannot tell (the flags it saw).
///
/// The cells opened: the seeds (the clicked cell, or for a chord its
/// neighbours) that are not exceptions, and from every opened cell with no
/// adjacent mine, its neighbours that are not exceptions, and so on. A
/// flood never enters an exception.
///
/// Encoding: cell × 2 + chord (LEB128) ‖ exception count (LEB128) ‖ the
/// exceptions ascending, the first as is and each next as its distance from
/// the one before minus one (LEB128).
public struct Flood: Hashable, Sendable {
    /// The cell clicked: the cell revealed, or the number chorded on.
    public let cell: Int
    /// Whether the move is a chord on ``cell``: its neighbours are the seeds.
    public let isChord: Bool
    /// The cells the flood does not enter, ascending.
    public let exceptions: [Int]

    /// A flood of `cell` (a chord on it when `chord`), stopped by `exceptions`.
    /// `nil` when a cell is off any board (``CellRuns/cellLimit``).
    public init?(cell: Int, chord: Bool, exceptions: some Sequence<Int>) {
        let sorted = Set(exceptions).sorted()
        guard cell >= 0, cell < CellRuns.cellLimit, sorted.allSatisfy({ $0 >= 0 && $0 < CellRuns.cellLimit }) else { return nil }
        self.cell = cell
        self.isChord = chord
        self.exceptions = sorted
    }

    private init(validCell cell: Int, chord: Bool, exceptions: [Int]) {
        self.cell = cell
        self.isChord = chord
        self.exceptions = exceptions
    }

    /// The flood that opens the cells `opened`, which a reveal of `cell` (or
    /// a chord on it) opened on `board` (the author's view before the move):
    /// its exceptions are the cells where that flood stopped and the layout
    /// alone would not (flags, and cells with no adjacent mine revealed
    /// before). ``cells(in:)`` then gives `opened` and, at most, numbers
    /// already revealed on `board` (which change nothing).
    public init(cell: Int, chord: Bool, opening opened: [Int], on board: Board) {
        let layout = board.layout
        var inMove = CellBits(count: layout.geometry.cellCount)
        for c in opened { inMove.insert(c) }
        var seen = CellBits(count: layout.geometry.cellCount)
        var exceptions: [Int] = []
        // The walk a replica makes, where this board's flood stopped.
        _ = Self.walk(from: cell, chord: chord, on: layout, seen: &seen) { c in
            let isZero = !layout.isMine(c) && layout.adjacentMines(c) == 0
            if inMove.contains(c) || (board.isRevealed(c) && !isZero) { return true }
            exceptions.append(c)
            return false
        }
        self.init(validCell: cell, chord: chord, exceptions: exceptions.sorted())
    }

    /// The cells this flood opens on `layout`, ascending (cells must be on
    /// its board: ``upperBound`` at most its cell count).
    public func cells(in layout: MineLayout) -> [Int] {
        var seen = CellBits(count: layout.geometry.cellCount)
        for e in exceptions { seen.insert(e) }
        var opened = Self.walk(from: cell, chord: isChord, on: layout, seen: &seen) { _ in true }
        opened.sort()
        return opened
    }

    /// The flood from `cell` (its neighbours for a chord) over `layout`:
    /// every cell not `seen` yet is marked seen and offered to `opens`; the
    /// cells it takes open, and those with no adjacent mine lead on to their
    /// neighbours. Returns the cells opened, in the order they opened.
    private static func walk(
        from cell: Int, chord: Bool, on layout: MineLayout, seen: inout CellBits,
        opens: (Int) -> Bool
    ) -> [Int] {
        let geometry = layout.geometry
        var opened: [Int] = []
        var stack: [Int] = []
        func visit(_ c: Int) {
            guard seen.insert(c), opens(c) else { return }
            opened.append(c)
            if !layout.isMine(c) && layout.adjacentMines(c) == 0 { stack.append(c) }
        }
        if chord {
            geometry.forEachNeighbor(of: cell) { visit($0) }
        } else {
            visit(cell)
        }
        while let c = stack.popLast() {
            geometry.forEachNeighbor(of: c) { visit($0) }
        }
        return opened
    }

    /// The largest cell named plus one: it must not pass the board's cell count.
    var upperBound: Int { max(cell, exceptions.last ?? 0) + 1 }

    func encode(into w: inout ByteWriter) {
        w.varint(UInt64(cell) << 1 | (isChord ? 1 : 0))
        w.varint(exceptions.count)
        var previous = -1
        for e in exceptions {
            w.varint(e - previous - 1)
            previous = e
        }
    }

    static func decode(from r: inout ByteReader) throws(ByteDecodingError) -> Flood {
        let head = try r.varint("flood cell")
        guard head >> 1 < UInt64(CellRuns.cellLimit) else { throw .cellOutOfRange(Int(clamping: head >> 1)) }
        let count = try r.int("exception count", max: CellRuns.cellLimit)
        // Each exception takes at least a byte: a count the input cannot hold is refused before allocating.
        guard count <= r.remaining else { throw .truncated(field: "flood exceptions") }
        var exceptions: [Int] = []
        exceptions.reserveCapacity(count)
        var previous = -1
        for _ in 0..<count {
            let gap = try r.int("exception gap", max: CellRuns.cellLimit)
            let e = previous + gap + 1
            guard e < CellRuns.cellLimit else { throw .cellOutOfRange(e) }
            exceptions.append(e)
            previous = e
        }
        return Flood(validCell: Int(head >> 1), chord: head & 1 != 0, exceptions: exceptions)
    }
}

/// One bit per cell of a board.
struct CellBits {
    private var words: [UInt64]

    init(count: Int) { words = [UInt64](repeating: 0, count: (count + 63) / 64) }

    func contains(_ c: Int) -> Bool { words[c >> 6] & (1 << UInt64(c & 63)) != 0 }

    /// Sets the bit of `c`; `false` when it was set already.
    @discardableResult
    mutating func insert(_ c: Int) -> Bool {
        let bit: UInt64 = 1 << UInt64(c & 63)
        guard words[c >> 6] & bit == 0 else { return false }
        words[c >> 6] |= bit
        return true
    }
}
