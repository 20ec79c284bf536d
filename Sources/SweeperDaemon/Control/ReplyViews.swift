import FoundationEssentials
import SweeperControl
import SweeperConventions
import SweeperCrypto
import SweeperGame
import SweeperMembership
import SweeperSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How the daemon shows a game in answers and events: its listing, its
/// full view, its players with their names and scores, the wrong flags
/// after a loss, and the cells a change touched. Pure functions of a game's
/// replica and state, with players' names from the peer book.
struct ReplyViews: Sendable {
    /// The player answered for (this daemon's own, or one it hosts), shown by its own name.
    var ownID: PeerID
    /// That player's name.
    var ownName: String
    /// Other players' names.
    let peers: PeerBook
    /// The circle's members: two of one name are told apart.
    let members: CircleMembers
    /// The links, which know the games of circles this device left.
    let links: LinkRegistry
    /// The games' played time.
    let play: PlayClock
    /// The daemon's clock: what a race's running time and an invitation's expiry are read by.
    let clock: any DaemonClock
    /// The players' names and letters, worked out once per change.
    let names = PlayerNames()

    /// Players: every author of an op in the game, creator first.
    func players(_ replica: GameReplica, _ state: GameState) -> [PeerID] {
        players(creator: state.creator, authors: replica.authors)
    }

    /// `creator`, then every other of `authors`.
    func players(creator: PeerID, authors: [PeerID]) -> [PeerID] {
        [creator] + authors.filter { $0 != creator }
    }

    /// How `games --available` shows a game that linked peers hold: what
    /// a peer described of it, in the words of `games`.
    func available(_ game: GameElsewhere) -> AvailableGame {
        var out = AvailableGame(
            game: game.id.description, ops: Int(clamping: game.ops), playerCount: game.players.count, heldByPeers: game.heldBy.map(\.peer.description),
            heldByNames: game.heldBy.map(\.name),
            forgotten: game.forgotten)
        // Creator first, when a description names it; then by name.
        let creator = game.described?.creator
        let others = game.players.filter { $0 != creator }.map(name(of:)).sorted()
        out.playerNames = (creator.map { [name(of: $0)] } ?? []) + others
        guard let described = game.described else { return out }
        let p = described.parameters
        out.width = p.width
        out.height = p.height
        out.mines = p.mines
        out.noGuess = p.noGuess
        out.creatorName = name(of: described.creator)
        out.createdAt = Int64(clamping: described.startMillis)
        out.status = described.status.shown
        out.progress = described.creatorProgress
        out.chosenPlayerNames = chosenPlayers(described.players, creator: described.creator)
        return out
    }

    /// The game as `games` lists it and `game-added` carries it.
    func listing(_ replica: GameReplica, _ state: GameState) -> GameListing {
        listing(GameOverview(state, authors: replica.authors, reader: ownID))
    }

    /// The listing of a game from its overview: what `games` lists of a
    /// sleeping game without waking it, the same as of one awake.
    func listing(_ game: GameOverview) -> GameListing {
        let p = game.parameters
        var listing = GameListing(
            game: game.gameID.description, width: p.width, height: p.height, mines: p.mines, status: game.status.shown,
            // A race lists this device's own board's progress (or the creator's).
            progress: game.progress, elapsedMillis: Int(clamping: play.playedMillis(game.gameID, startMillis: game.startMillis, endMillis: game.endMillis)),
            playerNames: players(creator: game.creator, authors: game.authors).map(name(of:)), createdAt: Int64(clamping: game.startMillis),
            endedAt: game.endMillis.map { Int64(clamping: $0) }, assisted: game.isAssisted,
            chosenPlayerNames: chosenPlayers(game.players, creator: game.creator),
            watching: game.mayMove(ownID) ? nil : true, archived: game.isArchived ? true : nil,
            privateGame: game.isPrivate ? true : nil, onlyHere: links.withholds(game.gameID) ? true : nil, race: game.isRace ? true : nil)
        listing.noGuess = p.noGuess ? true : nil
        listing.day = game.dailyDay.map(DailyBoard.date(of:))
        listing.seeded = game.isSeeded ? true : nil
        return listing
    }

    /// The names of the devices the creator chose to move (creator first,
    /// then by name), or `nil` when every member may.
    func chosenPlayers(_ state: GameState) -> [String]? {
        chosenPlayers(state.players, creator: state.creator)
    }

    /// The names of `players` (creator first, then by name), or `nil` when every member may.
    func chosenPlayers(_ players: Set<PeerID>?, creator: PeerID) -> [String]? {
        guard let players else { return nil }
        return [name(of: creator)] + players.subtracting([creator]).map(name(of:)).sorted()
    }

    /// The whole game, as `show` and `new` answer; with `peek`, the mines too.
    /// `games`: every game held, when the caller has them, to say whether
    /// a finished game set a record.
    /// In a race the view is of one racer's board: `racer`'s, else this
    /// device's own, else (for a spectator) the creator's.
    func view(
        _ replica: GameReplica, _ whole: GameState, peek: Bool = false, games: [(GameReplica, GameState)]? = nil,
        racer: PeerID? = nil
    ) -> GameView {
        let shownRacer = whole.racerShown(to: racer ?? ownID)
        let state = whole.shown(to: racer ?? ownID)
        let scores = whole.scores
        let letters = letters()
        let players = players(replica, whole).map { p -> PlayerScore in
            var score = PlayerScore(
                peer: p.description, name: name(of: p), score: scores[p] ?? 0,
                colour: peers.profile(of: p).flatMap { $0.colour > 0 ? Int($0.colour) : nil })
            score.letter = letters[p].map(String.init)
            return score
        }.sorted { ($1.score, $0.name) < ($0.score, $1.name) }
        let p = state.genesis.parameters
        var view = GameView(
            game: state.gameID.description, width: p.width, height: p.height, mines: p.mines, status: state.status.shown,
            // After a win every mine shows flagged, and the count says so too.
            digest: whole.digestHex, revealed: state.revealedCount, flags: state.status == .won ? p.mines : state.board.flagCount, board: state.rows,
            players: players, trippedByPeer: state.trippedBy?.description,
            elapsedMillis: Int(clamping: whole.isRace ? state.elapsedMillis(nowMillis: clock.wallMillis) : play.playedMillis(state)),
            progress: state.board.progress,
            assisted: state.isAssisted, questionMarks: state.genesis.questionMarks, mineLayout: peek ? state.layoutRows : nil,
            wrongFlags: state.status == .lost ? Self.wrongFlags(state) : nil,
            createdAt: Int64(clamping: state.startMillis), endedAt: state.endMillis.map { Int64(clamping: $0) },
            chosenPlayerNames: chosenPlayers(whole), watching: whole.mayMove(ownID) ? nil : true,
            archived: whole.isArchived ? true : nil, privateGame: whole.isPrivate ? true : nil,
            equivocatedByNames: replica.equivocators.isEmpty ? nil : replica.equivocators.sorted().map(name(of:)),
            onlyHere: links.withholds(state.gameID) ? true : nil,
            start: CellPosition(x: p.start.x, y: p.start.y))
        view.overQuotaByNames = replica.overQuota.isEmpty ? nil : replica.overQuota.sorted().map(name(of:))
        view.noGuess = p.noGuess ? true : nil
        view.seeded = state.isSeeded ? true : nil
        view.hints = state.hintsBy.isEmpty ? nil : hints(state)
        view.peeks = state.peeks.isEmpty ? nil : peeks(state)
        view.ending = ending(replica, state, racer: shownRacer, games: games)
        if let shownRacer { view.race = raceTable(whole, shown: shownRacer) }
        return view
    }

    /// A race as it stands, showing `shown`'s board. A racer that is no
    /// member of the circle (removed since, or a key a creator in bad faith
    /// named) moves no more: the race is over without it. So is a racer
    /// that never moved once every racer that did has ended and one of
    /// them cleared the board: it did not start, and it could no longer
    /// win (its clock runs from the race's start, past the winner's end),
    /// so the race does not wait for it.
    func raceTable(_ race: GameState, shown: PeerID) -> Commands.RaceTable {
        let members = members.view.members
        let ended = { (r: PeerID) in race.lane(of: r).map { $0.status != .playing } ?? true || members[r] == nil }
        let unmoved = { (r: PeerID) in race.lane(of: r).map { $0.status == .playing && $0.scores[r] == nil && $0.board.flagCount == 0 } ?? false }
        let cleared = race.racers.contains { r in race.lane(of: r)?.status == .won }
        let over = race.racers.allSatisfy(ended) || (cleared && race.racers.allSatisfy { ended($0) || unmoved($0) })
        let racers = race.racers.compactMap { r in
            race.lane(of: r).map { lane in
                var s = standing(of: r, on: lane)
                s.didNotStart = over && unmoved(r) ? true : nil
                return s
            }
        }
        return Commands.RaceTable(
            shownPeer: shown.description, racers: Commands.RaceTable.ordered(racers),
            winnerName: over ? race.raceWinner.map(name(of:)) : nil, over: over ? true : nil)
    }

    /// How one racer's board stands.
    func standing(of racer: PeerID, on lane: GameState) -> Commands.RacerStanding {
        Commands.RacerStanding(
            peer: racer.description, name: name(of: racer), colour: peers.profile(of: racer).flatMap { $0.colour > 0 ? Int($0.colour) : nil },
            status: lane.status.shown, gaveUp: lane.gaveUpMillis != nil && lane.board.status == .playing ? true : nil,
            progress: lane.board.progress, flags: lane.board.flagCount,
            playedMillis: lane.endMillis.map { Int(clamping: $0 - min($0, lane.startMillis)) }, assisted: lane.isAssisted ? true : nil)
    }

    /// After a loss, the flags on cells without a mine.
    static func wrongFlags(_ state: GameState) -> [CellPosition] {
        let g = state.genesis.geometry
        return (0..<g.cellCount).filter { state.board.mark(at: $0) == .flag && !state.genesis.layout.isMine($0) }.map {
            let c = g.cell(at: $0)
            return CellPosition(x: c.x, y: c.y)
        }
    }

    /// The cells of `cells` (indices, from ``GameState/changedCells(by:before:)``)
    /// as they look in `state` now.
    static func cellChanges(_ cells: [Int], in state: GameState) -> [CellChange] {
        let g = state.genesis.geometry
        return cells.map { i in
            let c = g.cell(at: i)
            return CellChange(x: c.x, y: c.y, value: String(state.look(i)))
        }
    }

    /// A move's answer: the cells it changed, and the game after it.
    func moveResult(_ outcome: MoveOutcome) -> Commands.MoveResult {
        let state = outcome.state
        return Commands.MoveResult(
            game: state.gameID.description, changed: Self.cellChanges(outcome.cells, in: state), status: state.status.shown,
            progress: state.board.progress, trippedByPeer: state.trippedBy?.description, trippedByName: state.trippedBy.map(name(of:)))
    }
}

extension GameState {
    /// The look of one cell, as in the `board` rows of `show`.
    func look(_ i: Int) -> Character {
        let layout = genesis.layout
        let over = status != .playing
        if board.isRevealed(i) {
            if layout.isMine(i) { return i == trippedMine ? "X" : "*" }
            let n = layout.adjacentMines(i)
            return n == 0 ? "." : Character(String(n))
        }
        // After a win every mine is shown flagged; after a loss, shown.
        let shownMine: Character = status == .won ? "F" : "*"
        switch board.mark(at: i) {
        case .flag: return "F"
        case .question: return over && layout.isMine(i) ? shownMine : "?"
        case .none: return over && layout.isMine(i) ? shownMine : "#"
        }
    }

    /// The board rows.
    var rows: [String] {
        let g = genesis.geometry
        return (0..<g.height).map { y in String((0..<g.width).map { look(g.index(x: $0, y: y)) }) }
    }

    /// The mine layout rows (`.` and `*`).
    var layoutRows: [String] {
        let g = genesis.geometry
        return (0..<g.height).map { y in String((0..<g.width).map { genesis.layout.isMine(g.index(x: $0, y: y)) ? "*" : "." }) }
    }

    /// Revealed cells (mines included).
    var revealedCount: Int { (0..<genesis.geometry.cellCount).reduce(0) { $0 + (board.isRevealed($1) ? 1 : 0) } }

    /// Seconds from the start to the end, or to `now` while playing: the
    /// time of a game made before played time was kept.
    func elapsedSeconds(nowMillis: UInt64) -> Int { Int(elapsedMillis(nowMillis: nowMillis) / 1000) }

    /// ``elapsedSeconds(nowMillis:)`` to the millisecond.
    func elapsedMillis(nowMillis: UInt64) -> UInt64 {
        let end = endMillis ?? nowMillis
        return end > startMillis ? end - startMillis : 0
    }

    /// The digest as hex.
    var digestHex: String { Hex.encode(digest) }
}

extension Date {
    /// Milliseconds since 1970.
    var millis: UInt64 { UInt64(max(0, timeIntervalSince1970 * 1000)) }
    /// Milliseconds since 1970, as an answer's instant (`…At`).
    var millisAt: Int64 { Int64(max(0, timeIntervalSince1970 * 1000)) }
}

extension GameStatus {
    /// How the control protocol says it.
    var shown: PlayStatus {
        switch self {
        case .playing: .playing
        case .won: .won
        case .lost: .lost
        }
    }
}
