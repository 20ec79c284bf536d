/// A board in its plain text form, as `sweeper board generate` prints it and
/// `sweeper board solve` reads it:
///
/// ```
/// W H X Y        size, then the start cell
/// ..*......      H rows of W characters: `.` safe, `*` mine
/// ...
///                an empty line
/// ```
public struct TextBoard: Equatable, Sendable {
    /// Where the mines are.
    public let layout: MineLayout
    /// The start cell.
    public let start: Cell

    /// Creates a text board.
    public init(layout: MineLayout, start: Cell) {
        self.layout = layout
        self.start = start
    }

    /// The board in text form, ending with the empty line.
    public var text: String {
        let g = layout.geometry
        var out = Array("\(g.width) \(g.height) \(start.x) \(start.y)\n".utf8)
        out.reserveCapacity(out.count + g.cellCount + g.height + 1)
        for y in 0..<g.height {
            for x in 0..<g.width { out.append(layout.isMine(y * g.width + x) ? UInt8(ascii: "*") : UInt8(ascii: ".")) }
            out.append(UInt8(ascii: "\n"))
        }
        out.append(UInt8(ascii: "\n"))
        return String(decoding: out, as: UTF8.self)
    }

    /// The rows of the layout, `.` safe and `*` mine.
    public var rows: [String] {
        let g = layout.geometry
        return (0..<g.height).map { y in
            String(decoding: (0..<g.width).map { layout.isMine(y * g.width + $0) ? UInt8(ascii: "*") : UInt8(ascii: ".") }, as: UTF8.self)
        }
    }
}

/// Why board text could not be read. The description names the line.
public struct BoardTextError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The 1-based line number where the fault is.
    public let line: Int
    /// What is wrong there.
    public let fault: String

    /// Creates an error.
    public init(line: Int, fault: String) {
        self.line = line
        self.fault = fault
    }

    public var description: String { "line \(line): \(fault)" }
}

extension TextBoard {
    /// Reads every board in `text`. Blank lines between boards are skipped.
    /// - Throws: ``BoardTextError`` naming the line and the fault: a bad
    ///   header, a size outside the limits, a ragged row, a bad character,
    ///   missing rows, or a start cell off the board or on a mine.
    public static func parseAll(_ text: String) throws(BoardTextError) -> [TextBoard] {
        // "\r\n" is one Character in Swift, so both line ends are separators.
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        if lines.last == "" { lines.removeLast() }
        var boards: [TextBoard] = []
        var i = 0
        while i < lines.count {
            if lines[i].allSatisfy({ $0 == " " || $0 == "\t" }) {
                i += 1
                continue
            }
            let headerLine = i + 1
            let fields = lines[i].split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count == 4, let w = Int(fields[0]), let h = Int(fields[1]), let sx = Int(fields[2]), let sy = Int(fields[3]) else {
                throw BoardTextError(line: headerLine, fault: "expected a header `W H X Y` (four whole numbers), found `\(lines[i].prefix(40))`")
            }
            let sides = BoardGeometry.minimumSide...BoardGeometry.maximumSide
            guard sides.contains(w), sides.contains(h) else {
                throw BoardTextError(
                    line: headerLine, fault: "size \(w)×\(h) is out of range: width and height must be \(sides.lowerBound) to \(sides.upperBound)")
            }
            guard (0..<w).contains(sx), (0..<h).contains(sy) else {
                throw BoardTextError(line: headerLine, fault: "start cell \(sx),\(sy) is off the \(w)×\(h) board")
            }
            var mines: [Bool] = []
            mines.reserveCapacity(w * h)
            for r in 0..<h {
                let lineNumber = headerLine + 1 + r
                guard i + 1 + r < lines.count else {
                    throw BoardTextError(line: lineNumber, fault: "missing row \(r + 1) of \(h)")
                }
                let row = lines[i + 1 + r].utf8
                guard row.count == w else {
                    throw BoardTextError(line: lineNumber, fault: "ragged row: \(row.count) characters where the header says \(w)")
                }
                for (col, byte) in row.enumerated() {
                    switch byte {
                    case UInt8(ascii: "."): mines.append(false)
                    case UInt8(ascii: "*"): mines.append(true)
                    default:
                        let shown = String(decoding: [byte], as: UTF8.self)
                        throw BoardTextError(
                            line: lineNumber, fault: "bad character `\(shown)` in column \(col + 1): only `.` (safe) and `*` (mine) are allowed")
                    }
                }
            }
            let geometry = BoardGeometry(width: w, height: h)
            guard !mines[geometry.index(x: sx, y: sy)] else {
                throw BoardTextError(line: headerLine, fault: "start cell \(sx),\(sy) is on a mine")
            }
            boards.append(TextBoard(layout: MineLayout(geometry: geometry, isMine: mines), start: Cell(x: sx, y: sy)))
            i += 1 + h
        }
        return boards
    }
}
