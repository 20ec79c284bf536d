/// Why a mine layout could not be built from outside data.
public enum LayoutError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The packed bitmap has the wrong number of bytes for the size.
    case wrongByteCount(expected: Int, actual: Int)
    /// Bits are set past the last cell.
    case bitsPastLastCell
    /// A mine index is not on the board.
    case mineOffBoard(Int)
    /// The layout has no mines, or more than the size allows.
    case mineCountOutOfRange(Int)

    public var description: String {
        switch self {
        case .wrongByteCount(let e, let a): "mine bitmap has \(a) bytes; this size needs \(e)"
        case .bitsPastLastCell: "mine bitmap has bits set past the last cell"
        case .mineOffBoard(let i): "mine index \(i) is off the board"
        case .mineCountOutOfRange(let n): "\(n) mines is not a valid count for this size"
        }
    }
}

/// Where the mines are on a board, with every cell's count of adjacent mines.
///
/// A layout is immutable and cheap to share; games and players all see the
/// same one. It takes one bit a cell (a 500×500 layout is 31,256 bytes), so
/// that a game nobody has open costs little: a cell's count of adjacent
/// mines is read from the bits of its three rows, a few instructions.
public struct MineLayout: Hashable, Sendable {
    /// The board's shape.
    public let geometry: BoardGeometry
    /// The number of mines.
    public let mineCount: Int
    /// Bit `i % 64` of word `i / 64` is set where cell `i` holds a mine;
    /// one zero word follows the last cell's, so that a window of three
    /// cells may always read the word after its first.
    @usableFromInline let bits: [UInt64]
    /// ⌈2³² / width⌉: a cell's column is found by a multiplication, not a
    /// division (exact for every cell of a board of up to 500 × 500).
    @usableFromInline let widthReciprocal: UInt64

    /// Creates a layout from a per-cell mine map (`true` where a mine is).
    public init(geometry: BoardGeometry, isMine: [Bool]) {
        precondition(isMine.count == geometry.cellCount, "mine map size must match the geometry")
        self.init(geometry: geometry, mineBytes: isMine.map { $0 ? 1 : 0 })
    }

    /// Creates a layout from a list of mine cell indices.
    public init(geometry: BoardGeometry, mineIndices: some Sequence<Int>) throws(LayoutError) {
        var bytes = [UInt8](repeating: 0, count: geometry.cellCount)
        for i in mineIndices {
            guard geometry.contains(index: i) else { throw .mineOffBoard(i) }
            bytes[i] = 1
        }
        self.init(geometry: geometry, mineBytes: bytes)
    }

    @usableFromInline init(geometry: BoardGeometry, mineBytes: [UInt8]) {
        self.geometry = geometry
        let n = geometry.cellCount
        var bits = [UInt64](repeating: 0, count: (n + 63) / 64 + 1)
        var total = 0
        for i in 0..<n where mineBytes[i] != 0 {
            bits[i >> 6] |= 1 << UInt64(i & 63)
            total += 1
        }
        self.bits = bits
        self.mineCount = total
        let width = UInt64(geometry.width)
        widthReciprocal = ((1 << 32) + width - 1) / width
    }

    /// The mines among `count` (1 to 3) consecutive cells from `start`.
    @inlinable func mines(from start: Int, count: Int) -> Int {
        let word = start >> 6
        let offset = UInt64(start & 63)
        var window = bits[word] >> offset
        if offset > 61 { window |= bits[word + 1] << (64 - offset) }
        return (window & ((1 << UInt64(count)) - 1)).nonzeroBitCount
    }

    /// One byte a cell, 1 where a mine is (for the solver's working copy).
    public var mines: [UInt8] { (0..<geometry.cellCount).map { isMine($0) ? 1 : 0 } }

    /// Creates a layout from its packed form (see ``packedBits``), refusing
    /// data of the wrong length, stray bits, or a mine count outside the limits.
    public init(geometry: BoardGeometry, packedBits: [UInt8]) throws(LayoutError) {
        let n = geometry.cellCount
        let expected = (n + 7) / 8
        guard packedBits.count == expected else { throw .wrongByteCount(expected: expected, actual: packedBits.count) }
        if n % 8 != 0, let last = packedBits.last, last >> UInt8(n % 8) != 0 { throw .bitsPastLastCell }
        var bytes = [UInt8](repeating: 0, count: n)
        for i in 0..<n where packedBits[i >> 3] & (1 << UInt8(i & 7)) != 0 { bytes[i] = 1 }
        self.init(geometry: geometry, mineBytes: bytes)
        let maximum = GameParameters.maximumMines(width: geometry.width, height: geometry.height)
        guard (1...maximum).contains(mineCount) else { throw .mineCountOutOfRange(mineCount) }
    }

    /// The layout as a bitmap: bit `i % 8` of byte `i / 8` is set where cell
    /// `i` holds a mine (least significant bit first). A 500×500 layout is
    /// 31,250 bytes.
    public var packedBits: [UInt8] {
        var out = [UInt8](repeating: 0, count: (geometry.cellCount + 7) / 8)
        for i in 0..<geometry.cellCount where isMine(i) { out[i >> 3] |= 1 << UInt8(i & 7) }
        return out
    }

    /// Whether cell `index` holds a mine.
    @inlinable public func isMine(_ index: Int) -> Bool { bits[index >> 6] >> UInt64(index & 63) & 1 != 0 }

    /// The number of mines among the neighbours of cell `index`: the
    /// cells of its row and of the rows above and below it, from its left
    /// neighbour to its right one, itself left out.
    @inlinable public func adjacentMines(_ index: Int) -> Int {
        let width = geometry.width
        let x = index - Int((UInt64(index) &* widthReciprocal) >> 32) * width
        let start = x == 0 ? index : index - 1
        let count = (x == 0 ? 0 : 1) + 1 + (x == width - 1 ? 0 : 1)
        var total = mines(from: start, count: count) - (isMine(index) ? 1 : 0)
        if index >= width { total += mines(from: start - width, count: count) }
        if index + width < geometry.cellCount { total += mines(from: start + width, count: count) }
        return total
    }

    /// The number of safe cells.
    public var safeCellCount: Int { geometry.cellCount - mineCount }

    /// The indices of all mines, ascending.
    public var mineIndices: [Int] { (0..<geometry.cellCount).filter { isMine($0) } }

    /// The board's 3BV: the least number of clicks that clears it without
    /// flags — one per connected region of zeros (with its border) plus one
    /// per numbered cell that borders no zero.
    public var threeBV: Int {
        let n = geometry.cellCount
        var marked = [Bool](repeating: false, count: n)
        var clicks = 0
        var stack: [Int] = []
        for i in 0..<n where !isMine(i) && adjacentMines(i) == 0 && !marked[i] {
            clicks += 1
            marked[i] = true
            stack.append(i)
            while let c = stack.popLast() {
                geometry.forEachNeighbor(of: c) { nb in
                    if !marked[nb] {
                        marked[nb] = true
                        if !isMine(nb) && adjacentMines(nb) == 0 { stack.append(nb) }
                    }
                }
            }
        }
        for i in 0..<n where !isMine(i) && !marked[i] { clicks += 1 }
        return clicks
    }
}
