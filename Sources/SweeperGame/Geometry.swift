/// A cell position on a board: `x` is the column and `y` the row, both from 0,
/// with the origin at the top left.
public struct Cell: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The column, from 0 at the left.
    public var x: Int
    /// The row, from 0 at the top.
    public var y: Int

    /// Creates a cell position.
    public init(x: Int, y: Int) {
        self.x = x
        self.y = y
    }

    public var description: String { "\(x),\(y)" }
}

/// The shape of a board: its width and height, and the row-major mapping
/// between ``Cell`` positions and cell indices (`index = y * width + x`).
public struct BoardGeometry: Hashable, Sendable, Codable {
    /// The smallest width or height a board may have.
    public static let minimumSide = 2
    /// The largest width or height a board may have.
    public static let maximumSide = 500

    /// The number of columns.
    public let width: Int
    /// The number of rows.
    public let height: Int

    /// Creates a geometry without checking the limits; use
    /// ``GameParameters`` to validate sizes that come from users.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// The number of cells.
    @inlinable public var cellCount: Int { width * height }

    /// The index of the cell at `cell`.
    @inlinable public func index(of cell: Cell) -> Int { cell.y * width + cell.x }

    /// The index of the cell at column `x`, row `y`.
    @inlinable public func index(x: Int, y: Int) -> Int { y * width + x }

    /// The position of the cell with index `index`.
    @inlinable public func cell(at index: Int) -> Cell { Cell(x: index % width, y: index / width) }

    /// Whether `cell` lies on the board.
    @inlinable public func contains(_ cell: Cell) -> Bool {
        cell.x >= 0 && cell.x < width && cell.y >= 0 && cell.y < height
    }

    /// Whether `index` is a valid cell index.
    @inlinable public func contains(index: Int) -> Bool { index >= 0 && index < cellCount }

    /// The centre cell, the default start of a game.
    public var centre: Cell { Cell(x: (width - 1) / 2, y: (height - 1) / 2) }

    /// Calls `body` with the index of each of the up to 8 neighbours of `index`.
    @inlinable public func forEachNeighbor(of index: Int, _ body: (Int) throws -> Void) rethrows {
        let x = index % width
        let y = index / width
        let x0 = x > 0 ? x - 1 : x
        let x1 = x < width - 1 ? x + 1 : x
        let y0 = y > 0 ? y - 1 : y
        let y1 = y < height - 1 ? y + 1 : y
        var ny = y0
        while ny <= y1 {
            var nx = x0
            let row = ny * width
            while nx <= x1 {
                if nx != x || ny != y { try body(row + nx) }
                nx += 1
            }
            ny += 1
        }
    }

    /// The indices of the neighbours of `index`, in row-major order.
    public func neighbors(of index: Int) -> [Int] {
        var result: [Int] = []
        result.reserveCapacity(8)
        forEachNeighbor(of: index) { result.append($0) }
        return result
    }

    /// Whether `a` and `b` are the same cell or neighbours.
    @inlinable public func isWithinOne(_ a: Int, _ b: Int) -> Bool {
        abs(a % width - b % width) <= 1 && abs(a / width - b / width) <= 1
    }
}
