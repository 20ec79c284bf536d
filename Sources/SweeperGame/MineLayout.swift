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
/// same one. It takes half a byte a cell (a 500×500 layout is 125,000
/// bytes): each cell's nibble is its count of adjacent mines (0...8), or
/// ``mineNibble`` for a mine.
public struct MineLayout: Hashable, Sendable {
    /// The board's shape.
    public let geometry: BoardGeometry
    /// The number of mines.
    public let mineCount: Int
    /// Two cells a byte, the even cell in the low nibble.
    @usableFromInline let nibbles: [UInt8]
    /// A mine's nibble.
    @usableFromInline static let mineNibble: UInt8 = 15

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
        var counts = [UInt8](repeating: 0, count: n)
        var total = 0
        let w = geometry.width
        let h = geometry.height
        mineBytes.withUnsafeBufferPointer { m in
            counts.withUnsafeMutableBufferPointer { c in
                for y in 0..<h {
                    for x in 0..<w where m[y * w + x] != 0 {
                        total += 1
                        for ny in max(0, y - 1)...min(h - 1, y + 1) {
                            for nx in max(0, x - 1)...min(w - 1, x + 1) where nx != x || ny != y {
                                c[ny * w + nx] += 1
                            }
                        }
                    }
                }
            }
        }
        var nibbles = [UInt8](repeating: 0, count: (n + 1) / 2)
        for i in 0..<n {
            let v = mineBytes[i] != 0 ? Self.mineNibble : counts[i]
            nibbles[i >> 1] |= i & 1 == 0 ? v : v << 4
        }
        self.nibbles = nibbles
        self.mineCount = total
    }

    @inlinable func nibble(_ index: Int) -> UInt8 {
        let b = nibbles[index >> 1]
        return index & 1 == 0 ? b & 0x0F : b >> 4
    }

    /// One byte a cell, 1 where a mine is (for the solver's working copy).
    public var mines: [UInt8] { (0..<geometry.cellCount).map { isMine($0) ? 1 : 0 } }

    /// One byte a cell, each cell's count of adjacent mines (for the solver's working copy).
    public var counts: [UInt8] { (0..<geometry.cellCount).map { UInt8(adjacentMines($0)) } }

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
    @inlinable public func isMine(_ index: Int) -> Bool { nibble(index) == Self.mineNibble }

    /// The number of mines among the neighbours of cell `index` (counted
    /// for a mine, whose nibble says only that it is one).
    @inlinable public func adjacentMines(_ index: Int) -> Int {
        let v = nibble(index)
        guard v == Self.mineNibble else { return Int(v) }
        var count = 0
        geometry.forEachNeighbor(of: index) { if isMine($0) { count += 1 } }
        return count
    }

    /// The number of safe cells.
    public var safeCellCount: Int { geometry.cellCount - mineCount }

    /// The indices of all mines, ascending.
    public var mineIndices: [Int] { (0..<geometry.cellCount).filter { isMine($0) } }

    /// The score for first revealing cell `index`: 1 for a zero, N for a number N.
    @inlinable public func score(of index: Int) -> Int { max(1, adjacentMines(index)) }

    /// The board's 3BV: the least number of clicks that clears it without
    /// flags — one per connected region of zeros (with its border) plus one
    /// per numbered cell that borders no zero.
    public var threeBV: Int {
        let n = geometry.cellCount
        var marked = [Bool](repeating: false, count: n)
        var clicks = 0
        var stack: [Int] = []
        for i in 0..<n where nibble(i) == 0 && !marked[i] {
            clicks += 1
            marked[i] = true
            stack.append(i)
            while let c = stack.popLast() {
                geometry.forEachNeighbor(of: c) { nb in
                    if !marked[nb] {
                        marked[nb] = true
                        if nibble(nb) == 0 { stack.append(nb) }
                    }
                }
            }
        }
        for i in 0..<n where !isMine(i) && !marked[i] { clicks += 1 }
        return clicks
    }
}
