import SweeperConventions

/// A terminal colour: one of the 16 ANSI colours.
public enum Color: Int, Equatable, Sendable {
    /// The eight normal colours (SGR 30–37, 40–47).
    case black = 0, red, green, yellow, blue, magenta, cyan, white
    /// The eight bright colours (SGR 90–97, 100–107).
    case brightBlack = 8, brightRed, brightGreen, brightYellow, brightBlue, brightMagenta, brightCyan, brightWhite

    var foregroundCode: Int { rawValue < 8 ? 30 + rawValue : 90 + rawValue - 8 }
    var backgroundCode: Int { rawValue < 8 ? 40 + rawValue : 100 + rawValue - 8 }
}

/// How a screen cell is drawn.
public struct Style: Equatable, Hashable, Sendable {
    /// The text colour, or the terminal's default.
    public var foreground: Color?
    /// The background colour, or the terminal's default.
    public var background: Color?
    /// Bold text.
    public var bold: Bool
    /// Dim text.
    public var dim: Bool
    /// Foreground and background swapped.
    public var reverse: Bool
    /// Underlined text.
    public var underline: Bool

    /// Creates a style.
    public init(
        foreground: Color? = nil, background: Color? = nil, bold: Bool = false, dim: Bool = false, reverse: Bool = false,
        underline: Bool = false
    ) {
        self.foreground = foreground
        self.background = background
        self.bold = bold
        self.dim = dim
        self.reverse = reverse
        self.underline = underline
    }

    /// The terminal's default look.
    public static let plain = Style()

    /// This style without colours (for `NO_COLOR`): attributes stay.
    public var withoutColor: Style {
        var s = self
        s.foreground = nil
        s.background = nil
        return s
    }

    /// The SGR sequence that sets exactly this style (starting from a reset).
    var sgr: String {
        var codes = ["0"]
        if bold { codes.append("1") }
        if dim { codes.append("2") }
        if underline { codes.append("4") }
        if reverse { codes.append("7") }
        if let foreground { codes.append(String(foreground.foregroundCode)) }
        if let background { codes.append(String(background.backgroundCode)) }
        return "\u{1B}[" + codes.joined(separator: ";") + "m"
    }
}

/// One column of the screen: a character and its style. A wide
/// character (``DisplayWidth``: emoji, CJK) takes its column and the next,
/// which holds a ``continuation`` cell.
public struct ScreenCell: Equatable, Sendable {
    /// The character shown.
    public var character: Character
    /// Its style.
    public var style: Style
    /// Whether this column is the right half of the wide character before it.
    public var isContinuation: Bool

    /// Creates a cell.
    public init(_ character: Character, _ style: Style = .plain) {
        self.character = character
        self.style = style
        isContinuation = false
    }

    /// A blank cell.
    public static let blank = ScreenCell(" ")

    /// The right half of a wide character drawn in `style`.
    static func continuation(_ style: Style) -> ScreenCell {
        var cell = ScreenCell(" ", style)
        cell.isContinuation = true
        return cell
    }
}

/// A grid of cells the size of the terminal: what should be on screen.
public struct Screen: Equatable, Sendable {
    /// Columns.
    public let width: Int
    /// Rows.
    public let height: Int
    /// Row-major cells.
    public private(set) var cells: [ScreenCell]

    /// A blank screen.
    public init(width: Int, height: Int) {
        self.width = max(0, width)
        self.height = max(0, height)
        cells = Array(repeating: .blank, count: self.width * self.height)
    }

    /// The cell at a column and row (from 0); blank outside.
    public subscript(x: Int, y: Int) -> ScreenCell {
        guard x >= 0, y >= 0, x < width, y < height else { return .blank }
        return cells[y * width + x]
    }

    /// Sets one cell; outside the screen nothing happens.
    public mutating func set(_ x: Int, _ y: Int, _ cell: ScreenCell) {
        guard x >= 0, y >= 0, x < width, y < height else { return }
        let i = y * width + x
        // Half a wide character overwritten: its other half becomes a blank.
        if cells[i].isContinuation, x > 0 {
            cells[i - 1] = ScreenCell(" ", cells[i - 1].style)
        } else if x + 1 < width, cells[i + 1].isContinuation, !cell.isContinuation {
            cells[i + 1] = ScreenCell(" ", cells[i + 1].style)
        }
        cells[i] = cell
    }

    /// Writes `text` from column `x` of row `y`, clipped at `limit` columns
    /// (or the right edge). Returns the column after the text.
    @discardableResult
    public mutating func put(_ x: Int, _ y: Int, _ text: String, _ style: Style = .plain, limit: Int? = nil) -> Int {
        var column = x
        let end = min(width, limit.map { x + $0 } ?? width)
        for c in text {
            let columns = DisplayWidth.of(c)
            guard columns > 0 else { continue }  // a control character or a lone combining mark
            guard column + columns <= end else {
                // A wide character that does not fit: the column it would start stays blank.
                if column < end { set(column, y, ScreenCell(" ", style)) }
                column = end
                break
            }
            set(column, y, ScreenCell(c, style))
            if columns == 2 { set(column + 1, y, .continuation(style)) }
            column += columns
        }
        return column
    }

    /// Fills columns `x..<x+count` of row `y` with `cell`.
    public mutating func fill(_ x: Int, _ y: Int, count: Int, _ cell: ScreenCell = .blank) {
        guard count > 0 else { return }
        for column in x..<(x + count) { set(column, y, cell) }
    }

    /// One row as plain text, as a terminal shows it (for tests and debugging).
    public func line(_ y: Int) -> String {
        String((0..<width).filter { !self[$0, y].isContinuation }.map { self[$0, y].character })
    }

    /// The whole screen as plain text, rows joined by newlines, trailing blanks kept.
    public var text: String { (0..<height).map(line).joined(separator: "\n") }
}

/// Turns screens into terminal bytes: a full paint, or only what changed
/// since the previous screen.
public struct ScreenRenderer: Sendable {
    /// Whether colours are sent (false under `NO_COLOR`).
    public var color: Bool

    /// Creates a renderer.
    public init(color: Bool) { self.color = color }

    /// The bytes that paint `screen` on a terminal in any state: reset, clear, every row.
    public func full(_ screen: Screen) -> [UInt8] {
        var out = Output()
        out.append("\u{1B}[0m\u{1B}[H\u{1B}[2J")
        out.style = .plain
        for y in 0..<screen.height {
            out.moveTo(0, y)
            for x in 0..<screen.width where !screen[x, y].isContinuation { out.write(screen[x, y], color: color) }
        }
        out.append("\u{1B}[0m")
        return out.bytes
    }

    /// The bytes that turn a terminal showing `old` into one showing `new`:
    /// only changed runs are written. A size change paints in full.
    public func diff(from old: Screen, to new: Screen) -> [UInt8] {
        guard old.width == new.width, old.height == new.height else { return full(new) }
        var out = Output()
        out.style = nil
        for y in 0..<new.height {
            var x = 0
            while x < new.width {
                guard old[x, y] != new[x, y] else {
                    x += 1
                    continue
                }
                // A run of changes, bridging gaps of unchanged cells shorter than a cursor move.
                var end = x + 1
                var scan = end
                while scan < new.width {
                    if old[scan, y] != new[scan, y] {
                        end = scan + 1
                        scan = end
                    } else if scan - end < 4 {
                        scan += 1
                    } else {
                        break
                    }
                }
                // A change in the right half of a wide character redraws it whole.
                if new[x, y].isContinuation, x > 0 { x -= 1 }
                out.moveTo(x, y)
                for column in x..<end where !new[column, y].isContinuation { out.write(new[column, y], color: color) }
                x = end
            }
        }
        if !out.bytes.isEmpty { out.append("\u{1B}[0m") }
        return out.bytes
    }

    private struct Output {
        var bytes: [UInt8] = []
        /// The style the terminal is in, or nil when unknown.
        var style: Style?

        mutating func append(_ s: String) { bytes.append(contentsOf: s.utf8) }

        mutating func moveTo(_ x: Int, _ y: Int) { append("\u{1B}[\(y + 1);\(x + 1)H") }

        mutating func write(_ cell: ScreenCell, color: Bool) {
            let wanted = color ? cell.style : cell.style.withoutColor
            if style != wanted {
                append(wanted.sgr)
                style = wanted
            }
            append(String(cell.character))
        }
    }
}
