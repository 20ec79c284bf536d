/// A player's mark on a covered cell.
public enum Mark: UInt8, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// No mark.
    case none = 0
    /// A flag: the player believes a mine is here. Flagged cells cannot be uncovered.
    case flag = 1
    /// A question mark: a note to self. It does not protect the cell.
    case question = 2

    public var description: String {
        switch self {
        case .none: "none"
        case .flag: "flag"
        case .question: "question"
        }
    }

    /// The mark that follows this one when a player cycles marks:
    /// none → flag → none, or none → flag → question → none with question marks on.
    public func next(questionMarks: Bool) -> Mark {
        switch self {
        case .none: .flag
        case .flag: questionMarks ? .question : .none
        case .question: .none
        }
    }
}

/// Where a game stands.
public enum GameStatus: String, Sendable, Codable, CustomStringConvertible {
    /// Safe cells remain covered and no mine has gone off.
    case playing
    /// Every safe cell is revealed.
    case won
    /// A mine was revealed.
    case lost

    public var description: String { rawValue }
}

/// What one move changed.
public struct MoveResult: Equatable, Sendable {
    /// The cells the move revealed, ascending (flood and chord included).
    public var revealed: [Int]
    /// The status after the move.
    public var status: GameStatus

    /// Whether the move changed nothing.
    public var isEmpty: Bool { revealed.isEmpty }

    /// Creates a move result.
    public init(revealed: [Int], status: GameStatus) {
        self.revealed = revealed
        self.status = status
    }
}

/// The state of play of one board: which cells are revealed and marked, and
/// the rules that change it. Pure and single-threaded; a replicated game
/// builds one of these from its merged ops.
///
/// Compact: while few cells are revealed, the board holds their indices;
/// past one cell in 48 (where a bit a cell takes less), one bit a cell
/// says whether it is revealed. Only marked cells hold their mark. So a
/// 500×500 board just begun holds its opening alone, and one well in play
/// about 31 KB, beside its (shared) layout.
public struct Board: Sendable {
    /// Where the mines are.
    public let layout: MineLayout
    /// Whether marks cycle through question marks.
    public let questionMarks: Bool

    /// Once many cells are revealed: bit `i % 64` of word `i / 64` is set
    /// once cell `i` is uncovered. Empty before, while ``revealedCells`` says.
    @usableFromInline var revealedBits: [UInt64] = []
    /// While few cells are revealed (``revealedBits`` empty): which.
    @usableFromInline var revealedCells: Set<Int32> = []
    /// The mark on each marked covered cell (revealed cells have none).
    /// (32-bit keys: a long game marks tens of thousands of cells.)
    @usableFromInline var markedCells: [Int32: Mark] = [:]
    /// The number of revealed cells that are safe.
    public internal(set) var revealedSafeCount: Int = 0
    /// The number of flags on covered cells.
    public internal(set) var flagCount: Int = 0
    /// The lowest-indexed revealed mine, if any: the mine that went off.
    public internal(set) var detonatedMine: Int?

    /// The board's shape.
    @inlinable public var geometry: BoardGeometry { layout.geometry }

    /// Creates a board with every cell covered and unmarked.
    public init(layout: MineLayout, questionMarks: Bool = false) {
        self.layout = layout
        self.questionMarks = questionMarks
    }

    /// Creates a board as a game begins: everything covered but the opening,
    /// which is uncovered from `start` (a zero floods).
    public init(layout: MineLayout, start: Int, questionMarks: Bool = false) {
        self.init(layout: layout, questionMarks: questionMarks)
        _ = uncover(start)
    }

    /// Creates a board from a replicated view: the given revealed cells and
    /// marks. Marks on revealed cells are ignored.
    public init(layout: MineLayout, revealed: some Sequence<Int>, marks: [Int: Mark], questionMarks: Bool) {
        self.init(layout: layout, questionMarks: questionMarks)
        _ = reveal(cells: revealed)
        for (cell, mark) in marks where geometry.contains(index: cell) && !isRevealed(cell) {
            setMark(cell, mark)
        }
    }

    /// Where the game stands.
    public var status: GameStatus {
        if detonatedMine != nil { return .lost }
        return revealedSafeCount == layout.safeCellCount ? .won : .playing
    }

    /// Mines minus flags; negative when a player flagged too many.
    public var minesLeft: Int { layout.mineCount - flagCount }

    /// The share of safe cells revealed, 0...1.
    public var progress: Double {
        layout.safeCellCount == 0 ? 1 : Double(revealedSafeCount) / Double(layout.safeCellCount)
    }

    /// Whether cell `i` is uncovered.
    @inlinable public func isRevealed(_ i: Int) -> Bool {
        guard !revealedBits.isEmpty else { return revealedCells.contains(Int32(truncatingIfNeeded: i)) }
        return revealedBits[i >> 6] & (1 << UInt64(i & 63)) != 0
    }

    /// The mark on cell `i`.
    @inlinable public func mark(at i: Int) -> Mark {
        guard !markedCells.isEmpty, let key = Int32(exactly: i) else { return .none }
        return markedCells[key] ?? .none
    }

    /// Whether each cell is uncovered, one element a cell (a copy: ask
    /// ``isRevealed(_:)`` for one cell).
    public var revealed: [Bool] { (0..<geometry.cellCount).map(isRevealed) }

    /// The marked covered cells and their marks.
    public var marks: [Int: Mark] { Dictionary(uniqueKeysWithValues: markedCells.map { (Int($0.key), $0.value) }) }

    // MARK: Moves

    /// Uncovers cell `i`: a covered, unflagged cell is revealed; a zero floods
    /// to its covered, unflagged neighbours; a mine loses the game. A revealed
    /// or flagged cell, or any cell once the game is over, is left alone.
    @discardableResult
    public mutating func uncover(_ i: Int) -> MoveResult {
        guard status == .playing, !isRevealed(i), mark(at: i) != .flag else { return MoveResult(revealed: [], status: status) }
        var opened: [Int] = []
        flood(from: [i], into: &opened)
        return MoveResult(revealed: ascending(opened), status: status)
    }

    /// The cells ``uncover(_:)`` would reveal, without changing the board.
    public func cellsUncovered(by i: Int) -> [Int] {
        var copy = self
        return copy.uncover(i).revealed
    }

    /// Chords on cell `i`: when it is a revealed number whose adjacent flags
    /// equal it, uncovers its other covered, unflagged neighbours (a wrong
    /// flag means one of them is a mine, and the game is lost). Otherwise, or
    /// once the game is over, nothing happens.
    @discardableResult
    public mutating func chord(_ i: Int) -> MoveResult {
        guard status == .playing, isRevealed(i), !layout.isMine(i) else { return MoveResult(revealed: [], status: status) }
        let number = layout.adjacentMines(i)
        guard number > 0 else { return MoveResult(revealed: [], status: status) }
        var flags = 0
        var targets: [Int] = []
        geometry.forEachNeighbor(of: i) { nb in
            if mark(at: nb) == .flag {
                flags += 1
            } else if !isRevealed(nb) {
                targets.append(nb)
            }
        }
        guard flags == number, !targets.isEmpty else { return MoveResult(revealed: [], status: status) }
        var opened: [Int] = []
        flood(from: targets, into: &opened)
        return MoveResult(revealed: ascending(opened), status: status)
    }

    /// The cells ``chord(_:)`` would reveal, without changing the board.
    public func cellsChorded(by i: Int) -> [Int] {
        var copy = self
        return copy.chord(i).revealed
    }

    /// Reveals exactly the given cells (a union: cells already revealed are
    /// skipped), with no flood and whatever the status. This is how a
    /// replicated game applies another player's move. Returns the cells that
    /// were newly revealed.
    @discardableResult
    public mutating func reveal(cells: some Sequence<Int>) -> [Int] {
        var newly: [Int] = []
        for c in cells where geometry.contains(index: c) && !isRevealed(c) {
            open(c)
            newly.append(c)
        }
        return newly
    }

    /// Cycles the mark on a covered cell (none → flag → none, or through a
    /// question mark when those are on). Returns the new mark, or `nil` when
    /// the cell is revealed or the game is over.
    @discardableResult
    public mutating func cycleMark(_ i: Int) -> Mark? {
        guard status == .playing, !isRevealed(i) else { return nil }
        let next = mark(at: i).next(questionMarks: questionMarks)
        setMark(i, next)
        return next
    }

    /// Sets the mark on a covered cell. Returns whether anything changed; a
    /// revealed cell ignores marks, and a question mark is taken as none when
    /// question marks are off.
    @discardableResult
    public mutating func setMark(_ i: Int, _ mark: Mark) -> Bool {
        guard !isRevealed(i), let key = Int32(exactly: i) else { return false }
        let mark = (mark == .question && !questionMarks) ? .none : mark
        let old = self.mark(at: i)
        guard old != mark else { return false }
        if old == .flag { flagCount -= 1 }
        if mark == .flag { flagCount += 1 }
        markedCells[key] = mark == .none ? nil : mark
        return true
    }

    // MARK: Internals

    @inline(__always) private mutating func open(_ c: Int) {
        if revealedBits.isEmpty {
            revealedCells.insert(Int32(truncatingIfNeeded: c))
            // A set entry takes about 6 bytes, a bit a cell an eighth of a byte a cell.
            if revealedCells.count * 48 > geometry.cellCount { makeBitmap() }
        } else {
            revealedBits[c >> 6] |= 1 << UInt64(c & 63)
        }
        if !markedCells.isEmpty, let old = markedCells.removeValue(forKey: Int32(truncatingIfNeeded: c)), old == .flag { flagCount -= 1 }
        if layout.isMine(c) {
            if let d = detonatedMine, d < c {} else { detonatedMine = c }
        } else {
            revealedSafeCount += 1
        }
    }

    /// Moves the revealed cells from ``revealedCells`` to ``revealedBits``.
    private mutating func makeBitmap() {
        var bits = [UInt64](repeating: 0, count: (geometry.cellCount + 63) / 64)
        for c in revealedCells { bits[Int(c) >> 6] |= 1 << UInt64(c & 63) }
        revealedBits = bits
        revealedCells = []
    }

    /// Iterative flood: no recursion, so a 500×500 board opens in one pass.
    /// A cell is opened when it is pushed, so each is visited once.
    private mutating func flood(from seeds: [Int], into opened: inout [Int]) {
        var stack: [Int] = []
        for s in seeds where !isRevealed(s) && mark(at: s) != .flag {
            open(s)
            opened.append(s)
            stack.append(s)
        }
        let layout = self.layout
        let w = geometry.width, h = geometry.height
        while let c = stack.popLast() {
            guard !layout.isMine(c) && layout.adjacentMines(c) == 0 else { continue }
            let x = c % w, y = c / w
            for ny in max(0, y - 1)...min(h - 1, y + 1) {
                for nx in max(0, x - 1)...min(w - 1, x + 1) {
                    let nb = ny * w + nx
                    if !isRevealed(nb) && mark(at: nb) != .flag {
                        open(nb)
                        opened.append(nb)
                        stack.append(nb)
                    }
                }
            }
        }
    }

    /// Sorts the cells a move opened: a bitmap pass for big floods, where a
    /// comparison sort would cost more than the flood itself.
    private func ascending(_ cells: [Int]) -> [Int] {
        let n = geometry.cellCount
        guard cells.count > 64 && cells.count > n / 64 else { return cells.sorted() }
        var hit = [Bool](repeating: false, count: n)
        for c in cells { hit[c] = true }
        var out: [Int] = []
        out.reserveCapacity(cells.count)
        for i in 0..<n where hit[i] { out.append(i) }
        return out
    }
}
