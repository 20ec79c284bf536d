import SweeperControl
import SweeperConventions

/// The characters the viewer draws with: Unicode, or plain ASCII for
/// terminals and locales that cannot show it.
public struct Glyphs: Sendable, Equatable {
    /// A covered cell.
    public var covered: Character
    /// A flag.
    public var flag: Character
    /// A mine shown after the end (or by the peek).
    public var mine: Character
    /// The mine that went off.
    public var tripped: Character
    /// A flag that stood on a safe cell, after a loss.
    public var wrongFlag: Character
    /// Box drawing: horizontal and vertical lines.
    public var horizontal: Character, vertical: Character
    /// Box drawing: the four corners.
    public var topLeft: Character, topRight: Character, bottomLeft: Character, bottomRight: Character
    /// A separator in the status line.
    public var separator: String

    /// Unicode glyphs.
    public static let unicode = Glyphs(
        covered: "■", flag: "⚑", mine: "✱", tripped: "✸", wrongFlag: "✗", horizontal: "─", vertical: "│",
        topLeft: "┌", topRight: "┐", bottomLeft: "└", bottomRight: "┘", separator: " · ")
    /// ASCII glyphs.
    public static let ascii = Glyphs(
        covered: "#", flag: "F", mine: "*", tripped: "X", wrongFlag: "x", horizontal: "-", vertical: "|",
        topLeft: "+", topRight: "+", bottomLeft: "+", bottomRight: "+", separator: " | ")

    /// Whether a locale environment asks for UTF-8: the first of `LC_ALL`,
    /// `LC_CTYPE`, `LANG` that is set decides.
    public static func localeIsUTF8(_ environment: [String: String]) -> Bool {
        for key in ["LC_ALL", "LC_CTYPE", "LANG"] {
            if let value = environment[key], !value.isEmpty {
                let v = value.lowercased()
                return v.contains("utf-8") || v.contains("utf8")
            }
        }
        return false
    }
}

/// Where things are on a screen of a given size for a board of a given size.
public struct BoardLayout: Equatable, Sendable {
    /// The smallest screen the viewer draws on.
    public static let minimumWidth = 30
    /// The smallest screen the viewer draws on.
    public static let minimumHeight = 10

    /// The screen size.
    public var width: Int, height: Int
    /// Board cells that fit across and down.
    public var columns: Int, rows: Int
    /// Screen column and row of the first board cell (inside the frame).
    public var left: Int, top: Int
    /// Whether the screen is too small to draw on.
    public var tooSmall: Bool

    /// Lays out a `boardWidth`×`boardHeight` board on a `width`×`height` screen:
    /// a title row, the framed board (two columns a cell), three status rows.
    public init(width: Int, height: Int, boardWidth: Int, boardHeight: Int) {
        self.width = width
        self.height = height
        tooSmall = width < Self.minimumWidth || height < Self.minimumHeight
        columns = max(0, min(boardWidth, (width - 2) / 2))
        rows = max(0, min(boardHeight, height - 6))
        left = 1
        top = 2
    }

    /// The board cell under a screen column and row (from 0), if any.
    public func cell(column: Int, row: Int, origin: BoardPosition) -> BoardPosition? {
        guard !tooSmall, column >= left, row >= top else { return nil }
        let cx = (column - left) / 2
        let cy = row - top
        guard cx < columns, cy < rows else { return nil }
        return BoardPosition(x: origin.x + cx, y: origin.y + cy)
    }
}

/// Draws a ``Viewer`` onto a ``Screen``.
public struct ViewerRenderer: Sendable {
    /// The glyphs.
    public var glyphs: Glyphs
    /// Whether colours are used (styles keep bold and reverse either way).
    public var color: Bool

    /// Creates a renderer.
    public init(glyphs: Glyphs, color: Bool) {
        self.glyphs = glyphs
        self.color = color
    }

    /// The classic colour of each number.
    public static func numberColor(_ n: Int) -> Color {
        switch n {
        case 1: .brightBlue
        case 2: .green
        case 3: .brightRed
        case 4: .blue
        case 5: .red
        case 6: .cyan
        case 7: .brightBlack
        default: .white
        }
    }

    /// The layout for a screen size and the viewer's game.
    public func layout(_ viewer: Viewer, width: Int, height: Int) -> BoardLayout {
        BoardLayout(width: width, height: height, boardWidth: viewer.game?.width ?? 0, boardHeight: viewer.game?.height ?? 0)
    }

    /// The screen for a viewer state. The viewer is scrolled so its cursor is in view.
    public func render(_ viewer: inout Viewer, width: Int, height: Int) -> Screen {
        var screen = Screen(width: width, height: height)
        let layout = layout(viewer, width: width, height: height)
        if layout.tooSmall {
            let lines = ["Terminal too small", "(\(width)×\(height); need \(BoardLayout.minimumWidth)×\(BoardLayout.minimumHeight))"]
            for (i, line) in lines.enumerated() {
                let row = height / 2 - 1 + i
                screen.put(max(0, (width - line.count) / 2), row, text(line), Style(bold: i == 0))
            }
            return screen
        }
        viewer.scroll(columns: layout.columns, rows: layout.rows)
        title(&screen, viewer)
        if let game = viewer.game {
            board(&screen, viewer, game, layout)
        } else {
            screen.put(2, 3, text(viewer.noGame ? "No game open: n starts one, g lists games." : "Waiting for the daemon…"))
        }
        status(&screen, viewer)
        if let overlay = viewer.overlay { self.overlay(&screen, overlay, viewer) }
        return screen
    }

    private func style(_ s: Style) -> Style { color ? s : s.withoutColor }

    /// Text in the glyphs' character set: `×` and `…` spelled out in ASCII.
    func text(_ s: String) -> String {
        guard glyphs == .ascii else { return s }
        return s.replacing("×", with: "x").replacing("…", with: "...").replacing("–", with: "-")
    }

    /// `s` (in the glyphs' character set) cut to `width` columns: whole when
    /// it fits, else after its last whole word that leaves room for an
    /// ellipsis, with no separator left dangling, and the ellipsis. So a
    /// narrow terminal loses the end of a line, never half a word.
    /// A message (`words` false) keeps every character that fits: what it
    /// names, such as a path, shows as far as it can.
    func fit(_ s: String, _ width: Int, words: Bool = true) -> String {
        let s = text(s)
        guard DisplayWidth.of(s) > width else { return s }
        let ellipsis = glyphs == .ascii ? "..." : "…"
        // The kept words, a space, the ellipsis.
        let room = width - DisplayWidth.of(ellipsis) - 1
        guard room > 0 else { return String(ellipsis.prefix(max(0, width))) }
        var kept = Substring(s)
        var used = 0
        for i in s.indices {
            used += DisplayWidth.of(s[i])
            if used > room {
                kept = s[..<i]
                break
            }
        }
        // Back to the last separator (a key and its action, a player and
        // their score, stay together), else the last word's end, unless
        // that leaves too little.
        let enough = { (end: Substring.Index) in DisplayWidth.of(String(kept[..<end])) >= room / 2 }
        while kept.last == " " { kept = kept.dropLast() }
        if !words { return String(kept) + ellipsis }
        if !s[kept.endIndex...].hasPrefix(glyphs.separator) {
            if let sep = kept.ranges(of: glyphs.separator).last?.lowerBound, enough(sep) {
                kept = kept[..<sep]
            } else if s[kept.endIndex] != " ", let space = kept.lastIndex(of: " "), enough(space) {
                kept = kept[..<space]
            }
        }
        while let last = kept.last, " ,·|:".contains(last) { kept = kept.dropLast() }
        return String(kept) + (kept.isEmpty ? "" : " ") + ellipsis
    }

    private func title(_ screen: inout Screen, _ viewer: Viewer) {
        var text = " Sweeper"
        if let g = viewer.game {
            text +=
                glyphs.separator + "game " + ControlFormatting.shortID(g.game) + glyphs.separator
                + "\(g.width)×\(g.height), " + ControlFormatting.count(g.mines, "mine")
            if g.assisted { text += glyphs.separator + "assisted" }
            if g.onlyHere == true { text += glyphs.separator + "only on this device" }
            if let daily = g.daily { text += glyphs.separator + "board of the day " + daily.date }
            if let race = g.race {
                let shown = race.racers.first { $0.peer == race.shownPeer }
                text += glyphs.separator + (race.shownPeer == viewer.selfID || shown == nil ? "race" : "race: \(shown?.name ?? "")'s board")
            }
            if viewer.replay != nil { text += glyphs.separator + "replay" }
            // Where the cursor is: on a board bigger than the screen, the only way to know.
            text += glyphs.separator + "at \(viewer.cursor.x),\(viewer.cursor.y)"
        }
        screen.put(0, 0, fit(text, screen.width), Style(bold: true))
        let help = "? help "
        if screen.width - help.count > text.count + 1 { screen.put(screen.width - help.count, 0, help, Style(dim: true)) }
    }

    /// The look of one board cell: its glyph and style (before cursor and marker).
    public func cellLook(_ look: Character, peekMine: Bool, lost: Bool, wrongFlag: Bool) -> ScreenCell {
        switch look {
        case "#":
            if peekMine { return ScreenCell(glyphs.mine, style(Style(foreground: .magenta))) }
            return ScreenCell(glyphs.covered, style(Style(foreground: .brightBlack)))
        case "F":
            if wrongFlag { return ScreenCell(glyphs.wrongFlag, style(Style(foreground: .brightWhite, background: .red, bold: true))) }
            return ScreenCell(glyphs.flag, style(Style(foreground: .brightRed, bold: true)))
        case "?":
            return ScreenCell("?", style(Style(foreground: .yellow, bold: true)))
        case ".":
            return ScreenCell(" ")
        case "*":
            return ScreenCell(glyphs.mine, style(Style(bold: true)))
        case "X":
            return ScreenCell(glyphs.tripped, Style(foreground: color ? .brightWhite : nil, background: color ? .red : nil, bold: true, reverse: !color))
        default:
            if let n = look.wholeNumberValue, (1...8).contains(n) {
                return ScreenCell(look, style(Style(foreground: Self.numberColor(n), bold: n != 7 && n != 8)))
            }
            return ScreenCell(look)
        }
    }

    private func board(_ screen: inout Screen, _ viewer: Viewer, _ game: GameView, _ layout: BoardLayout) {
        let frame = style(Style(foreground: .brightBlack))
        let right = layout.left + layout.columns * 2
        let bottom = layout.top + layout.rows
        let moreLeft = viewer.origin.x > 0, moreRight = viewer.origin.x + layout.columns < game.width
        let moreUp = viewer.origin.y > 0, moreDown = viewer.origin.y + layout.rows < game.height
        screen.set(layout.left - 1, layout.top - 1, ScreenCell(glyphs.topLeft, frame))
        screen.set(right, layout.top - 1, ScreenCell(glyphs.topRight, frame))
        screen.set(layout.left - 1, bottom, ScreenCell(glyphs.bottomLeft, frame))
        screen.set(right, bottom, ScreenCell(glyphs.bottomRight, frame))
        for x in layout.left..<right {
            screen.set(x, layout.top - 1, ScreenCell(moreUp ? "^" : glyphs.horizontal, frame))
            screen.set(x, bottom, ScreenCell(moreDown ? "v" : glyphs.horizontal, frame))
        }
        for y in layout.top..<bottom {
            screen.set(layout.left - 1, y, ScreenCell(moreLeft ? "<" : glyphs.vertical, frame))
            screen.set(right, y, ScreenCell(moreRight ? ">" : glyphs.vertical, frame))
        }
        let marks = Self.playerMarks(viewer)
        var cursors: [BoardPosition: [String]] = [:]
        for p in viewer.watching {
            // In a race each racer's cursor is on a board of their own: only the shown board's racer's is drawn
            // (the others' places are in the race line).
            guard let x = p.x, let y = p.y, game.race.map({ $0.shownPeer == p.peer }) ?? true else { continue }
            cursors[BoardPosition(x: x, y: y), default: []].append(p.peer)
        }
        var points: [BoardPosition: ShownPoint] = [:]
        for point in viewer.points.values.sorted(by: { ($0.since, $0.peer) < ($1.since, $1.peer) }) { points[point.at] = point }
        var lastMoves: [BoardPosition: String] = [:]
        for (peer, p) in viewer.lastActed.sorted(by: { $0.key < $1.key }) where lastMoves[p] == nil { lastMoves[p] = peer }
        let lost = game.status == .lost
        let wrong = Set((game.wrongFlags ?? []).map { BoardPosition(x: $0.x, y: $0.y) })
        // A cell takes two columns: its glyph and a second column, where a
        // mark goes, so that no mark ever covers a cell's content.
        for cy in 0..<layout.rows {
            for cx in 0..<layout.columns {
                let p = BoardPosition(x: viewer.origin.x + cx, y: viewer.origin.y + cy)
                var cell = cellLook(
                    viewer.look(p.x, p.y), peekMine: viewer.peekMine(p.x, p.y), lost: lost, wrongFlag: wrong.contains(p))
                var second = ScreenCell(" ", cell.style)
                if let peer = lastMoves[p], let mark = marks[peer] {
                    // Another player's last move: the lower-case letter, in their colour.
                    second = ScreenCell(Character(mark.letter.lowercased()), style(Style(foreground: mark.colour.background, bold: true, underline: true)))
                }
                if let peers = cursors[p], let first = peers.first, let mark = marks[first] {
                    // Another player's cursor: the cell's background in their
                    // colour (underlined without colour), and their letter, or
                    // `+` for several players on one cell (the status line names them).
                    let look =
                        color
                        ? Style(foreground: mark.colour.foreground, background: mark.colour.background, bold: true)
                        : Style(bold: true, underline: true)
                    cell.style = Style(
                        foreground: color ? cell.style.foreground ?? look.foreground : nil, background: look.background,
                        bold: cell.style.bold, underline: !color)
                    if cell.style.foreground == cell.style.background { cell.style.foreground = look.foreground }
                    second = ScreenCell(peers.count > 1 ? "+" : mark.letter, look)
                }
                if let point = points[p], let mark = marks[point.peer] {
                    // A player points here: the cell flashes in their colour
                    // (swapped every other second) with a `!` beside it.
                    let lit = Int((viewer.clock - point.since).rounded(.down)) % 2 == 0
                    let look =
                        color
                        ? Style(foreground: mark.colour.foreground, background: mark.colour.background, bold: true, reverse: !lit)
                        : Style(bold: true, reverse: lit, underline: true)
                    cell.style = look
                    second = ScreenCell("!", look)
                }
                if p == viewer.cursor {
                    cell.style.reverse.toggle()
                    second.style.reverse.toggle()
                    if second.character == " " { second.style = cell.style }
                }
                screen.set(layout.left + cx * 2, layout.top + cy, cell)
                screen.set(layout.left + cx * 2 + 1, layout.top + cy, second)
            }
        }
    }

    private func status(_ screen: inout Screen, _ viewer: Viewer) {
        let y = screen.height - 3
        let sep = glyphs.separator
        if let timeline = viewer.replayTimeline {
            // A replay: where in the game, who did what; and its keys.
            screen.put(0, y, fit(" " + timeline, screen.width), Style(bold: true))
            if let m = viewer.replay?.current, let mark = Self.playerMarks(viewer)[m.authorPeer] {
                let look =
                    color ? Style(foreground: mark.colour.foreground, background: mark.colour.background, bold: true) : Style(bold: true, underline: true)
                screen.put(0, y + 1, " " + String(mark.letter), look)
                screen.put(2, y + 1, text(" \(m.name): \(m.changed.count) cell" + (m.changed.count == 1 ? "" : "s") + " changed"))
            }
            screen.put(
                0, y + 2,
                fit(
                    viewer.message.map { " " + $0 } ?? " space play/pause\(sep)←/→ step\(sep)+/- speed\(sep)Home/End\(sep)q back to the game", screen.width,
                    words: viewer.message == nil),
                Style(dim: viewer.message == nil))
            return
        }
        if let g = viewer.game {
            var line = " Mines left \(viewer.minesLeft)\(sep)Flags \(viewer.flags)\(sep)\(ControlFormatting.duration(viewer.elapsed))\(sep)"
            let x = screen.put(0, y, line)
            let (word, colour): (String, Color?) =
                switch g.status {
                case .won: ("won", .green)
                case .lost: ("lost", .red)
                // A spectator "watches"; who has the game open is "looking" (below): two words for two things.
                case .playing: (g.watching == true ? "you watch" : "playing", nil)
                }
            var next = screen.put(x, y, word, style(Style(foreground: colour, bold: g.status != .playing)))
            line = "\(sep)\(Int((viewer.progress * 100).rounded(.down)))%"
            if let t = g.trippedByPeer { line += "\(sep)mine tripped by \(viewer.name(of: t))" }
            next = screen.put(next, y, line)
            // Who looks where: each name after their letter in their colour
            // (the mark on the board), and the cell their cursor is on when
            // the line has room for it.
            let watching = viewer.watching
            if !watching.isEmpty {
                let marks = Self.playerMarks(viewer)
                let place = { (p: PresenceInfo) in p.x.flatMap { x in p.y.map { " \(x),\($0)" } } ?? "" }
                let full = watching.reduce(DisplayWidth.of("\(sep)looking: ")) { $0 + 4 + DisplayWidth.of($1.name + place($1)) }
                let withPlaces = next + full <= screen.width
                next = screen.put(next, y, "\(sep)looking: ")
                for (i, p) in watching.enumerated() {
                    // A name that would be cut (with its mark and a comma) is left out whole, with an ellipsis.
                    if next + (i > 0 ? 2 : 0) + 2 + DisplayWidth.of(p.name) > screen.width {
                        next = screen.put(next, y, i > 0 ? text(", …") : text("…"))
                        break
                    }
                    if i > 0 { next = screen.put(next, y, ", ") }
                    if let mark = marks[p.peer] {
                        let look =
                            color
                            ? Style(foreground: mark.colour.foreground, background: mark.colour.background, bold: true)
                            : Style(bold: true, underline: true)
                        next = screen.put(next, y, String(mark.letter), look)
                        next = screen.put(next, y, " ")
                    }
                    next = screen.put(next, y, p.name + (withPlaces ? place(p) : ""))
                }
            }
            var who = " Players: " + (g.players.isEmpty ? "none yet" : g.players.map { "\($0.name) \($0.score)" }.joined(separator: ", "))
            if let race = g.race {
                // Each racer's own board, as it stands: the race at a glance.
                who =
                    " Race: "
                    + race.racers.map { r in
                        let how: String =
                            switch r.status {
                            case .won: "won " + ControlFormatting.duration(wholeSecondsOf: r.playedMillis ?? 0)
                            case .lost: r.gaveUp == true ? "gave up" : "lost"
                            case .playing where r.didNotStart == true: "did not start"
                            case .playing: "\(Int((r.progress * 100).rounded(.down)))%" + (r.flags > 0 ? " \(glyphs.flag)\(r.flags)" : "")
                            }
                        // Where another racer's cursor is, on their own board.
                        let at =
                            r.status == .playing && r.peer != race.shownPeer
                            ? viewer.watching.first { $0.peer == r.peer }.flatMap { p in p.x.flatMap { x in p.y.map { " at \(x),\($0)" } } } ?? ""
                            : ""
                        return "\(r.name) \(how)\(at)"
                    }.joined(separator: ", ") + (race.over == true ? sep + (race.winnerName.map { "\($0) wins" } ?? "nobody cleared it") : "")
            }
            let circle = viewer.peers.filter { !$0.otherCircle }
            if case .retrying = viewer.connection {
                // What the peers were is not known while the daemon is away.
                who += sep + "Peers: unknown while the daemon is away"
            } else if !circle.isEmpty {
                who += sep + "Peers: " + circle.map { "\($0.name) \($0.stateWords)" }.joined(separator: ", ")
            }
            screen.put(0, y + 1, fit(who, screen.width))
        }
        let bottom: String
        let bottomStyle: Style
        if case let .retrying(banner) = viewer.connection {
            bottom = " " + banner
            bottomStyle = style(Style(foreground: .yellow, bold: true))
            // The banner takes the last line; a message goes above it.
            if let message = viewer.message {
                screen.fill(0, y + 1, count: screen.width)
                screen.put(0, y + 1, fit(" " + message, screen.width, words: false), Style(bold: true))
            }
        } else if let message = viewer.message {
            screen.put(0, y + 2, fit(" " + message, screen.width, words: false), Style(bold: true))
            return
        } else {
            // A finished game: what there is to do with it first.
            bottom =
                viewer.game.map { $0.status != .playing } == true
                ? " r replay\(sep)n new game\(sep)g games\(sep)? help\(sep)q quit"
                : " arrows/hjkl move\(sep)space reveal\(sep)f flag\(sep)H hint\(sep)? help\(sep)q quit"
            bottomStyle = Style(dim: true)
        }
        screen.put(0, y + 2, fit(bottom, screen.width), bottomStyle)
    }

    /// `text` in lines of at most `width` characters, broken at spaces.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && DisplayWidth.of(line) + 1 + DisplayWidth.of(word) > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    /// Every key the viewer understands, as the `?` overlay lists them.
    static let helpLines = [
        "arrows, h j k l   move (a count first: 5l)",
        "J K L, Y          move five down, up, right, left",
        "0 or Home, $ or End   start, end of the row",
        "PgUp, PgDn        move ten rows up, down",
        "space, enter      reveal; on a number: chord",
        "f                 flag (cycles marks)",
        "H                 hint: go to a provable cell (asks first:",
        "                  it marks the game assisted for everyone)",
        "'                 point here: the cell flashes on every screen",
        "g                 game list     p  peers",
        "n                 new game",
        "r                 replay the game, move by move",
        "  in a replay     space play/pause, left/right step, +/- speed, q back",
        "c                 show or hide the mines",
        "G                 give up your board (a race)",
        "A (beside a cell) another player's cursor (looking: says who)",
        "a (beside a cell) that player's last move: the cell they clicked",
        "! (beside a cell) a player points here (their name is below)",
        "mouse             left reveals, right flags",
        "q, ctrl-c         quit",
        "",
        "any key closes this",
    ]

    private func overlay(_ screen: inout Screen, _ overlay: Overlay, _ viewer: Viewer) {
        var lines: [String]
        var title: String
        var selected: Int?
        switch overlay {
        case .help:
            title = "Keys"
            lines = Self.helpLines
        case let .games(list, sel):
            title = "Games (enter opens, esc closes)"
            // In columns: id, size, how it stands, time, what sets it apart, who played.
            lines = ControlFormatting.columns(
                list.prefix(max(1, screen.height - 6)).map { g in
                    [
                        ControlFormatting.shortID(g.game),
                        ControlFormatting.size(width: g.width, height: g.height, mines: g.mines) + (g.noGuess == true ? " no-guess" : ""),
                        ControlFormatting.status(g.status, progress: g.progress), ControlFormatting.duration(wholeSecondsOf: g.elapsedMillis),
                        ControlFormatting.marks(g).joined(separator: ", "), g.playerNames.joined(separator: ", "),
                    ]
                })
            if lines.isEmpty { lines = ["no games"] }
            selected = sel
        case .peers:
            title = "Peers"
            lines = viewer.peers.map { p in "\(p.name)  \(p.lackWords.map { "\(p.stateWords) (\($0))" } ?? p.stateWords)  \(p.addresses.first ?? "")" }
            if lines.isEmpty { lines = ["no peers yet (sweeper invite / join / connect)"] }
            for note in viewer.peers.compactMap(\.versionNote) { lines += [""] + Self.wrap(note, width: max(20, screen.width - 8)) }
            if let note = ControlFormatting.mdnsNote(viewer.mdns) { lines += [""] + Self.wrap(note, width: max(20, screen.width - 8)) }
        case let .confirm(question, _):
            title = "Confirm"
            lines = Self.wrap(question, width: max(20, min(72, screen.width - 8)))
        case let .newGame(form):
            title = "New game"
            lines = form.lines
        case let .ending(ending):
            title = ending.status == .won ? "Won!" : "Lost"
            lines =
                ControlFormatting.ending(ending) + (viewer.game?.daily.map { [""] + ControlFormatting.daily($0) } ?? [])
                + (viewer.game?.race.map { [""] + ControlFormatting.race($0) } ?? [])
                + ["", "r plays the game again; any other key closes this"]
        }
        let inner = min(screen.width - 4, max(title.count + 2, lines.map { DisplayWidth.of($0) }.max() ?? 0))
        let boxWidth = inner + 4
        let boxHeight = min(screen.height, lines.count + 2)
        var x0 = max(0, (screen.width - boxWidth) / 2)
        var y0 = max(0, (screen.height - boxHeight) / 2)
        if case .help = overlay {
            // At the right, below the title: the board's top-left corner,
            // where the keys are tried first, stays in sight.
            x0 = max(0, screen.width - boxWidth)
            y0 = min(1, max(0, screen.height - boxHeight))
        }
        let frame = Style(bold: true)
        for y in y0..<(y0 + boxHeight) { screen.fill(x0, y, count: boxWidth) }
        screen.set(x0, y0, ScreenCell(glyphs.topLeft, frame))
        screen.set(x0 + boxWidth - 1, y0, ScreenCell(glyphs.topRight, frame))
        screen.set(x0, y0 + boxHeight - 1, ScreenCell(glyphs.bottomLeft, frame))
        screen.set(x0 + boxWidth - 1, y0 + boxHeight - 1, ScreenCell(glyphs.bottomRight, frame))
        for x in (x0 + 1)..<(x0 + boxWidth - 1) {
            screen.set(x, y0, ScreenCell(glyphs.horizontal, frame))
            screen.set(x, y0 + boxHeight - 1, ScreenCell(glyphs.horizontal, frame))
        }
        for y in (y0 + 1)..<(y0 + boxHeight - 1) {
            screen.set(x0, y, ScreenCell(glyphs.vertical, frame))
            screen.set(x0 + boxWidth - 1, y, ScreenCell(glyphs.vertical, frame))
        }
        screen.put(x0 + 2, y0, " \(text(title)) ", frame, limit: inner)
        for (i, line) in lines.prefix(boxHeight - 2).enumerated() {
            let s = i == selected ? Style(reverse: true) : Style.plain
            if i == selected { screen.fill(x0 + 1, y0 + 1 + i, count: boxWidth - 2, ScreenCell(" ", s)) }
            screen.put(x0 + 2, y0 + 1 + i, text(line), s, limit: inner)
        }
    }
}
