/// The classic board sizes.
public enum Preset: String, CaseIterable, Sendable, Codable {
    /// 9×9 with 10 mines.
    case beginner
    /// 16×16 with 40 mines.
    case intermediate
    /// 30×16 with 99 mines.
    case expert

    /// The number of columns.
    public var width: Int {
        switch self {
        case .beginner: 9
        case .intermediate: 16
        case .expert: 30
        }
    }

    /// The number of rows.
    public var height: Int {
        switch self {
        case .beginner: 9
        case .intermediate, .expert: 16
        }
    }

    /// The number of mines.
    public var mines: Int {
        switch self {
        case .beginner: 10
        case .intermediate: 40
        case .expert: 99
        }
    }
}

/// Why a set of game parameters was refused. The description names the
/// allowed range, so it can be shown to a user as it is.
public enum ParameterError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The width is outside 2...500.
    case widthOutOfRange(Int)
    /// The height is outside 2...500.
    case heightOutOfRange(Int)
    /// The mine count is outside 1...(w−1)(h−1).
    case minesOutOfRange(Int, maximum: Int)
    /// The start cell is not on the board.
    case startOutOfRange(Cell, width: Int, height: Int)
    /// A no-guess board needs room for a mine-free 3×3 opening.
    case tooDenseForNoGuess(Int, maximum: Int)

    public var description: String {
        let sides = "\(BoardGeometry.minimumSide) to \(BoardGeometry.maximumSide)"
        switch self {
        case .widthOutOfRange(let w):
            return "width \(w) is out of range: it must be \(sides)"
        case .heightOutOfRange(let h):
            return "height \(h) is out of range: it must be \(sides)"
        case .minesOutOfRange(let m, let maximum):
            return "\(m) mines is out of range: this size takes 1 to \(maximum) (that is, (width−1)×(height−1))"
        case .startOutOfRange(let c, let w, let h):
            return "start cell \(c) is off the board: x must be 0 to \(w - 1) and y 0 to \(h - 1)"
        case .tooDenseForNoGuess(let m, let maximum):
            return "\(m) mines is too many for a no-guess board of this size: it takes at most \(maximum) (width×height−9, room for a mine-free opening)"
        }
    }
}

/// Everything that determines a board, checked against the limits.
public struct GameParameters: Hashable, Sendable, Codable {
    /// The board's shape.
    public let geometry: BoardGeometry
    /// The number of mines.
    public let mines: Int
    /// The start cell: mine-free, revealed when the game begins.
    public let start: Cell
    /// Whether the board must be solvable from the opening without guessing.
    public let noGuess: Bool

    /// The number of columns.
    public var width: Int { geometry.width }
    /// The number of rows.
    public var height: Int { geometry.height }

    /// The largest mine count a board of this size accepts: (w−1)(h−1).
    public static func maximumMines(width: Int, height: Int) -> Int { (width - 1) * (height - 1) }

    /// Creates validated parameters.
    ///
    /// - Parameters:
    ///   - start: the start cell; the centre when `nil`.
    /// - Throws: ``ParameterError`` naming the allowed range.
    public init(width: Int, height: Int, mines: Int, start: Cell? = nil, noGuess: Bool = false) throws(ParameterError) {
        let sides = BoardGeometry.minimumSide...BoardGeometry.maximumSide
        guard sides.contains(width) else { throw .widthOutOfRange(width) }
        guard sides.contains(height) else { throw .heightOutOfRange(height) }
        let maximum = Self.maximumMines(width: width, height: height)
        guard (1...maximum).contains(mines) else { throw .minesOutOfRange(mines, maximum: maximum) }
        let geometry = BoardGeometry(width: width, height: height)
        let start = start ?? geometry.centre
        guard geometry.contains(start) else { throw .startOutOfRange(start, width: width, height: height) }
        if noGuess && mines > width * height - 9 {
            throw .tooDenseForNoGuess(mines, maximum: max(0, width * height - 9))
        }
        self.geometry = geometry
        self.mines = mines
        self.start = start
        self.noGuess = noGuess
    }

    /// Creates validated parameters for a preset.
    public init(preset: Preset, start: Cell? = nil, noGuess: Bool = false) throws(ParameterError) {
        try self.init(width: preset.width, height: preset.height, mines: preset.mines, start: start, noGuess: noGuess)
    }

    /// Whether the opening keeps the start cell's neighbours mine-free too:
    /// true when the mine count leaves room (mines ≤ w·h − 9).
    public var clearsStartNeighbours: Bool { mines <= geometry.cellCount - 9 }
}
