import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import NIOCore
import SweeperConventions
import SweeperCrypto
import SweeperGame
import SweeperStore
import SweeperSync

/// Where the game service sends what changed, each called synchronously
/// in the call that made the change.
struct GameServiceSinks: Sendable {
    /// What changed in the games, for the viewers.
    var changes: any GameChangeSink
    /// The peers' sync sessions: every new op, local or a peer's, is pushed at once.
    var sessions: SyncSessions
    /// The links: told which games may go on none (those of circles left)
    /// and who plays each private game.
    var links: LinkRegistry
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
    var listing: GameListing?
    /// The names of the peers that hold it.
    var heldBy: [String]
    /// Whether this device forgot it.
    var forgotten: Bool
}

/// What one linked peer holds, from its last summary, and what it told of
/// the games among them that this device does not hold.
struct PeerHoldings: Sendable {
    /// The peer's name (or short id).
    var name: String
    /// Its games and version vectors.
    var holds: [GameID: VersionVector]
    /// Its descriptions of games this device does not hold.
    var described: [GameID: GameListing]
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
    /// The loop the service's jobs run on.
    let eventLoop: any EventLoop
    /// Which games this device syncs.
    var selection: SyncSelection
    /// The boards of the day made so far, by day (with the tag of the key
    /// they were made with), for the circle whose first key has the tag.
    private var dailyBoards: (tag: String, boards: [Int: (key: String, boards: [GeneratedBoard])]) = ("", [:])

    nonisolated var unownedExecutor: UnownedSerialExecutor { eventLoop.executor.asUnownedSerialExecutor() }

    /// A service over `engine` (loaded from `store`).
    init(
        store: Store, engine: GameEngine, sinks: GameServiceSinks, logger: Logger, eventLoop: any EventLoop,
        selection: SyncSelection = SyncSelection(mode: .all)
    ) {
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
    private func notePrivatePlayers(_ ops: [Op]) {
        guard ops.contains(where: { $0.payload.kind == .privateGenesis || $0.payload.kind == .privatePlayers }) else { return }
        sinks.links.setPrivatePlayers(engine.privateGamePlayers)
    }

    /// The number of games held.
    var gameCount: Int { engine.gameIDs.count }

    /// This daemon's identity.
    nonisolated let identity: PeerID

    /// The current circle.
    var circle: CircleKey { engine.circle }

    /// The current circle's replica, for sync sessions' summaries and segments.
    var replica: Replica { engine.circles[0].replica }

    // MARK: Failed commits

    /// Set when a failed commit could not be followed by a reload.
    private var reloadPending = false

    /// Reloads every game from the store after a failed commit, so memory
    /// holds exactly what is on disk. When the store cannot be read either,
    /// memory may hold an op that is not on disk: every request is then
    /// refused until a reload succeeds (see ``reloadIfPending()``).
    private func reloadAfterFailedCommit(_ error: any Error) {
        logger.error("a commit failed; reloading the games from the store", metadata: ["error": "\(error)"])
        // Remote ops not yet written are dropped with the engine; peers offer them again.
        unwritten = Unwritten()
        do {
            engine = try GameEngine.load(store, logger: logger)
            reloadPending = false
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
        logger.notice("reloaded the games from the store")
    }

    // MARK: Ops from peers

    /// Handles one sync message from a peer of the current circle in its
    /// link's session: the session inserts the ops (the replica verifies
    /// each), then viewers are told, the ops are relayed and queued for
    /// writing (see ``commitRemote(_:before:)``).
    func receive(_ message: SyncMessage, in session: SharedSyncSession) throws -> RemoteIntake {
        try reloadIfPending()
        // Only ops bring changes to show, and only to the games they belong to.
        var touched: [GameID] = []
        switch message {
        case .ops(let segments): touched = segments.compactMap { $0.ops.last?.gameID }
        // Live pushes and chains name games by the link's numbers, which the session reads.
        case .live, .chains: touched = Array(session.withSession { $0.games(in: message) })
        case .summary, .summaryPart, .interest, .heads, .unsigned, .describe, .descriptions: break
        }
        let before = engine.statuses(of: touched)
        let interest = self.interest
        let done = engine.withReplica(circle: 0) { replica in
            session.withSession { $0.receive(message, replica: &replica, taking: interest) }
        }
        commitRemote(done.outcome, before: before)
        engine.sleepIdleGames()
        return RemoteIntake(
            replies: done.replies, accepted: done.outcome.accepted, rejected: done.outcome.rejected.map(OpRefusal.init),
            violation: done.violation)
    }

    /// Keeps, across restarts, the authors shown to have signed two
    /// different ops at one place of a game (the second op is refused, so
    /// only this note remembers it), and says so once in the log: `show`
    /// names them (`equivocatedBy`).
    private func noteEquivocations(_ pairs: [(GameID, PeerID)]) {
        guard !pairs.isEmpty else { return }
        var lines = (((try? store.setting(GameEngine.equivocatorsKey)) ?? nil) ?? "").split(separator: "\n").map(String.init)
        var added = false
        for (game, author) in pairs where !lines.contains("\(game) \(author)") {
            lines.append("\(game) \(author)")
            added = true
            logger.warning(
                "a player signed two different moves at one place of a game: devices that got them in other orders differ",
                metadata: ["game": "\(game)", "author": "\(author.shortDescription)"])
        }
        guard added else { return }
        do {
            try store.setSetting(GameEngine.equivocatorsKey, lines.joined(separator: "\n"))
        } catch {
            logger.error("could not keep a note of a player's conflicting moves", metadata: ["error": "\(error)"])
        }
    }

    /// Shows, relays and queues for writing accepted remote ops (new games
    /// with their genesis) that are already in the engine. Viewers are told
    /// and peers are sent the ops first, and the write comes in a job of its
    /// own after the viewers' event jobs on the loop: a peer's op was
    /// committed by its author before the author answered the move, so our
    /// disk is not the only copy, and the disk has no place on a move's way
    /// to the other screens. When the write fails, the engine is reloaded
    /// from the store and the ops come back with the next summary exchange.
    private func commitRemote(_ outcome: InsertOutcome, before: [GameID: GameStatus]) {
        noteEquivocations(outcome.rejected.filter { $0.reason == .conflictingOp }.map { ($0.gameID, $0.author) })
        forgetDroppedFromDaily(outcome.dropped, before: before)
        // Ops held unsigned that a signature vouches for now: stored so, and relayed with the new ones.
        unwritten.signed += outcome.signed
        defer {
            sinks.sessions.push(outcome.accepted + outcome.signed, replica: replica)
            if !outcome.accepted.isEmpty || !outcome.signed.isEmpty { scheduleWrite() }
        }
        guard !outcome.accepted.isEmpty else { return }  // waiting ops are kept in memory only
        let byGame = Dictionary(grouping: outcome.accepted, by: \.gameID).sorted { $0.key < $1.key }
        var added = false
        notePrivatePlayers(outcome.accepted)
        for (gameID, ops) in byGame {
            guard let (_, replica) = engine.game(gameID), let state = replica.state else {
                // A private game this device does not play: kept and relayed, never shown.
                if engine.circles[0].replica.isKnown(gameID) {
                    unwritten.ops[gameID, default: []] += ops
                    unwritten.newGames.insert(gameID)
                }
                continue
            }
            if state.status != .playing { sinks.play.gameEnded(gameID) }
            unwritten.ops[gameID, default: []] += ops
            if before[gameID] == nil {
                unwritten.newGames.insert(gameID)
                added = true
                sinks.changes.gameChanged(.added(replica, state))
                continue
            }
            for changed in replica.changes(by: ops, state: state, before: before[gameID]) {
                sinks.changes.gameChanged(.cells(changed))
            }
            if ops.contains(where: \.changesListing) {
                sinks.play.setPlayers(state.players, of: gameID)
                sinks.changes.gameChanged(.listing(replica, state))
            }
        }
        if added { sinks.status.gamesChanged(to: engine.gameIDs.count) }
    }

    /// Queues a write of the remote ops and signatures not yet written.
    private func scheduleWrite() {
        guard !unwritten.scheduled else { return }
        unwritten.scheduled = true
        // Queued on the loop behind the jobs the events and pushes woke.
        Task { self.writeRemoteOps() }
    }

    /// Remote ops applied but not yet written.
    struct Unwritten {
        /// The ops, by game.
        var ops: [GameID: [Op]] = [:]
        /// The games they create.
        var newGames: Set<GameID> = []
        /// Ops held unsigned (stored or not yet) that got their signature.
        var signed: [Op] = []
        /// Whether a write is queued.
        var scheduled = false
    }

    var unwritten = Unwritten()

    /// Writes the remote ops applied since the last write, game by game,
    /// with each game's status, without waiting for an fsync (their
    /// authors hold them; a later synced write or checkpoint makes them
    /// durable here). A failed write reloads the engine from the store.
    /// The daemon calls it once more when it stops.
    func writeRemoteOps() {
        let games = Set(unwritten.ops.keys).union(unwritten.signed.map(\.gameID)).count
        writeUnwritten()
        // Many games' ops written at once (a catch-up, or the head
        // signatures of many games pushed live): their games went back to
        // sleep, and the ops held here until now are gone too.
        if games > GameEngine.gamesKeptAwake { GameEngine.returnFreedMemory() }
    }

    /// ``writeRemoteOps()``'s write, in a function of its own so that the
    /// ops it wrote are let go of when it returns.
    private func writeUnwritten() {
        let pending = unwritten
        unwritten = Unwritten()
        guard !pending.ops.isEmpty || !pending.signed.isEmpty else { return }
        do {
            for (gameID, ops) in pending.ops.sorted(by: { $0.key < $1.key }) {
                guard let (_, replica) = engine.game(gameID), let state = replica.state else {
                    try writeUnread(gameID, ops, isNew: pending.newGames.contains(gameID))
                    continue
                }
                let stored = ops.map { StoredOps.row($0, vouched: replica.isVouchedOnly($0)) }
                if pending.newGames.contains(gameID) {
                    let record = StoredGame(
                        id: gameID.description, params: try JSONEncoder().encode(state.genesis.parameters),
                        created: Date(timeIntervalSince1970: Double(state.startMillis) / 1000), lastActivity: Date(),
                        status: state.status.rawValue)
                    if try store.createGame(record, ops: stored, durability: .deferred) { continue }
                }
                try store.append(stored, updating: gameID.description, status: state.status.rawValue, durability: .deferred)
            }
            // After the ops they sign, which this write may have just stored.
            try store.saveSignatures(pending.signed.map { StoredOps.row($0) })
            // In the store now: their games may let go of the older ones.
            engine.withReplica(circle: 0) { replica in
                replica.noteStored(pending.ops.values.joined())
                replica.noteStored(pending.signed)
            }
            engine.sleepIdleGames()
        } catch {
            reloadAfterFailedCommit(error)
        }
    }

    /// Writes the ops of a private game this device holds without reading
    /// it: a row with nothing but its id and when it came (no parameters:
    /// this device does not know them), and the sealed ops.
    private func writeUnread(_ gameID: GameID, _ ops: [Op], isNew: Bool) throws {
        guard let game = engine.circles[0].replica.games[gameID], game.isKnown else { return }
        let stored = ops.map { StoredOps.row($0, vouched: game.isVouchedOnly($0)) }
        let empty = Data("{}".utf8)
        if isNew {
            let record = StoredGame(
                id: gameID.description, params: empty, created: Date(), lastActivity: Date(), status: Self.unreadStatus)
            if try store.createGame(record, ops: stored, durability: .deferred) { return }
        }
        try store.append(stored, updating: gameID.description, status: Self.unreadStatus, durability: .deferred)
    }

    /// The status stored for a private game this device does not read.
    static let unreadStatus = "unread"

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
    private func lookup(_ game: String?, as player: SigningIdentity? = nil) throws -> (circle: Int, replica: GameReplica, state: GameState) {
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

    /// A game; with `assist`, the game is marked assisted (a signed op)
    /// for every player, since its mines are about to be shown.
    func game(_ game: String?, assist: Bool, as player: SigningIdentity? = nil) throws -> (GameReplica, GameState) {
        var (circle, replica, state) = try lookup(game, as: player)
        if assist, let op = try madeOp({ try author(circle, player).assist(in: replica, atMillis: Date().millis) }, geometry: nil) {
            (replica, state) = try commit(op, circle: circle)
        }
        return (replica, state)
    }

    /// A cell of a game in play that no player can be wrong about from
    /// what is shown, if any.
    /// Every hint given is a signed hint op of this player (the game is
    /// assisted from then on, and who asked how often is known everywhere);
    /// a spectator, who cannot make ops, is shown the cell all the same.
    func hint(_ game: String?, as player: SigningIdentity? = nil) throws -> (GameState, Cell?) {
        let (circle, replica, state) = try lookup(game, as: player)
        let author = author(circle, player)
        // In a race, a hint is of this player's own board.
        let board = state.shown(to: author.identity.peerID)
        guard board.status == .playing else { throw GameServiceError.gameOver(board.status) }
        guard let cell = Solver.hint(for: board.board) else { return (state, nil) }
        let geometry = state.genesis.geometry
        guard state.mayMove(author.identity.peerID) else { return (state, geometry.cell(at: cell)) }
        let op = try madeOp({ try author.hint(cell, in: replica, atMillis: Date().millis) }, geometry: geometry)
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
    /// on a board of their own.
    func newGame(
        _ parameters: GameParameters, seed: UInt64, questionMarks: Bool, players: Set<PeerID>? = nil, isPrivate: Bool = false,
        seedChosen: Bool = false, daily: Int? = nil, race: Bool = false, as player: SigningIdentity? = nil
    ) throws -> (GameReplica, GameState) {
        try reloadIfPending()
        let now = Date()
        let generated: GeneratedBoard
        do {
            generated = try Generator.generate(parameters, seed: seed)
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

    /// This player's board of `day` in the circle whose keys are `keys`:
    /// the one it began (the first, if a device apart began another), else
    /// a new one, derived from the key in force that day and the day
    /// (``DailyBoard``). Returns the game and whether it was made now.
    func dailyGame(day: Int, keys: DailyKeys, as player: SigningIdentity? = nil) throws -> (GameReplica, GameState, made: Bool) {
        let me = author(0, player).identity.peerID
        if let own = try dailyGames(of: day, keys: keys).first(where: { $0.state.creator == me }),
            let (_, replica) = engine.game(own.state.gameID)
        {
            return (replica, own.state, false)
        }
        guard let board = dailyBoards(day: day, keys: keys).first, keys.key(for: day) != nil else {
            throw GameServiceError.generationFailed(
                "the board of \(DailyBoard.date(of: day)) is made with a circle key this device does not hold; link with a member to get it")
        }
        let (replica, state) = try newGame(board.parameters, seed: board.seed, questionMarks: false, daily: day, as: player)
        return (replica, state, true)
    }

    /// The boards that count as `day`'s (``DailyBoard/boards(day:keys:)``),
    /// the one made with that day's key first; made once per key.
    private func dailyBoards(day: Int, keys: DailyKeys) -> [GeneratedBoard] {
        let tag = keys.first.tag
        if dailyBoards.tag != tag { dailyBoards = (tag, [:]) }
        // A key learnt later (or a rekey that came late) makes them again.
        let key = keys.key(for: day)?.tag ?? "none \(keys.epoch(for: day))"
        if let held = dailyBoards.boards[day], held.key == key { return held.boards }
        let boards = (try? DailyBoard.boards(day: day, keys: keys)) ?? []
        dailyBoards.boards[day] = (key, boards)
        return boards
    }

    /// The boards of `day` held here, one per player (the first each began,
    /// by start time then id): the games whose creator said they are that
    /// day's board and whose layout is it.
    func dailyGames(of day: Int, keys: DailyKeys) throws -> [(replica: GameReplica, state: GameState)] {
        try reloadIfPending()
        var firsts: [PeerID: (replica: GameReplica, state: GameState)] = [:]
        let candidates = engine.games.filter { $0.circle == 0 && $0.state.dailyDay == day && !$0.state.isPrivate }
        guard !candidates.isEmpty else { return [] }
        let boards = dailyBoards(day: day, keys: keys)
        guard !boards.isEmpty else { return [] }
        for g in candidates {
            // Read without waking it: a streak looks at many days' boards.
            guard let (_, replica) = engine.awakened(g.state.gameID), let state = replica.state,
                  boards.contains(where: { DailyBoard.matches(state.genesis, $0) }) else { continue }
            let creator = state.creator
            if let held = firsts[creator], (held.state.startMillis, held.state.gameID) <= (state.startMillis, state.gameID) { continue }
            firsts[creator] = (replica, state)
        }
        return firsts.values.sorted { ($0.state.startMillis, $0.state.gameID) < ($1.state.startMillis, $1.state.gameID) }
    }

    /// The longest streak counted, in days (ten years).
    static let longestStreak = 3_660

    /// Each player's run of days with the board of the day won, up to
    /// `day`: from `day` back, or from the day before while `day`'s is not
    /// won yet (a streak lasts until a whole day passes without a win).
    func dailyStreaks(to day: Int, keys: DailyKeys) throws -> [PeerID: Int] {
        var winners: [Int: Set<PeerID>] = [:]
        func won(_ d: Int) throws -> Set<PeerID> {
            if let held = winners[d] { return held }
            let set = Set(try dailyGames(of: d, keys: keys).filter { $0.state.status == .won }.map(\.state.creator))
            winners[d] = set
            return set
        }
        // Only days with a board of the day held are looked at.
        let days = Set(engine.games.compactMap { $0.circle == 0 ? $0.state.dailyDay : nil })
        var out: [PeerID: Int] = [:]
        let today = try won(day)
        for peer in today.union(try won(day - 1)) {
            var d = today.contains(peer) ? day : day - 1
            var n = 0
            while n < Self.longestStreak, days.contains(d), try won(d).contains(peer) {
                n += 1
                d -= 1
            }
            out[peer] = n
        }
        return out
    }

    /// Lets `added` move in `game` (this device made it and chose its
    /// players): a signed op every replica applies. Returns the game after
    /// it, and how many players it gained.
    func addPlayers(_ added: Set<PeerID>, to game: String, as player: SigningIdentity? = nil) throws -> (state: GameState, added: Int) {
        let (circle, replica, state) = try lookup(game, as: player)
        var after = state
        let before = state.players?.count ?? 0
        if let op = try madeOp({ try author(circle, player).addPlayers(added, in: replica, atMillis: Date().millis) }, geometry: nil) {
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
        let op = try madeOp({ try author(circle, player).archive(archived, in: replica, atMillis: Date().millis) }, geometry: nil)
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
    private func listingChanged(_ state: GameState) {
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
        guard let op = try madeOp({ try author.resign(in: replica, atMillis: Date().millis) }, geometry: nil) else {
            throw GameServiceError.gameOver(state.shown(to: author.identity.peerID).status)
        }
        let before = state.status
        let (after, afterState) = try commit(op, circle: circle)
        if afterState.status != .playing { sinks.play.gameEnded(afterState.gameID) }
        for changed in after.changes(by: [op], state: afterState, before: before) { sinks.changes.gameChanged(.cells(changed)) }
        return (after, afterState)
    }

    /// Makes a player's move on cell (`x`, `y`) of `game`: commits its op,
    /// pushes it to the peers, reports the change, and returns it.
    func move(_ move: LocalMove, game: String?, x: Int, y: Int, as player: SigningIdentity? = nil) throws -> MoveOutcome {
        // The op is made from a copy of the game, dropped before the op goes
        // in: a copy still held would make the insertion copy the game whole.
        let (circle, op, before): (Int, Op, GameStatus)
        switch try makeOp(move, game: game, x: x, y: y, as: player) {
        case .unchanged(let state): return MoveOutcome(state: state, cells: [])
        case .made(let c, let o, let b): (circle, op, before) = (c, o, b)
        }
        let (_, after) = try commit(op, circle: circle)
        sinks.play.activity(in: after.gameID, by: op.author)
        if after.status != .playing { sinks.play.gameEnded(after.gameID) }
        guard let changed = engine.game(after.gameID)?.game.changes(by: [op], state: after, before: before, clicked: Cell(x: x, y: y)).first
        else { return MoveOutcome(state: after.shown(to: op.author), cells: []) }
        sinks.changes.gameChanged(.cells(changed))
        return MoveOutcome(state: after, cells: changed.cells)
    }

    /// What a move makes: its op, or nothing when it changes nothing.
    private enum MadeMove {
        /// The move changes nothing: the game as it is.
        case unchanged(GameState)
        /// The op, its game's circle, and the game's status before it.
        case made(circle: Int, op: Op, before: GameStatus)
    }

    /// The op for a move, from a copy of the game that is gone when this
    /// returns (unless the move changes nothing).
    private func makeOp(_ move: LocalMove, game: String?, x: Int, y: Int, as player: SigningIdentity?) throws -> MadeMove {
        let (circle, replica, state) = try lookup(game, as: player)
        let geometry = state.genesis.geometry
        let cell = Cell(x: x, y: y)
        guard geometry.contains(cell) else {
            throw GameServiceError.outsideBoard(x: x, y: y, width: geometry.width, height: geometry.height)
        }
        let index = geometry.index(of: cell)
        let author = author(circle, player)
        let now = Date().millis
        if case .mark(.question) = move, !state.genesis.questionMarks { throw GameServiceError.noQuestionMarks }
        let op = try madeOp({
            switch move {
            case .reveal: try author.reveal(index, in: replica, atMillis: now)
            case .chord: try author.chord(index, in: replica, atMillis: now)
            case .mark(let mark?): try author.setMark(mark, on: index, in: replica, atMillis: now)
            case .mark(nil): try author.cycleMark(index, in: replica, atMillis: now)
            }
        }, geometry: geometry, x: x, y: y)
        guard let op else { return .unchanged(state.shown(to: author.identity.peerID)) }
        return .made(circle: circle, op: op, before: state.status)
    }

    /// The players this device hosts changed: the private games that name
    /// them are read from now on.
    func host(_ players: [SigningIdentity]) {
        engine.host(players)
    }

    /// The author of `player`'s ops in `circle`: this daemon's own player
    /// when `player` is nil, else a player it hosts.
    private func author(_ circle: Int, _ player: SigningIdentity?) -> OpAuthor {
        guard let player, player.peerID != identity else { return engine.circles[circle].author }
        return OpAuthor(identity: player, circle: engine.circles[circle].circle)
    }

    /// Runs an op author's call, turning why it refused into the service's error.
    private func madeOp(_ make: () throws -> Op?, geometry: BoardGeometry?, x: Int = 0, y: Int = 0) throws -> Op? {
        do {
            return try make()
        } catch let error as MoveError {
            switch error {
            case .unknownGame: throw GameServiceError.unknownGame("\(error)")
            case .gameOver(let status): throw GameServiceError.gameOver(status)
            case .cellOffBoard:
                throw GameServiceError.outsideBoard(x: x, y: y, width: geometry?.width ?? 0, height: geometry?.height ?? 0)
            case .notAPlayer: throw GameServiceError.notAPlayer
            case .notTheCreator: throw GameServiceError.notTheCreator
            case .everyoneMayPlay: throw GameServiceError.everyoneMayPlay
            case .notSealable(let p): throw GameServiceError.cannotSeal(p.description)
            case .notARace: throw GameServiceError.notARacer
            case .racersAreFixed: throw GameServiceError.racersAreFixed
            case .anothersDaily(let creator): throw GameServiceError.anothersDaily(creator: creator)
            }
        }
    }

    /// Applies a local op in place, commits the op (and the game's status)
    /// to the store before anyone is answered, and pushes it to the peers; a
    /// failed commit reloads the engine from the store, so nothing
    /// uncommitted is kept.
    private func commit(_ op: Op, circle: Int) throws -> (GameReplica, GameState) {
        try engine.insert(op, circle: circle)
        do {
            guard let (_, replica) = engine.game(op.gameID), let state = replica.state else {
                throw GameServiceError.engine(.gameVanished)
            }
            try store.append([StoredOps.row(op)], updating: op.gameID.description, status: state.status.rawValue)
            sinks.sessions.push([op], replica: self.replica)
            notePrivatePlayers([op])
            engine.withReplica(circle: circle) { $0.noteStored([op]) }
            return (replica, state)
        } catch {
            reloadAfterFailedCommit(error)
            throw error
        }
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
