import SweeperControl
import SweeperConventions

/// A cell position on the board.
public struct BoardPosition: Equatable, Hashable, Sendable {
    /// Column, from 0.
    public var x: Int
    /// Row, from 0.
    public var y: Int
    /// Creates a position.
    public init(x: Int, y: Int) {
        self.x = x
        self.y = y
    }
}

/// What the viewer asks its runtime to do (talk to the daemon, or stop).
public enum ViewerAction: Equatable, Sendable {
    /// Reveal a covered cell.
    case reveal(game: String, x: Int, y: Int)
    /// Reveal the neighbours of a satisfied number.
    case chord(game: String, x: Int, y: Int)
    /// Cycle the mark of a covered cell.
    case flag(game: String, x: Int, y: Int)
    /// Ask for a hint.
    case hint(game: String)
    /// Show the mines (marks the game as assisted).
    case peek(game: String)
    /// Start a new game of these parameters (the new-game form's choice).
    case startGame(Commands.New.Arguments)
    /// Open a game by id.
    case open(game: String)
    /// Fetch the game list for the list panel.
    case listGames
    /// Fetch the peers for the peers panel.
    case listPeers
    /// Fetch the game again (scores, end of game, time).
    case refresh(game: String)
    /// Fetch a game's moves and play it again.
    case replay(game: String)
    /// Point at a cell: every viewer of the game flashes it.
    case point(game: String, x: Int, y: Int)
    /// Give up this player's board in a race.
    case resign(game: String)
    /// Open another player's board of today although it marks this
    /// player's own as having looked at the mines (asked first).
    case look(game: String)
    /// Leave.
    case quit
}

/// A player pointing at a cell, as the viewer shows it: the cell flashes
/// in their colour, and the status line says who.
public struct ShownPoint: Equatable, Sendable {
    /// Who points (peer id).
    public var peer: String
    /// Their name.
    public var name: String
    /// The cell.
    public var at: BoardPosition
    /// The colour they chose (1–8), if any.
    public var colour: Int?
    /// Whether it is this player's own.
    public var own: Bool
    /// When it came (the viewer's clock, seconds).
    public var since: Double
    /// What the status line says of it.
    public var line: String
}

/// The daemon connection as the viewer shows it.
public enum ConnectionState: Equatable, Sendable {
    /// Subscribed and up to date.
    case connected
    /// Lost; retrying. The text says when.
    case retrying(String)
}

/// A panel over the board.
public enum Overlay: Equatable, Sendable {
    /// The keys.
    case help
    /// The game list, with the selected row.
    case games([GameListing], selected: Int)
    /// The peers and their sync state.
    case peers
    /// A yes/no question before an action.
    case confirm(String, ViewerAction)
    /// The new-game form.
    case newGame(NewGameForm)
    /// How the open game ended (any key closes it).
    case ending(GameEnding)
}

/// The viewer's whole state, and how keys, mouse reports and daemon news
/// change it. Pure: it never does I/O; it returns ``ViewerAction``s for the
/// runtime to carry out and is fed their results.
public struct Viewer: Sendable {
    /// The game shown, as last fetched (its `board` is kept up to date by events).
    public internal(set) var game: GameView?
    /// The board, row-major, one `board` character per cell.
    public private(set) var cells: [Character] = []
    /// The cursor.
    public var cursor = BoardPosition(x: 0, y: 0)
    /// The top-left board cell in view (the board scrolls with the cursor).
    public var origin = BoardPosition(x: 0, y: 0)
    /// Whether the next scroll puts the cursor in the middle of the view
    /// (a game just opened), rather than just in it.
    var centreNext = false
    /// A count typed before a move (`5l`).
    public internal(set) var count: Int?
    /// The panel shown over the board, if any.
    public var overlay: Overlay?
    /// A line for the player (a hint, an error), shown until the next key.
    public var message: String?
    /// Where each other player last acted, by peer id.
    public internal(set) var lastActed: [String: BoardPosition] = [:]
    /// The cells players point at now ("look here"), by peer id, this
    /// player's own included; each is shown for ``pointShownFor`` seconds.
    public internal(set) var points: [String: ShownPoint] = [:]
    /// How long a point at a cell is shown, in seconds.
    public static let pointShownFor = 4.0
    /// The game being played again, while it is (see ``ReplayMode``).
    public internal(set) var replay: ReplayMode?
    /// This daemon's own peer id (its moves carry no marker).
    public var selfID: String?
    /// This daemon's player name (its own new games are no news).
    public var selfName: String?
    /// Peers as the daemon reports them.
    public var peers: [PeerInfo] = []
    /// Where the other players look, by peer id (from `presence` events and answers).
    public internal(set) var presence: [String: PresenceInfo] = [:]
    /// The daemon's mDNS state, as `peers` last said.
    public var mdns: String?
    /// The daemon connection.
    public var connection: ConnectionState = .connected
    /// The mine layout after the peek (rows of `.` and `*`), while shown.
    public internal(set) var peekLayout: [String]?
    /// The mine layout after the peek, while hidden again with `c`.
    var hiddenPeekLayout: [String]?
    /// The status of the game as last fetched whole.
    private var loadedStatus: PlayStatus?
    /// The game's time when it was fetched, and the seconds counted since.
    private var elapsedBase = 0
    private var counted: Double = 0
    /// The clock when a key or click last came (seconds, monotonic).
    var lastInput: Double = 0
    /// Seconds without a key after which this viewer stops counting the
    /// game's time, as its daemon does.
    public static let idleLimit: Double = 300
    /// The clock now (seconds, monotonic), set by ``tick(_:)``.
    public private(set) var clock: Double = 0
    /// The number of flags on the board.
    public private(set) var flags = 0
    /// The number of revealed safe cells.
    public private(set) var revealed = 0
    /// Whether opening a game failed and none is shown.
    public var noGame = false
    /// Whether the viewer has been asked to quit.
    public internal(set) var quitting = false
    /// The new game last started from the form on this device (the form opens on it).
    public var lastNewGame: Commands.New.Arguments?
    /// The new-game form whose game is being made: shown again, as it was
    /// filled in, when the daemon refuses it (a width too big).
    var pendingForm: NewGameForm?

    /// An empty viewer (no game yet).
    public init() {}

    // MARK: Derived values

    /// Mines minus flags.
    public var minesLeft: Int { (game?.mines ?? 0) - flags }

    /// The game's played time, ticking while it counts.
    public var elapsed: Int {
        guard game != nil else { return 0 }
        return elapsedBase + Int(counted)
    }

    /// Whether the game's time counts now: the game is on, the daemon is
    /// reached, and this viewer was used in the last ``idleLimit`` seconds
    /// or another player's viewer shows the game.
    public var clockRuns: Bool {
        gameCounts && (clock - lastInput <= Self.idleLimit || !watching.isEmpty)
    }

    /// Whether the game shown is on and the daemon reached.
    private var gameCounts: Bool {
        guard let game, game.status == .playing, connection == .connected, !noGame else { return false }
        return true
    }

    /// Share of safe cells revealed.
    public var progress: Double {
        guard let game else { return 0 }
        let safe = game.width * game.height - game.mines
        return safe > 0 ? Double(revealed) / Double(safe) : 0
    }

    /// The look of a cell (`#` outside the board).
    public func look(_ x: Int, _ y: Int) -> Character {
        guard let game, x >= 0, y >= 0, x < game.width, y < game.height else { return "#" }
        return cells[y * game.width + x]
    }

    /// Whether the peeked layout has a mine at a cell.
    public func peekMine(_ x: Int, _ y: Int) -> Bool {
        guard let peekLayout, y >= 0, y < peekLayout.count else { return false }
        let row = peekLayout[y].utf8
        guard x >= 0, x < row.count else { return false }
        return row[row.index(row.startIndex, offsetBy: x)] == UInt8(ascii: "*")
    }

    /// The other players whose viewers show this game, by name.
    public var watching: [PresenceInfo] {
        guard let id = game?.game else { return [] }
        return presence.values.filter { $0.game == id && $0.peer != selfID }.sorted { ($0.name, $0.peer) < ($1.name, $1.peer) }
    }

    /// Where this viewer is, as it tells the daemon: the game shown and the
    /// cursor, or no game while none is shown or its list or form covers it.
    public var cursorReport: Commands.Cursor.Arguments {
        guard let game, !noGame, replay == nil else { return .init() }
        switch overlay {
        case .games?, .newGame?: return .init()
        default: return .init(game: game.game, x: cursor.x, y: cursor.y)
        }
    }

    /// Takes the daemon's list of who looks where (after connecting, when events may have been missed).
    public mutating func setPresence(_ list: [PresenceInfo]) {
        presence = [:]
        for p in list where p.own != true && p.game != nil { presence[p.peer] = p }
    }

    /// The name of a player by peer id (their id's start when unknown).
    public func name(of peerID: String) -> String {
        if let p = game?.players.first(where: { $0.peer == peerID }) { return p.name }
        if let p = peers.first(where: { $0.peer == peerID }) { return p.name }
        if peerID == selfID, let selfName { return selfName }
        return ControlFormatting.shortID(peerID)
    }

    // MARK: News from the daemon

    /// Shows a freshly fetched game. A different game resets the cursor to its centre.
    public mutating func load(_ view: GameView) {
        let same = game?.game == view.game
        // Another game shown: a new game asked for was made (or another opened).
        if !same { pendingForm = nil }
        // As the last view fetched said (events change the status shown before the fetch).
        let was = same ? loadedStatus : nil
        loadedStatus = view.status
        game = view
        noGame = false
        cells = []
        cells.reserveCapacity(view.width * view.height)
        for y in 0..<view.height {
            let row = y < view.board.count ? Array(view.board[y]) : []
            for x in 0..<view.width { cells.append(x < row.count ? row[x] : "#") }
        }
        recount()
        elapsedBase = view.elapsedMillis / 1000
        counted = 0
        if !same { lastInput = clock }
        if let layout = view.mineLayout {
            peekLayout = layout
            hiddenPeekLayout = nil
        }
        // The game ended while open here (or, merged, ended otherwise than
        // it showed): every viewer shows how, with the same figures.
        if let ending = view.ending, was == .playing || (was != nil && was != view.status) {
            switch overlay {
            case nil, .help?, .peers?, .ending?: overlay = .ending(ending)
            default: break
            }
            if was == .won, view.status == .lost { message = "The win did not stand: see why below the figures." }
        } else if let ending = view.ending, same, case .ending? = overlay {
            // Still shown: the figures as they are now (a late share of time).
            overlay = .ending(ending)
        } else if let ending = view.ending, !same, overlay == nil {
            // A finished game opened again: how it ended, and `r` to replay it.
            overlay = .ending(ending)
        }
        if !same {
            hiddenPeekLayout = nil
            // On the opening (where the game began), in the middle of the view.
            cursor = view.start.map { BoardPosition(x: $0.x, y: $0.y) } ?? BoardPosition(x: view.width / 2, y: view.height / 2)
            origin = BoardPosition(x: 0, y: 0)
            centreNext = true
            lastActed = [:]
            if view.mineLayout == nil { peekLayout = nil }
        }
        clampCursor()
    }

    /// Applies a move's answer; returns what to fetch because of it: the
    /// whole game only when the move ended it (for its ending).
    @discardableResult
    public mutating func apply(_ result: Commands.MoveResult) -> [ViewerAction] {
        guard let id = game?.game, result.game == id else { return [] }
        return apply(result.changed, status: result.status, trippedBy: result.trippedByPeer, by: selfID)
    }

    /// Applies an event; returns what to fetch because of it.
    public mutating func apply(_ event: ControlEvent) -> [ViewerAction] {
        switch event.event {
        case .cells:
            // A replay shows the game as it was; the game now comes when it ends.
            guard replay == nil, let id = game?.game, event.game == id, let changed = event.cells else { return [] }
            if let racer = event.racer, let race = game?.race {
                // A race: every racer's standing shows; only the board shown takes the cells.
                let ended = standing(racer, in: race)
                if racer.peer != race.shownPeer { return ended ? [.refresh(game: id)] : [] }
            }
            let fetch = apply(changed, status: event.status, trippedBy: event.trippedByPeer, by: event.byPeer)
            if let by = event.byPeer, by != selfID, let acted = actedCell(event, by: by) {
                lastActed[by] = acted
            }
            return fetch
        case .gameAdded:
            // A game another player started: said, with how to open it (not
            // while the viewer is still opening its first game, likely this one).
            if let listing = event.listing, let game, listing.game != game.game {
                let me = selfName ?? game.players.first { $0.peer == selfID }?.name
                let by = listing.playerNames.first ?? "someone"
                if by != me {
                    let size = ControlFormatting.size(width: listing.width, height: listing.height, mines: listing.mines)
                    message = "\(by) started \(size): g to open"
                }
            }
            if case .games = overlay { return [.listGames] }
            return []
        case .gameChanged:
            // Players added, or the game archived: the view says who may move.
            var actions: [ViewerAction] = []
            if replay == nil, let id = game?.game, event.game == id { actions.append(.refresh(game: id)) }
            if case .games = overlay { actions.append(.listGames) }
            return actions
        case .gameForgotten:
            if let id = game?.game, event.game == id { message = "this game was forgotten on this device: g for the list" }
            if case .games = overlay { return [.listGames] }
            return []
        case .eventsDropped:
            // Some moves were not seen: fetch the game and the peers again.
            return (game.map { [.refresh(game: $0.game)] } ?? []) + [.listPeers]
        case .point:
            guard replay == nil, let id = game?.game, event.game == id, let p = event.presence, let x = event.x, let y = event.y,
                x >= 0, y >= 0, x < game?.width ?? 0, y < game?.height ?? 0
            else { return [] }
            let own = p.own == true || p.peer == selfID
            let line = own ? "You point at \(x),\(y)." : "\(p.name): look here (\(x),\(y))"
            points[p.peer] = ShownPoint(
                peer: p.peer, name: p.name, at: BoardPosition(x: x, y: y), colour: p.colour, own: own, since: clock,
                line: line)
            message = line
            return []
        case .presence:
            guard let p = event.presence, p.own != true else { return [] }
            presence[p.peer] = p.game == nil ? nil : p
            return []
        case .peerChanged:
            guard let peer = event.peerInfo else { return [] }
            if let i = peers.firstIndex(where: { $0.peer == peer.peer }) { peers[i] = peer } else { peers.append(peer) }
            return []
        case .profileChanged:
            guard let p = event.presence else { return [] }
            rename(p.peer, to: p.name, colour: p.colour, letter: p.letter)
            // A new name may move others' letters too (they go by name): the daemon's, fetched again.
            guard replay == nil, let id = game?.game else { return [] }
            return [.refresh(game: id)]
        }
    }

    /// Takes a racer's standing from a `cells` event into the race table,
    /// in the daemon's order; returns whether the racer's board just ended
    /// (the view is fetched again then: the race may be over, with a winner).
    private mutating func standing(_ racer: Commands.RacerStanding, in race: Commands.RaceTable) -> Bool {
        var race = race
        let before = race.racers.first { $0.peer == racer.peer }
        race.racers.removeAll { $0.peer == racer.peer }
        race.racers = Commands.RaceTable.ordered(race.racers + [racer])
        game?.race = race
        return before?.status == .playing && racer.status != .playing
    }

    /// The cell a player acted on: the one the event names (the cell a
    /// flood or mark op names); else (a plain reveal, as in a private game,
    /// lists only what it opened) where their cursor is while they look at
    /// the game, or the only cell that changed; else none, rather than a guess.
    func actedCell(_ event: ControlEvent, by peer: String) -> BoardPosition? {
        if let x = event.x, let y = event.y { return BoardPosition(x: x, y: y) }
        if let p = presence[peer], p.game == game?.game, let x = p.x, let y = p.y { return BoardPosition(x: x, y: y) }
        guard let cells = event.cells, cells.count == 1, let only = cells.first else { return nil }
        return BoardPosition(x: only.x, y: only.y)
    }

    /// Applies changed cells as they came (a move's answer, or an event):
    /// the board, the counts, and the score of the player `by`, who first
    /// revealed each covered cell that now shows a number or a zero (one
    /// a cell, as the daemon scores). Applying the same change
    /// twice (the answer and the event of one move) changes nothing more.
    /// Returns the fetch it needs: the whole game only when it just ended,
    /// for its ending; else nothing, so a move costs its cells alone.
    /// Applies a replayed move's cells (no score, no fetch).
    mutating func applyReplayed(_ changed: [CellChange]) {
        _ = apply(changed, status: nil, trippedBy: nil, by: nil)
    }

    private mutating func apply(_ changed: [CellChange], status: PlayStatus?, trippedBy: String?, by: String?) -> [ViewerAction] {
        guard var view = game else { return [] }
        var scored = 0
        for c in changed where c.x >= 0 && c.y >= 0 && c.x < view.width && c.y < view.height {
            guard let look = c.value.first else { continue }
            let i = c.y * view.width + c.x
            let before = cells[i]
            if before == "#" || before == "F" || before == "?" {
                if look == "." || look.wholeNumberValue.map({ (1...8).contains($0) }) == true { scored += 1 }
            }
            count(cells[i], -1)
            cells[i] = look
            count(look, +1)
        }
        if scored > 0, let by {
            if let i = view.players.firstIndex(where: { $0.peer == by }) {
                view.players[i].score += scored
            } else {
                view.players.append(PlayerScore(peer: by, name: name(of: by), score: scored))
            }
            view.players.sort { ($1.score, $0.name) < ($0.score, $1.name) }
        }
        let ended = status.map { $0 != .playing && view.status == .playing } ?? false
        if let status, status != view.status {
            if view.status == .playing {
                elapsedBase = elapsed
                counted = 0
            }
            view.status = status
        }
        if let trippedBy { view.trippedByPeer = trippedBy }
        game = view
        return ended ? [.refresh(game: view.game)] : []
    }

    private mutating func recount() {
        flags = 0
        revealed = 0
        for c in cells { count(c, +1) }
    }

    private mutating func count(_ look: Character, _ delta: Int) {
        switch look {
        case "F": flags += delta
        case ".", "1", "2", "3", "4", "5", "6", "7", "8": revealed += delta
        default: break
        }
    }

    /// Advances the clock (seconds, monotonic). The game's time goes on
    /// only while it counts (``clockRuns``).
    public mutating func tick(_ now: Double) {
        if gameCounts {
            // Another player keeps it counting; else this viewer's keys, up to the idle limit.
            let end = watching.isEmpty ? min(now, lastInput + Self.idleLimit) : now
            counted += max(0, end - clock)
        }
        clock = now
        // Points fade: their line goes with them, unless something else was said since.
        for (peer, point) in points where now - point.since >= Self.pointShownFor {
            points[peer] = nil
            if message == point.line { message = nil }
        }
    }

    /// Shows the game list (newest first), with the newest game selected
    /// when it opens; while open, the selection stays where it was.
    public mutating func showGames(_ games: [GameListing]) {
        if case let .games(_, old) = overlay {
            overlay = .games(games, selected: min(old, max(0, games.count - 1)))
        } else {
            overlay = .games(games, selected: 0)
        }
    }

    /// Shows a hint: the cursor goes to the cell.
    public mutating func showHint(_ hint: Commands.Hint.Result) {
        if let x = hint.x, let y = hint.y {
            cursor = BoardPosition(x: x, y: y)
            clampCursor()
        }
        message = hint.message
    }
}
