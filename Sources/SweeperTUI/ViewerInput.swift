import SweeperControl

/// The viewer's keys: what each does to what is shown, and the actions
/// (moves, requests) it asks the runtime for.
extension Viewer {
    /// Handles one key; returns what the runtime should do.
    public mutating func handle(_ key: Key) -> [ViewerAction] {
        lastInput = clock
        // The viewer binds no Alt keys: escape and a key typed quickly after it are both meant.
        if case let .alt(c) = key { return handle(.escape) + handle(.character(c)) }
        if let overlay { return handle(key, over: overlay) }
        message = nil
        if replay != nil { return handleReplay(key) }
        if case let .character(c) = key, let digit = c.wholeNumberValue, c.isASCII, digit > 0 || count != nil {
            count = min(999, (count ?? 0) * 10 + digit)
            return []
        }
        let n = count ?? 1
        count = nil
        switch key {
        case .left, .character("h"): move(-n, 0)
        case .right, .character("l"): move(n, 0)
        case .up, .character("k"): move(0, -n)
        case .down, .character("j"): move(0, n)
        case .character("J"): move(0, 5 * n)
        case .character("K"): move(0, -5 * n)
        case .character("L"): move(5 * n, 0)
        case .character("Y"): move(-5 * n, 0)
        case .home, .character("0"): cursor.x = 0
        case .end, .character("$"): cursor.x = max(0, (game?.width ?? 1) - 1)
        case .pageUp: move(0, -10 * n)
        case .pageDown: move(0, 10 * n)
        case .character(" "), .enter: return open(cursor)
        case .character("f"): return mark(cursor)
        case .character("?"): overlay = .help
        case .character("H"):
            guard let game else { return [] }
            guard game.status == .playing else {
                message = "The game is over: there is no hint to give."
                return []
            }
            if refusedAsSpectator() { return [] }
            // Asked first, as c is: a hint marks the game assisted for everyone. Once it is, no need.
            if game.assisted { return [.hint(game: game.game)] }
            overlay = .confirm("Ask for a hint? The game will be marked assisted for everyone (no record). (y/n)", .hint(game: game.game))
        case .character("'"):
            // Point at the cell under the cursor: it flashes on every screen that shows the game.
            guard let id = game?.game else { return [] }
            return [.point(game: id, x: cursor.x, y: cursor.y)]
        case .character("g"): return [.listGames]
        case .character("r"):
            // The game shown, move by move (q or esc comes back to it).
            guard let id = game?.game else { return [] }
            return [.replay(game: id)]
        case .character("p"):
            overlay = .peers
            return [.listPeers]
        case .character("n"):
            guard connection == .connected else {
                message = "No new game while the daemon is away: it makes and keeps the games. Waiting for it to come back…"
                return []
            }
            overlay = .newGame(NewGameForm(like: game, last: lastNewGame))
            return []
        case .character("c"):
            guard let game else { return [] }
            // A toggle: the mines shown are hidden again, and shown again
            // without asking (the game is assisted already).
            if let shown = peekLayout {
                hiddenPeekLayout = shown
                peekLayout = nil
                message = "Mines hidden; c shows them again (the game stays assisted)."
                return []
            }
            if let hidden = hiddenPeekLayout {
                peekLayout = hidden
                hiddenPeekLayout = nil
                return []
            }
            guard game.status == .playing else {
                message = "The game is over: every mine is already shown."
                return []
            }
            if refusedAsSpectator() { return [] }
            overlay = .confirm("Show the mines? The game will be marked assisted for everyone. (y/n)", .peek(game: game.game))
        case .character("G"):
            // Give up one's own board in a race (asked first).
            guard let game else { return [] }
            guard let race = game.race else {
                message = "This game is no race: G gives up only your own board in a race."
                return []
            }
            guard race.shownPeer == selfID else {
                let whose = race.racers.first { $0.peer == race.shownPeer }?.name
                message =
                    race.racers.contains { $0.peer == selfID }
                    ? "This is \(whose ?? "another racer")'s board: G gives up only your own (press G on yours)."
                    : "You do not race in this game: G gives up only your own board in a race."
                return []
            }
            guard game.status == .playing else {
                message = "Your board is over already."
                return []
            }
            overlay = .confirm("Give up your board in this race? The others race on. (y/n)", .resign(game: game.game))
        case .character("q"), .control("c"), .control("d"):
            quitting = true
            return [.quit]
        case .escape: break
        default: break
        }
        return []
    }

    private mutating func handle(_ key: Key, over overlay: Overlay) -> [ViewerAction] {
        switch overlay {
        case .newGame(var form):
            if key == .control("c") {
                quitting = true
                return [.quit]
            }
            let (done, start) = form.handle(key)
            self.overlay = done ? nil : .newGame(form)
            if let start {
                lastNewGame = start
                pendingForm = form
                return [.startGame(start)]
            }
            if key == .enter && !done { message = "Type the custom width, height and mines first." }
            return []
        case .ending where key == .character("r"):
            self.overlay = nil
            guard let id = game?.game else { return [] }
            return [.replay(game: id)]
        case .help, .peers, .ending:
            self.overlay = nil
            if key == .character("q") || key == .control("c") {
                quitting = true
                return [.quit]
            }
        case let .games(list, selected):
            switch key {
            case .up, .character("k"): self.overlay = .games(list, selected: max(0, selected - 1))
            case .down, .character("j"): self.overlay = .games(list, selected: min(max(0, list.count - 1), selected + 1))
            case .enter, .character(" "):
                self.overlay = nil
                if selected < list.count { return [.open(game: list[selected].game)] }
            case .control("c"):
                quitting = true
                return [.quit]
            default: self.overlay = nil
            }
        case let .confirm(_, action):
            self.overlay = nil
            if key == .character("y") || key == .character("Y") { return [action] }
            message = "Cancelled."
        }
        return []
    }

    /// Handles a mouse report, given where the board's cells are on screen.
    public mutating func handle(_ mouse: MouseEvent, layout: BoardLayout) -> [ViewerAction] {
        lastInput = clock
        guard mouse.pressed, !mouse.motion, overlay == nil, replay == nil else {
            if mouse.pressed, overlay != nil {
                switch overlay {
                case .help?, .ending?: overlay = nil
                default: break
                }
            }
            return []
        }
        switch mouse.button {
        case .wheelUp:
            move(0, -3)
            return []
        case .wheelDown:
            move(0, 3)
            return []
        default: break
        }
        guard let cell = layout.cell(column: mouse.column - 1, row: mouse.row - 1, origin: origin) else { return [] }
        message = nil
        cursor = cell
        switch mouse.button {
        case .left: return open(cell)
        case .right: return mark(cell)
        default: return []
        }
    }

    /// Whether this device only watches the game (its creator chose the
    /// players): said, and no move is sent.
    /// A request failed, saying `why`. A new game refused (a width too big,
    /// a name that is no player) opens its form again as it was filled in,
    /// so nothing typed is lost.
    public mutating func failed(_ why: String) {
        message = why
        if let form = pendingForm {
            pendingForm = nil
            overlay = .newGame(form)
        } else if game == nil {
            noGame = true
        }
    }

    /// The daemon refused to open `game` (another player's board of
    /// today, which would give this player's own away) for `why`: asked,
    /// as `c` is, before it opens with the look recorded.
    public mutating func askToLook(game: String, why: String) {
        overlay = .confirm(why.prefix(1).uppercased() + why.dropFirst() + ". Open it? (y/n)", .look(game: game))
    }

    private mutating func refusedAsSpectator() -> Bool {
        guard game?.watching == true else { return false }
        message = "You watch this game: the creator chose who plays it."
        return true
    }

    private mutating func open(_ p: BoardPosition) -> [ViewerAction] {
        guard let game else { return [] }
        guard game.status == .playing else {
            message = "The game is over. n starts a new one, g lists games."
            return []
        }
        if refusedAsSpectator() { return [] }
        switch look(p.x, p.y) {
        case "#", "?": return [.reveal(game: game.game, x: p.x, y: p.y)]
        case "1", "2", "3", "4", "5", "6", "7", "8": return [.chord(game: game.game, x: p.x, y: p.y)]
        case "F":
            message = "Flagged: f takes the flag off."
            return []
        default: return []
        }
    }

    private mutating func mark(_ p: BoardPosition) -> [ViewerAction] {
        guard let game, game.status == .playing, !refusedAsSpectator() else { return [] }
        switch look(p.x, p.y) {
        case "#", "F", "?": return [.flag(game: game.game, x: p.x, y: p.y)]
        default: return []
        }
    }

    private mutating func move(_ dx: Int, _ dy: Int) {
        cursor.x += dx
        cursor.y += dy
        clampCursor()
    }

    mutating func clampCursor() {
        guard let game else { return }
        cursor.x = min(max(0, cursor.x), game.width - 1)
        cursor.y = min(max(0, cursor.y), game.height - 1)
    }

    /// Scrolls so the cursor is in view of a board window `columns`×`rows` cells.
    public mutating func scroll(columns: Int, rows: Int) {
        guard let game, columns > 0, rows > 0 else { return }
        if centreNext {
            centreNext = false
            origin = BoardPosition(x: cursor.x - columns / 2, y: cursor.y - rows / 2)
        }
        if cursor.x < origin.x { origin.x = cursor.x }
        if cursor.x >= origin.x + columns { origin.x = cursor.x - columns + 1 }
        if cursor.y < origin.y { origin.y = cursor.y }
        if cursor.y >= origin.y + rows { origin.y = cursor.y - rows + 1 }
        origin.x = min(max(0, origin.x), max(0, game.width - columns))
        origin.y = min(max(0, origin.y), max(0, game.height - rows))
    }

    /// Notes that quitting was asked for from outside (a signal, the daemon gone for good).
    public mutating func quit() { quitting = true }
}
