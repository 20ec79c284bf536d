import FoundationEssentials
import Logging
import NIOCore
import SweeperConventions
import SweeperCrypto
import SweeperGame
import SweeperStore
import SweeperSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where new ops go to the peers: their sync sessions. The games know no
/// more of the peer side than this (the peers' `SyncSessions` is one).
protocol GameOpSink: Sendable {
    /// Pushes new ops, this player's or a peer's, to every link that takes them.
    func push(_ ops: [Op], replica: Replica)
    /// Signs the heads of this player's chains that live pushes left unsigned.
    func signHeads(replica: Replica)
    /// Pushes this player's new ops, before they are kept, to the links
    /// that take them so: live, never with a signature.
    func pushBeforeKeeping(_ ops: [Op], replica: Replica)
    /// Sends this device's summary to the links that took ops before they
    /// were kept: a commit failed, and what they hold of it goes.
    func restate(replica: Replica)
}

/// Which games may go to which peers: none of a circle left, a private
/// game only to its players (the peers' `LinkRegistry` is one).
protocol GameScopeSink: Sendable {
    /// The games that go on no link: those of circles this device left.
    func withhold(_ games: Set<GameID>)
    /// Who plays each private game.
    func setPrivatePlayers(_ players: [GameID: Set<PeerID>])
}

/// Where the game service sends what changed, each called synchronously
/// in the call that made the change.
struct GameServiceSinks: Sendable {
    /// What changed in the games, for the viewers.
    var changes: any GameChangeSink
    /// The peers' sync sessions: every new op, local or a peer's, is pushed at once.
    var sessions: any GameOpSink
    /// The links: told which games may go on none (those of circles left)
    /// and who plays each private game.
    var links: any GameScopeSink
    /// systemd's status line (the game count).
    var status: DaemonStatus
    /// Played time: hears this player's moves and the games' ends.
    var play: PlayClock
}

/// What the service did with a peer's sync message.
struct RemoteIntake: Sendable {
    /// The messages to send back to that peer.
    var replies: [SyncMessage]
    /// The ops accepted.
    var accepted: [Op]
    /// The ops refused, and why.
    var rejected: [OpRefusal]
    /// What the peer did that no honest peer does, if it did: drop the link.
    var violation: String? = nil
    /// How many ops the message read back to wake games on the loop.
    var wokenOps = 0
    /// The sleeping games it needed awake past its budget: to wake off
    /// the loop, then ask the peer again.
    var deferredWakes: [GameID] = []
    /// Sleeping games the peer lacks ops of, past what the message may
    /// read back on the loop: to read off it, then send.
    var catchUps: [(job: WakeJob, catchUp: CatchUp)] = []
}

/// What a move of this daemon's player did.
struct MoveOutcome: Sendable {
    /// The game after the move (as it was, when the move changed nothing).
    var state: GameState
    /// The cells the move changed.
    var cells: [Int]
}

/// A game that linked peers hold and this device does not.
struct GameElsewhere: Sendable {
    var id: GameID
    /// The most ops any of them holds.
    var ops: UInt64
    /// The authors of the ops they hold: who played.
    var players: Set<PeerID>
    /// What a peer told of the game (peers of protocol 11 or later, open
    /// games): size, mines, creator, start, and its status as that peer says.
    var described: GameOverview?
    /// The peers that hold it, and their names, by name.
    var heldBy: [(peer: PeerID, name: String)]
    /// Whether this device forgot it.
    var forgotten: Bool
}

/// What one linked peer holds, from its last summary, and what it told of
/// the games among them that this device does not hold.
struct PeerHoldings: Sendable {
    /// The peer.
    var peer: PeerID
    /// The peer's name (or short id).
    var name: String
    /// Its games and version vectors.
    var holds: [GameID: VersionVector]
    /// Its descriptions of games this device does not hold.
    var described: [GameID: GameOverview]
}

/// A move a player of this daemon makes.
enum LocalMove: Sendable, Equatable {
    /// Open a cell.
    case reveal
    /// Open the neighbours of a satisfied number.
    case chord
    /// Set a mark (nil cycles none → flag → question → none).
    case mark(Mark?)
}

/// The daemon's games: it owns the engine (every circle's replicas), turns a
/// player's moves into signed ops and commits them before answering, takes
/// peers' ops (verified and applied by the replica, shown and relayed at
/// once, written behind), and answers what the control router asks of the
/// games. What changes goes to its sinks, synchronously: a move reaches the
/// peers and the viewers in the call that committed it.
///
/// Its executor is the daemon's event loop, shared with the peer node and
/// the control server, so a peer's op goes from its socket through the
/// service to the viewers' sockets on one thread.
actor GameService {
    let store: Store
    var engine: GameEngine
    let sinks: GameServiceSinks
    let logger: Logger
    /// The daemon's clock: the wall time ops are signed with and games are stored at.
    let clock: any DaemonClock
    /// Makes the boards of new games asked for by players, off the loop.
    nonisolated let boards: BoardMaker
    /// The loop the service's jobs run on.
    let eventLoop: any EventLoop
    /// Which games this device syncs.
    var selection: SyncSelection
    /// Remote ops applied but not yet written (``GameService/Unwritten``).
    var unwritten = Unwritten()
    /// What each author's ops filled here lately, and who is over the quota.
    var authorQuota = AuthorQuota()
    /// The boards of the day made so far, by day (with the tag of the key
    /// they were made with), for the circle whose first key has the tag.
    var dailyBoards: (tag: String, boards: [Int: (key: String, boards: [GeneratedBoard])]) = ("", [:])

    nonisolated var unownedExecutor: UnownedSerialExecutor { eventLoop.executor.asUnownedSerialExecutor() }

    /// Runs `body` on the service: at once when called on its event loop
    /// (the daemon runs the peer node on the same loop, so a peer's op goes
    /// from the socket into the game in the call that read it), else in the
    /// loop's next turn, in the order of the calls.
    nonisolated func onLoop(_ body: @escaping @Sendable (isolated GameService) -> Void) {
        if eventLoop.inEventLoop {
            assumeIsolated(body)
        } else {
            eventLoop.execute { self.assumeIsolated(body) }
        }
    }

    /// A service over `engine` (loaded from `store`).
    init(
        store: Store, engine: GameEngine, sinks: GameServiceSinks, logger: Logger, eventLoop: any EventLoop,
        selection: SyncSelection = SyncSelection(mode: .all), clock: any DaemonClock = SystemClock()
    ) {
        self.clock = clock
        boards = BoardMaker(clock: clock)
        self.store = store
        self.engine = engine
        self.identity = engine.identity.peerID
        self.selection = selection
        self.sinks = sinks
        self.logger = logger
        self.eventLoop = eventLoop
        logger.info("loaded games", metadata: ["count": "\(engine.gameIDs.count)", "peer": "\(engine.identity.peerID)"])
        sinks.status.gamesChanged(to: engine.gameIDs.count)
        for (_, game) in engine.games {
            if game.status != .playing { sinks.play.gameEnded(game.gameID) }
            if game.players != nil { sinks.play.setPlayers(game.players, of: game.gameID) }
        }
        sinks.links.withhold(engine.gamesOfCirclesLeft)
        sinks.links.setPrivatePlayers(engine.privateGamePlayers)
    }

    /// Tells the links who plays each private game, when `ops` changed that.
    func notePrivatePlayers(_ ops: [Op]) {
        guard ops.contains(where: { $0.payload.kind == .privateGenesis || $0.payload.kind == .privatePlayers }) else { return }
        sinks.links.setPrivatePlayers(engine.privateGamePlayers)
    }

    /// The number of games held.
    var gameCount: Int { engine.gameIDs.count }

    /// Now by the daemon's wall clock.
    var wallNow: Date { Date(timeIntervalSince1970: Double(clock.wallMillis) / 1000) }

    /// This daemon's identity.
    nonisolated let identity: PeerID

    /// The current circle.
    var circle: CircleKey { engine.circle }

    /// The current circle's replica, for sync sessions' summaries and segments.
    var replica: Replica { engine.circles[0].replica }

    // MARK: Failed commits

    /// Set when a failed commit could not be followed by a reload.
    var reloadPending = false

    /// Reloads every game from the store after a failed commit, so memory
    /// holds exactly what is on disk. When the store cannot be read either,
    /// memory may hold an op that is not on disk: every request is then
    /// refused until a reload succeeds (see ``reloadIfPending()``).
    func reloadAfterFailedCommit(_ error: any Error) {
        logger.error("a commit failed; reloading the games from the store", metadata: ["error": "\(error)"])
        // Remote ops not yet written are dropped with the engine; peers offer them again.
        unwritten = Unwritten()
        do {
            engine = try GameEngine.load(store, logger: logger)
            reloadPending = false
            sinks.sessions.restate(replica: replica)
        } catch {
            reloadPending = true
            logger.critical("could not reload the games; refusing requests until the store can be read", metadata: ["error": "\(error)"])
        }
    }

    /// Retries a reload that failed after a failed commit; throws (the
    /// store's error) while the store still cannot be read.
    func reloadIfPending() throws {
        guard reloadPending else { return }
        engine = try GameEngine.load(store, logger: logger)
        reloadPending = false
        sinks.sessions.restate(replica: replica)
        logger.notice("reloaded the games from the store")
    }

    // MARK: Finding games

    /// A full id, a unique prefix, or nil for the most recent game; an
    /// empty id names none (it would start every id).
    func resolve(_ game: String?) throws -> GameID {
        try reloadIfPending()
        if game?.isEmpty == true { throw GameServiceError.emptyGameID }
        guard let game else {
            guard let latest = engine.games.max(by: { ($0.state.startMillis, $0.state.gameID) < ($1.state.startMillis, $1.state.gameID) }) else {
                throw GameServiceError.noGames
            }
            return latest.state.gameID
        }
        // A full id of a game held here (what a viewer sends with each
        // cursor move) is found without looking at every game.
        if let id = GameID(hex: game.lowercased()), engine.game(id)?.game.state != nil { return id }
        return try Self.match(game, among: engine.gameIDs)
    }

    /// The game of `ids` that `game` names: by its full id, else as the one
    /// id it begins.
    static func match(_ game: String, among ids: some Sequence<GameID>) throws -> GameID {
        let wanted = game.lowercased()
        let matches = ids.filter { $0.description.hasPrefix(wanted) }.sorted()
        if let exact = matches.first(where: { $0.description == wanted }) { return exact }
        switch matches.count {
        case 1: return matches[0]
        case 0: throw GameServiceError.unknownGame(game)
        default: throw GameServiceError.ambiguousGame(game, matches: matches)
        }
    }

    /// A game `player` (nil: this daemon's own) may read: a private game
    /// only for its players, though this device opens it for any player it hosts.
    func lookup(_ game: String?, as player: SigningIdentity? = nil) throws -> (circle: Int, replica: GameReplica, state: GameState) {
        let id = try resolve(game)
        guard let (circle, replica) = engine.game(id), let state = replica.state,
            !state.isPrivate || state.players?.contains(player?.peerID ?? identity) == true
        else {
            throw GameServiceError.unknownGame(id.description)
        }
        return (circle, replica, state)
    }

    // MARK: Reading games

    /// What listings read of every game this device reads, newest first;
    /// archived games only when asked. No game is woken or read back.
    func overviews(archived: Bool = false) throws -> [GameOverview] {
        try reloadIfPending()
        return engine.games.map(\.state).filter { archived || !$0.isArchived }
            .sorted { ($0.startMillis, $0.gameID) > ($1.startMillis, $1.gameID) }
    }

    /// Every game this device reads whose overview is `wanted`, newest
    /// first; archived games only when asked. Sleeping games are read back
    /// from the store and stay asleep.
    func games(archived: Bool = false, where wanted: (GameOverview) -> Bool = { _ in true }) throws -> [(GameReplica, GameState)] {
        try overviews(archived: archived).filter(wanted)
            .compactMap { g in engine.awakened(g.gameID).flatMap { g in g.game.state.map { (g.game, $0) } } }
    }

    /// A game; with `peek`, the game is marked assisted (a signed op)
    /// for every player, since its mines are about to be shown.
    func game(_ game: String?, peek: Bool, as player: SigningIdentity? = nil) throws -> (GameReplica, GameState) {
        var (circle, replica, state) = try lookup(game, as: player)
        if peek, let op = try madeOp({ try author(circle, player).peek(in: replica, atMillis: clock.wallMillis) }, geometry: nil) {
            (replica, state) = try commit(op, circle: circle)
        }
        return (replica, state)
    }

    /// A cell of a game in play that no player can be wrong about from
    /// what is shown, if any.
    /// Every hint given is a signed hint op of this player (the game is
    /// assisted from then on, and who asked how often is known everywhere);
    /// a spectator, who cannot make ops, is refused (a hint nobody could
    /// see given would help a player unrecorded).
    func hint(_ game: String?, as player: SigningIdentity? = nil) throws -> (GameState, Cell?) {
        let (circle, replica, state) = try lookup(game, as: player)
        let author = author(circle, player)
        guard state.mayMove(author.identity.peerID) else {
            throw state.isDaily ? GameServiceError.anothersDaily(creator: state.creator) : GameServiceError.notAPlayer
        }
        // In a race, a hint is of this player's own board.
        let board = state.shown(to: author.identity.peerID)
        guard board.status == .playing else { throw GameServiceError.gameOver(board.status) }
        guard let cell = Solver.hint(for: board.board) else { return (state, nil) }
        let geometry = state.genesis.geometry
        let op = try madeOp({ try author.hint(cell, in: replica, atMillis: clock.wallMillis) }, geometry: geometry)
        guard let op else { return (state, geometry.cell(at: cell)) }
        let (_, after) = try commit(op, circle: circle)
        listingChanged(after)
        return (after, geometry.cell(at: cell))
    }

    /// The game and cell a player points at: a game this device reads (a
    /// private game only for its players) and a cell of its board. Nothing
    /// is committed: a point is ephemeral (``PresenceService/point(at:)``).
    func pointable(_ game: String?, x: Int, y: Int, as player: SigningIdentity? = nil) throws -> GameID {
        let (_, _, state) = try lookup(game, as: player)
        let geometry = state.genesis.geometry
        guard geometry.contains(Cell(x: x, y: y)) else {
            throw GameServiceError.outsideBoard(x: x, y: y, width: geometry.width, height: geometry.height)
        }
        return state.gameID
    }

    // MARK: Changing games

    /// Makes, commits and announces a new game of `parameters` from `seed`;
    /// with `players`, only they and this device may move in it.
    /// A private game (`isPrivate`, which needs `players`) is read by its
    /// players alone: the others relay it unread. With `seedChosen` (the
    /// player gave the seed) a seeded op follows the genesis: a practice
    /// game, kept out of records on every device.
    /// With `race`, this device and `players` (which it needs) race, each
    /// on a board of their own. `board` is the board made already (by
    /// ``boards``, off the loop); without it the board is made here.
    func newGame(
        _ parameters: GameParameters, seed: UInt64, questionMarks: Bool, players: Set<PeerID>? = nil, isPrivate: Bool = false,
        seedChosen: Bool = false, daily: Int? = nil, race: Bool = false, as player: SigningIdentity? = nil, board: GeneratedBoard? = nil
    ) throws -> (GameReplica, GameState) {
        try reloadIfPending()
        let now = wallNow
        let generated: GeneratedBoard
        do {
            generated = try board ?? Generator.generate(parameters, seed: seed)
        } catch {
            throw GameServiceError.generationFailed("\(error)")
        }
        let author = author(0, player)
        let genesis: Op
        if isPrivate, let players {
            genesis = try author.privateGenesis(
                parameters: generated.parameters, layout: generated.layout, seed: seed, questionMarks: questionMarks,
                createdAtMillis: now.millis, players: players)
        } else {
            genesis = try author.genesis(
                parameters: generated.parameters, layout: generated.layout, seed: seed, questionMarks: questionMarks,
                createdAtMillis: now.millis, players: players, race: race)
        }
        var next = try engine.inserting(genesis, circle: 0)
        var ops = [genesis]
        if seedChosen, let made = next.game(genesis.gameID)?.game, let seeded = try author.seeded(in: made, atMillis: now.millis) {
            next = try next.inserting(seeded, circle: 0)
            ops.append(seeded)
        }
        if let daily, let made = next.game(genesis.gameID)?.game, let op = try author.daily(daily, in: made, atMillis: now.millis) {
            next = try next.inserting(op, circle: 0)
            ops.append(op)
        }
        guard let (_, replica) = next.game(genesis.gameID), let state = replica.state else {
            throw GameServiceError.engine(.gameVanished)
        }
        let record = StoredGame(
            id: genesis.gameID.description, params: try JSONEncoder().encode(parameters), created: now, lastActivity: now,
            status: state.status.rawValue)
        guard try store.createGame(record, ops: ops.map { StoredOps.row($0) }) else { throw GameServiceError.gameExists }
        engine = next
        // In the store now: the game may sleep once nobody uses it.
        engine.withReplica(circle: 0) { $0.noteStored(ops) }
        engine.sleepIdleGames()
        notePrivatePlayers([genesis])
        if state.status != .playing { sinks.play.gameEnded(genesis.gameID) }
        sinks.play.setPlayers(state.players, of: genesis.gameID)
        sinks.sessions.push(ops, replica: self.replica)
        logger.info("new game", metadata: ["game": "\(genesis.gameID)", "size": "\(parameters.width)x\(parameters.height)/\(parameters.mines)"])
        sinks.changes.gameChanged(.added(replica, state))
        sinks.status.gamesChanged(to: engine.gameIDs.count)
        return (replica, state)
    }

    /// Lets `added` move in `game` (this device made it and chose its
    /// players): a signed op every replica applies. Returns the game after
    /// it, and how many players it gained.
    func addPlayers(_ added: Set<PeerID>, to game: String, as player: SigningIdentity? = nil) throws -> (state: GameState, added: Int) {
        let (circle, replica, state) = try lookup(game, as: player)
        var after = state
        let before = state.players?.count ?? 0
        if let op = try madeOp({ try author(circle, player).addPlayers(added, in: replica, atMillis: clock.wallMillis) }, geometry: nil) {
            (_, after) = try commit(op, circle: circle)
            listingChanged(after)
        }
        return (after, (after.players?.count ?? 0) - before)
    }

    /// Archives `game` (hidden from every device's list) or shows it again:
    /// a signed op every replica applies. Returns the game after it, and
    /// whether it changed.
    func archive(_ game: String, archived: Bool, as player: SigningIdentity? = nil) throws -> (state: GameState, changed: Bool) {
        let (circle, replica, state) = try lookup(game, as: player)
        var after = state
        let op = try madeOp({ try author(circle, player).archive(archived, in: replica, atMillis: clock.wallMillis) }, geometry: nil)
        if let op {
            (_, after) = try commit(op, circle: circle)
            listingChanged(after)
        }
        return (after, op != nil)
    }

    /// A player's share of `game`'s time came: once the game is over its
    /// time is final when every share has come, so viewers are told
    /// (`game-changed`) and fetch its ending again, the same on every device.
    func playedTimeChanged(_ game: GameID) {
        guard let state = engine.game(game)?.game.state, state.status != .playing else { return }
        listingChanged(state)
    }

    /// Reports that how a game is listed changed (its players or its archive flag).
    func listingChanged(_ state: GameState) {
        guard let replica = engine.game(state.gameID)?.game else { return }
        sinks.play.setPlayers(state.players, of: state.gameID)
        sinks.changes.gameChanged(.listing(replica, state))
    }

    /// This player gives up its board in the race `game`: a signed resign
    /// op every replica applies (its board ends, lost). Returns the game
    /// after it.
    func resign(_ game: String?, as player: SigningIdentity? = nil) throws -> (GameReplica, GameState) {
        let (circle, replica, state) = try lookup(game, as: player)
        let author = author(circle, player)
        // No op: this racer's board ended already.
        guard let op = try madeOp({ try author.resign(in: replica, atMillis: clock.wallMillis) }, geometry: nil) else {
            throw GameServiceError.gameOver(state.shown(to: author.identity.peerID).status)
        }
        let before = state.status
        let (after, afterState) = try commit(op, circle: circle)
        if afterState.status != .playing { sinks.play.gameEnded(afterState.gameID) }
        for changed in after.changes(by: [op], state: afterState, before: before) { sinks.changes.gameChanged(.cells(changed)) }
        return (after, afterState)
    }

}

/// An op a peer sent that the replica refused, and why.
struct OpRefusal: Sendable {
    var gameID: GameID
    var author: PeerID
    var seq: UInt64
    var reason: OpRejection

    init(_ r: (gameID: GameID, author: PeerID, seq: UInt64, reason: OpRejection)) {
        (gameID, author, seq, reason) = r
    }
}

extension Op {
    /// Whether the op changes how the game is listed (its players or archive flag).
    var changesListing: Bool {
        switch payload {
        case .players, .archive: true
        default: false
        }
    }
}
