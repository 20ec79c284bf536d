/// Per cell of a board, a number, for the cells that have one: a
/// dictionary while few do, one array of every cell once that takes less
/// room. A dictionary costs some 11 to 22 bytes a cell it holds, the array
/// 4 bytes a cell of the board: a board just begun holds almost nothing,
/// and one played through no more than the array.
struct CellEntries: Sendable {
    /// The cells' numbers while few cells have one.
    private var sparse: [Int32: UInt32] = [:]
    /// Every cell's number once many have one (``absent`` where none);
    /// empty before.
    private var dense: [UInt32] = []
    /// The board's number of cells.
    private let cellCount: Int
    /// A cell without a number, in ``dense``.
    private static let absent = UInt32.max

    /// An empty map for a board of `cellCount` cells.
    init(cellCount: Int) { self.cellCount = cellCount }

    /// The number of `cell`, if it has one. Numbers are below `UInt32.max`.
    subscript(cell: Int32) -> UInt32? {
        get {
            guard !dense.isEmpty else { return sparse[cell] }
            let value = dense[Int(cell)]
            return value == Self.absent ? nil : value
        }
        set {
            guard dense.isEmpty else {
                dense[Int(cell)] = newValue ?? Self.absent
                return
            }
            sparse[cell] = newValue
            // Past about 3 cells in 8, the array is the smaller.
            if sparse.count * 8 > cellCount * 3 { makeDense() }
        }
    }

    private mutating func makeDense() {
        var all = [UInt32](repeating: Self.absent, count: cellCount)
        for (cell, value) in sparse { all[Int(cell)] = value }
        dense = all
        sparse = [:]
    }

    /// Calls `body` with each cell that has a number and its number, in no set order.
    func forEach(_ body: (Int32, UInt32) -> Void) {
        guard !dense.isEmpty else {
            for (cell, value) in sparse { body(cell, value) }
            return
        }
        for (cell, value) in dense.enumerated() where value != Self.absent { body(Int32(cell), value) }
    }
}
