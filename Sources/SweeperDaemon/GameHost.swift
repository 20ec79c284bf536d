import Foundation
import Logging
import NIOCore
import NIOPosix
import SweeperControl
import SweeperGame
import SweeperStore
import SweeperSync
import SweeperCrypto

/// The daemon's engine and request router: holds every game's replica,
/// turns control requests into signed ops, commits them, answers, then
/// notifies subscribers. A local move is answered only after its op is committed.
///
/// The host's executor is an event loop: the daemon's loop, shared with the
/// peer node and the control server, so a peer's op goes from its socket
/// through the host to the viewers' sockets on one thread.
actor GameHost: ControlResponder {
    /// The daemon's version, reported by `status`.
    static let version = "0.1.0"

    private let store: Store
    private var engine: GameEngine
    private let settings: DaemonSettings
    private let events: EventHub
    private let logger: Logger
    private let onGamesChanged: @Sendable (Int) -> Void
    private var onNewOps: @Sendable ([Op], Replica) -> Void = { _, _ in }
    private var network: PeerNetwork?
    /// Peers' names as last heard, kept in memory: every summary names the
    /// players, and a query per player per move would sit on the move's path.
    private var peerNames: [String: String] = [:]
    /// The loop the host's jobs run on.
    let eventLoop: any EventLoop

    nonisolated var unownedExecutor: UnownedSerialExecutor { eventLoop.executor.asUnownedSerialExecutor() }

    init(
        store: Store, settings: DaemonSettings, events: EventHub, logger: Logger,
        eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next(),
        onGamesChanged: @escaping @Sendable (Int) -> Void
    ) throws {
        self.eventLoop = eventLoop
        self.store = store
        self.settings = settings
        self.events = events
        self.logger = logger
        self.onGamesChanged = onGamesChanged
        let engine = try GameEngine.load(store, logger: logger)
        logger.info("loaded games", metadata: ["count": "\(engine.games.count)", "peer": "\(engine.identity.peerID)"])
        self.engine = engine
        self.peerNames = Dictionary(((try? store.peers()) ?? []).map { ($0.peerID, $0.name) }, uniquingKeysWith: { _, b in b })
    }

    /// The number of games held.
    var gameCount: Int { engine.games.count }

    /// This daemon's identity and current circle, for the peer network.
    var credentials: (SigningIdentity, CircleKey) { (engine.identity, engine.circle) }

    /// Remembers a peer's name and the address it can be dialled at, so
    /// games show its name and the daemon dials it again after a restart.
    func rememberPeer(_ peer: PeerID, name: String, address: String?) {
        let clean = String(name.filter { !$0.isNewline }.prefix(64))
        let previous = try? store.peers().first { $0.peerID == peer.description }
        let name = clean.isEmpty ? (previous?.name ?? peer.shortDescription) : clean
        peerNames[peer.description] = name
        do {
            try store.savePeer(StoredPeer(
                peerID: peer.description, name: name, address: address ?? previous?.address, lastSeen: Date()))
        } catch {
            logger.warning("could not remember a peer", metadata: ["error": "\(error)"])
        }
    }

    /// Tells subscribers that a peer linked, introduced itself or went away.
    func peerChanged(_ peer: PeerID) async {
        guard let network else { return }
        let info = await network.peers(all: false).first { $0.id == peer.description }
            ?? PeerInfo(
                id: peer.description, name: name(of: peer), addresses: [], state: "offline", via: [], lastSeenSecondsAgo: nil,
                roundTripMs: nil, sync: nil, otherCircle: false)
        events.publish(ControlEvent(event: .peerChanged, peer: info))
    }

    /// Addresses of peers met before, to dial again at start.
    func rememberedPeerAddresses() -> [String] {
        ((try? store.peers()) ?? []).compactMap(\.address)
    }

    /// Connects the peer network, for `peers`, `connect`, `status` and `join`.
    func attach(_ network: PeerNetwork) {
        self.network = network
    }

    /// Sets the hook told, synchronously and with the replica that holds
    /// them, about every new op: a local one once it is committed, a peer's
    /// once it is verified and applied. The network pushes them to peers.
    func setNewOpsHandler(_ handler: @escaping @Sendable ([Op], Replica) -> Void) {
        onNewOps = handler
    }

    // MARK: Ops from peers

    /// The current circle's replica, for sync sessions' summaries and segments.
    var replica: Replica { engine.circles[0].replica }

    /// Handles one sync message from a peer of the current circle on its
    /// link's session: the session inserts the ops (verifying each), then
    /// subscribers are told, the ops are relayed and queued for writing
    /// (see ``commitRemote(_:before:)``). Returns the replies for that peer, the
    /// ops accepted and the ops refused (for the caller to log,
    /// rate-limited per peer).
    func receive(
        _ message: SyncMessage, on link: LinkSession
    ) throws -> (replies: [SyncMessage], accepted: [Op], rejected: [OpRefusal]) {
        try receive(message) { replica in link.withSession { $0.receive(message, replica: &replica) } }
    }

    /// As ``receive(_:on:)``, with a session the caller keeps.
    func receive(
        _ message: SyncMessage, session: inout SyncSession
    ) throws -> (replies: [SyncMessage], accepted: [Op], rejected: [OpRefusal]) {
        try receive(message) { session.receive(message, replica: &$0) }
    }

    private func receive(
        _ message: SyncMessage, applying step: (inout Replica) -> SyncSession.Step
    ) throws -> (replies: [SyncMessage], accepted: [Op], rejected: [OpRefusal]) {
        try reloadIfPending()
        // Only ops bring changes to show, and only to the games they belong to.
        var touched: [GameID] = []
        if case .ops(let segments) = message { touched = segments.compactMap { $0.ops.last?.gameID } }
        let before = engine.statuses(of: touched)
        let done = engine.withReplica(circle: 0, step)
        commitRemote(done.outcome, before: before)
        return (done.replies, done.outcome.accepted, done.outcome.rejected.map(OpRefusal.init))
    }

    /// Inserts ops pushed by a peer (each carrying its own signature), then
    /// shows, relays and queues for writing the accepted ones. Returns what the replica did.
    @discardableResult
    func receive(_ ops: [Op]) throws -> InsertOutcome {
        try reloadIfPending()
        let before = engine.statuses(of: ops.map(\.gameID))
        var outcome = InsertOutcome()
        engine.withReplica(circle: 0) { replica in
            for op in ops {
                let o = replica.insert(op)
                outcome.accepted += o.accepted
                outcome.rejected += o.rejected
                outcome.duplicates += o.duplicates
                outcome.waiting += o.waiting
            }
        }
        for r in outcome.rejected {
            logger.warning("refused an op", metadata: ["game": "\(r.gameID)", "author": "\(r.author)", "seq": "\(r.seq)", "reason": "\(r.reason)"])
        }
        commitRemote(outcome, before: before)
        return outcome
    }

    /// Reloads every game from the store after a failed commit, so memory
    /// holds exactly what is on disk. When the store cannot be read either,
    /// memory may hold an op that is not on disk: every request is then
    /// refused until a reload succeeds (see ``reloadIfPending()``).
    private func reloadAfterFailedCommit(_ error: any Error) {
        logger.error("a commit failed; reloading the games from the store", metadata: ["error": "\(error)"])
        // Remote ops not yet written are dropped with the engine; peers offer them again.
        unwritten.ops = [:]
        unwritten.newGames = []
        do {
            engine = try GameEngine.load(store, logger: logger)
            reloadPending = false
        } catch {
            reloadPending = true
            logger.critical("could not reload the games; refusing requests until the store can be read", metadata: ["error": "\(error)"])
        }
    }

    /// Set when a failed commit could not be followed by a reload.
    private var reloadPending = false

    /// Retries a reload that failed after a failed commit; throws (the
    /// store's error) while the store still cannot be read.
    private func reloadIfPending() throws {
        guard reloadPending else { return }
        engine = try GameEngine.load(store, logger: logger)
        reloadPending = false
        logger.notice("reloaded the games from the store")
    }

    /// Shows, relays and queues for writing accepted remote ops (new games
    /// with their genesis) that are already in the engine. Subscribers are
    /// told and peers are sent the ops first, and the write comes in a job
    /// of its own after the viewers' event jobs on the host's loop: a peer's
    /// op was committed by its author before the author answered the move,
    /// so our disk is not the only copy, and the disk has no place on a
    /// move's way to the other screens. When the write fails, the engine is
    /// reloaded from the store and the ops come back with the next summary
    /// exchange.
    private func commitRemote(_ outcome: InsertOutcome, before: [GameID: GameStatus]) {
        guard !outcome.accepted.isEmpty else { return }  // waiting ops are kept in memory only
        let byGame = Dictionary(grouping: outcome.accepted, by: \.gameID).sorted { $0.key < $1.key }
        var added = false
        for (gameID, ops) in byGame {
            guard let (_, replica) = engine.game(gameID), let state = replica.state else { continue }
            unwritten.ops[gameID, default: []] += ops
            if before[gameID] == nil {
                unwritten.newGames.insert(gameID)
                added = true
                events.publish(ControlEvent(event: .gameAdded, game: gameID.description, summary: summary(replica, state)))
                continue
            }
            var cells: Set<Int> = []
            for op in ops {
                switch op.payload {
                case .reveal(let runs): cells.formUnion(runs)
                case .mark(let c, _): cells.insert(c)
                default: break
                }
            }
            if before[gameID] == .playing, state.status != .playing {
                cells.formUnion(state.genesis.layout.mineIndices)
            }
            let g = state.genesis.geometry
            let looks = cells.sorted().map { i in
                let c = g.cell(at: i)
                return CellChange(x: c.x, y: c.y, value: String(state.look(i)))
            }
            events.publish(ControlEvent(
                event: .cells, game: gameID.description, cells: looks, status: state.status.rawValue,
                minesLeft: state.board.minesLeft, by: ops.last.map { text(of: $0.author) },
                progress: state.board.progress, trippedBy: state.trippedBy?.description))
        }
        if added { onGamesChanged(engine.games.count) }
        onNewOps(outcome.accepted, replica)
        if !unwritten.scheduled {
            unwritten.scheduled = true
            // Queued on the host's loop behind the jobs the events and pushes woke.
            Task { self.writeRemoteOps() }
        }
    }

    /// Remote ops applied but not yet written, by game, and the games they create.
    private var unwritten: (ops: [GameID: [Op]], newGames: Set<GameID>, scheduled: Bool) = ([:], [], false)

    /// Writes the remote ops applied since the last write, game by game,
    /// with each game's summary, without waiting for an fsync (their
    /// authors hold them; a later synced write or checkpoint makes them
    /// durable here). A failed write reloads the engine from the store.
    func writeRemoteOps() {
        let pending = unwritten
        unwritten = ([:], [], false)
        guard !pending.ops.isEmpty else { return }
        do {
            for (gameID, ops) in pending.ops.sorted(by: { $0.key < $1.key }) {
                guard let (_, replica) = engine.game(gameID), let state = replica.state else { continue }
                let summaryData = try JSONEncoder().encode(summary(replica, state))
                let stored = ops.map(GameEngine.stored)
                if pending.newGames.contains(gameID) {
                    let record = StoredGame(
                        id: gameID.description, params: try JSONEncoder().encode(state.genesis.parameters),
                        created: Date(timeIntervalSince1970: Double(state.startMillis) / 1000), lastActivity: Date(),
                        status: state.status.rawValue, summary: summaryData)
                    if try store.createGame(record, ops: stored, durability: .deferred) { continue }
                }
                try store.append(
                    stored, updating: gameID.description, status: state.status.rawValue, summary: summaryData,
                    durability: .deferred)
            }
        } catch {
            reloadAfterFailedCommit(error)
        }
    }

    // MARK: Routing

    func reply(to line: Data) async -> ControlReply {
        let decoder = ControlCoding.decoder()
        let head: RequestHead
        do {
            head = try decoder.decode(RequestHead.self, from: line)
        } catch {
            return .answer(Self.failure(nil, .malformed("not a JSON object with an id and a command")))
        }
        guard let command = head.command else {
            return .answer(Self.failure(head.id, .malformed("no \"command\"")))
        }
        do {
            try reloadIfPending()
            switch command {
            case Commands.Status.name: return try answer(head.id, await status())
            case Commands.Games.name: return try answer(head.id, Commands.Games.Result(games: summaries()))
            case Commands.New.name: return try answer(head.id, newGame(try args(line)))
            case Commands.Show.name: return try answer(head.id, show(try args(line)))
            case Commands.Reveal.name: return try answer(head.id, move(.reveal, try args(line)))
            case Commands.Flag.name: return try answer(head.id, move(.flag, try args(line)))
            case Commands.Chord.name: return try answer(head.id, move(.chord, try args(line)))
            case Commands.Hint.name: return try answer(head.id, hint(try args(line)))
            case Commands.Scores.name: return try answer(head.id, scores())
            case Commands.Invite.name:
                return try answer(head.id, Commands.Invite.Result(code: InviteCode.encode(engine.circle), circleTag: engine.circle.tag))
            case Commands.Join.name:
                let result = try join(try args(line))
                await network?.circleChanged(to: engine.circle, identity: engine.identity.peerID)
                return try answer(head.id, result)
            case Commands.Peers.name:
                let a: Commands.Peers.Arguments = try args(line)
                return try answer(head.id, Commands.Peers.Result(peers: await network?.peers(all: a.all ?? false) ?? []))
            case Commands.Connect.name:
                let a: Commands.Connect.Arguments = try args(line)
                guard let network else {
                    throw ControlError(code: "no-network", message: "this daemon has no peer network")
                }
                try await network.connect(a.address)
                return try answer(head.id, Empty())
            case Commands.Subscribe.name:
                let a: Commands.Subscribe.Arguments = try args(line)
                let game = try a.game.map { try resolve($0).description }
                let subscription = events.subscribeConnection(game: game)
                return .subscribe(answer: try Self.success(head.id, Commands.Subscribe.Result(game: game)), events: subscription)
            default:
                throw ControlError.unknownCommand(command)
            }
        } catch let error as ControlError {
            return .answer(Self.failure(head.id, error))
        } catch let error as GameActionError {
            return .answer(Self.failure(head.id, error.error))
        } catch let error as StoreError {
            logger.error("store failure", metadata: ["error": "\(error)"])
            return .answer(Self.failure(head.id, .store(error)))
        } catch {
            logger.error("request failed", metadata: ["command": "\(command)", "error": "\(error)"])
            return .answer(Self.failure(head.id, .internal("\(error)")))
        }
    }

    private func args<A: Decodable>(_ line: Data) throws -> A {
        do {
            return try ControlCoding.decoder().decode(A.self, from: line)
        } catch let DecodingError.keyNotFound(key, _) {
            throw ControlError.badArguments("missing \"\(key.stringValue)\"")
        } catch let DecodingError.typeMismatch(_, context) {
            throw ControlError.badArguments("wrong type for \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\"")
        } catch let DecodingError.dataCorrupted(context) where !context.codingPath.isEmpty {
            throw ControlError.badArguments("bad value for \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\"")
        } catch let DecodingError.valueNotFound(_, context) {
            throw ControlError.badArguments("null \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\"")
        } catch {
            throw ControlError.badArguments("\(error)")
        }
    }

    private func answer(_ id: RequestID?, _ result: some Encodable & Sendable) throws -> ControlReply {
        .answer(try Self.success(id, result))
    }

    private static func success(_ id: RequestID?, _ result: some Encodable & Sendable) throws -> Data {
        try ControlCoding.line(Answer.success(id, result))
    }

    private static func failure(_ id: RequestID?, _ error: ControlError) -> Data {
        (try? ControlCoding.line(Answer<Empty>.failure(id, error))) ?? Data("{\"ok\":false}\n".utf8)
    }

    // MARK: Games

    /// A full id, a unique prefix, or nil for the most recent game.
    private func resolve(_ game: String?) throws -> GameID {
        let all = engine.games
        guard let game, !game.isEmpty else {
            guard let latest = all.max(by: { ($0.state.startMillis, $0.state.gameID) < ($1.state.startMillis, $1.state.gameID) }) else {
                throw ControlError(code: "no-games", message: "there are no games yet; start one with `sweeper new`")
            }
            return latest.state.gameID
        }
        let wanted = game.lowercased()
        let matches = all.map(\.state.gameID).filter { $0.description.hasPrefix(wanted) }.sorted()
        if let exact = matches.first(where: { $0.description == wanted }) { return exact }
        switch matches.count {
        case 1: return matches[0]
        case 0: throw ControlError(code: "unknown-game", message: "no game has an id starting with '\(game)'")
        default:
            throw ControlError(
                code: "ambiguous-game",
                message: "'\(game)' starts \(matches.count) game ids (\(matches.prefix(4).map { String($0.description.prefix(12)) }.joined(separator: ", "))…); type more of it")
        }
    }

    private func lookup(_ game: String?) throws -> (circle: Int, replica: SweeperSync.GameReplica, state: GameState) {
        let id = try resolve(game)
        guard let (circle, replica) = engine.game(id), let state = replica.state else {
            throw ControlError(code: "unknown-game", message: "no game \(id)")
        }
        return (circle, replica, state)
    }

    /// Peer ids as text, by id: every move's event names its author, and
    /// the id's base32 form costs more than the rest of the event. Holds the
    /// authors of accepted ops only (members of a circle), so it stays small.
    private var peerIDTexts: [PeerID: String] = [:]

    private func text(of peer: PeerID) -> String {
        if let known = peerIDTexts[peer] { return known }
        let text = peer.description
        peerIDTexts[peer] = text
        return text
    }

    private func name(of author: PeerID) -> String {
        if author == engine.identity.peerID { return settings.name }
        if let name = peerNames[author.description] { return name }
        return author.shortDescription
    }

    /// Players: every author of an op in the game, creator first.
    private func players(_ replica: SweeperSync.GameReplica, _ state: GameState) -> [PeerID] {
        [state.creator] + replica.chains.keys.filter { $0 != state.creator }.sorted()
    }

    private func summary(_ replica: SweeperSync.GameReplica, _ state: GameState, now: Date = Date()) -> GameSummary {
        let p = state.genesis.parameters
        return GameSummary(
            id: state.gameID.description, width: p.width, height: p.height, mines: p.mines, status: state.status.rawValue,
            progress: state.board.progress, elapsedSeconds: state.elapsedSeconds(nowMillis: now.millis),
            players: players(replica, state).map(name(of:)), created: Double(state.startMillis) / 1000,
            assisted: state.isAssisted)
    }

    private func summaries() -> [GameSummary] {
        engine.games.sorted { ($0.state.startMillis, $0.state.gameID) > ($1.state.startMillis, $1.state.gameID) }.compactMap { g in
            engine.game(g.state.gameID).map { summary($0.game, g.state) }
        }
    }

    private func view(_ replica: SweeperSync.GameReplica, _ state: GameState, cheat: Bool = false) -> GameView {
        let scores = state.scores
        let players = players(replica, state).map { PlayerScore(id: $0.description, name: name(of: $0), score: scores[$0] ?? 0) }
            .sorted { ($1.score, $0.name) < ($0.score, $1.name) }
        let p = state.genesis.parameters
        return GameView(
            id: state.gameID.description, width: p.width, height: p.height, mines: p.mines, status: state.status.rawValue,
            digest: state.digestHex, revealed: state.revealedCount, flags: state.board.flagCount, board: state.rows,
            players: players, trippedBy: state.trippedBy?.description,
            elapsedSeconds: state.elapsedSeconds(nowMillis: Date().millis), progress: state.board.progress,
            assisted: state.isAssisted, questionMarks: state.genesis.questionMarks, mineLayout: cheat ? state.layoutRows : nil,
            wrongFlags: state.status == .lost ? wrongFlags(state) : nil)
    }

    /// After a loss, the flags on cells without a mine.
    private func wrongFlags(_ state: GameState) -> [CellPosition] {
        let g = state.genesis.geometry
        return (0..<g.cellCount).filter { state.board.mark(at: $0) == .flag && !state.genesis.layout.isMine($0) }.map {
            let c = g.cell(at: $0)
            return CellPosition(x: c.x, y: c.y)
        }
    }

    private func status() async throws -> Commands.Status.Result {
        Commands.Status.Result(
            peerID: engine.identity.peerID.description, name: settings.name, circleTag: engine.circle.tag,
            listening: network?.listening ?? [],
            mdns: network?.mdnsStatus ?? "disabled",
            peers: await network?.connectedCount() ?? 0, games: engine.games.count, version: Self.version, pid: getpid())
    }

    private func newGame(_ a: Commands.New.Arguments) throws -> GameView {
        let start: Cell?
        switch (a.startX, a.startY) {
        case let (x?, y?): start = Cell(x: x, y: y)
        case (nil, nil): start = nil
        default: throw ControlError.badArguments("give both startX and startY, or neither")
        }
        let parameters: GameParameters
        do {
            if let presetName = a.preset {
                guard a.width == nil, a.height == nil, a.mines == nil else {
                    throw ControlError.badArguments("give a preset or width, height and mines, not both")
                }
                guard let preset = Preset(rawValue: presetName.lowercased()) else {
                    throw ControlError(
                        code: "bad-parameters",
                        message: "unknown preset '\(presetName)' (one of: \(Preset.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                parameters = try GameParameters(preset: preset, start: start, noGuess: a.noGuess ?? false)
            } else if a.width == nil && a.height == nil && a.mines == nil {
                parameters = try GameParameters(preset: .beginner, start: start, noGuess: a.noGuess ?? false)
            } else {
                guard let w = a.width, let h = a.height, let m = a.mines else {
                    throw ControlError.badArguments("give width, height and mines together")
                }
                parameters = try GameParameters(width: w, height: h, mines: m, start: start, noGuess: a.noGuess ?? false)
            }
        } catch let error as ParameterError {
            throw ControlError(code: "bad-parameters", message: "\(error)")
        }
        let seed = a.seed ?? UInt64.random(in: 0...UInt64.max)
        let now = Date()
        let generated: GeneratedBoard
        do {
            generated = try Generator.generate(parameters, seed: seed)
        } catch {
            throw ControlError(code: "generation-failed", message: "\(error)")
        }
        let genesis: Op
        do {
            genesis = try engine.circles[0].author.genesis(
                parameters: generated.parameters, layout: generated.layout, seed: seed,
                questionMarks: a.questionMarks ?? false, createdAtMillis: now.millis)
        } catch {
            throw ControlError.internal("\(error)")
        }
        let next = try engine.inserting(genesis, circle: 0)
        guard let (_, replica) = next.game(genesis.gameID), let state = replica.state else {
            throw ControlError.internal("the new game did not take")
        }
        let s = summary(replica, state, now: now)
        let record = StoredGame(
            id: genesis.gameID.description, params: try JSONEncoder().encode(parameters), created: now, lastActivity: now,
            status: state.status.rawValue, summary: try JSONEncoder().encode(s))
        guard try store.createGame(record, ops: [GameEngine.stored(genesis)]) else {
            throw ControlError(code: "game-exists", message: "a game with this id exists already (same board, same second)")
        }
        engine = next
        onNewOps([genesis], self.replica)
        logger.info("new game", metadata: ["game": "\(genesis.gameID)", "size": "\(parameters.width)x\(parameters.height)/\(parameters.mines)"])
        events.publish(ControlEvent(event: .gameAdded, game: genesis.gameID.description, summary: s))
        onGamesChanged(engine.games.count)
        return view(replica, state)
    }

    private func show(_ a: Commands.GameArguments) throws -> GameView {
        var (circle, replica, state) = try lookup(a.game)
        if a.cheat == true {
            let op: Op?
            do {
                op = try engine.circles[circle].author.assist(in: replica, atMillis: Date().millis)
            } catch {
                throw GameActionError(error, x: 0, y: 0, geometry: nil)
            }
            if let op {
                let (r, s) = try commit(op, circle: circle)
                replica = r
                state = s
            }
        }
        return view(replica, state, cheat: a.cheat == true)
    }

    private enum Move { case reveal, flag, chord }

    private func move(_ kind: Move, _ a: Commands.MoveArguments) throws -> Commands.MoveResult {
        // The op is made from a copy of the game, dropped before the op goes
        // in: a copy still held would make the insertion copy the game whole.
        let (circle, op, before) = try makeOp(kind, a)
        let geometry = before.geometry
        guard let op else {
            return Commands.MoveResult(
                game: before.id, changed: [], status: before.status.rawValue, progress: before.progress,
                trippedBy: before.trippedBy)
        }
        let (_, after) = try commit(op, circle: circle)
        var changed: [Int]
        switch op.payload {
        case .reveal(let runs): changed = Array(runs)
        case .mark(let c, _): changed = [c]
        default: changed = []
        }
        if before.status == .playing && after.status != .playing {
            changed = Array(Set(changed).union(after.genesis.layout.mineIndices)).sorted()
        }
        let changes = changed.map { i in
            let c = geometry.cell(at: i)
            return CellChange(x: c.x, y: c.y, value: String(after.look(i)))
        }
        events.publish(ControlEvent(
            event: .cells, game: before.id, cells: changes, status: after.status.rawValue, minesLeft: after.board.minesLeft,
            by: text(of: engine.identity.peerID), x: a.x, y: a.y, progress: after.board.progress,
            trippedBy: after.trippedBy?.description))
        return Commands.MoveResult(
            game: before.id, changed: changes, status: after.status.rawValue, progress: after.board.progress,
            trippedBy: after.trippedBy?.description)
    }

    /// What a move needs to know of its game before the op goes in.
    private struct GameBefore {
        var id: String
        var geometry: BoardGeometry
        var status: GameStatus
        var progress: Double
        var trippedBy: String?
    }

    /// The op for a move (nil when it changes nothing), from a copy of the
    /// game that is gone when this returns.
    private func makeOp(_ kind: Move, _ a: Commands.MoveArguments) throws -> (circle: Int, op: Op?, before: GameBefore) {
        let (circle, replica, state) = try lookup(a.game)
        let geometry = state.genesis.geometry
        let cell = Cell(x: a.x, y: a.y)
        guard geometry.contains(cell) else { throw GameActionError.outsideBoard(a.x, a.y, geometry) }
        let index = geometry.index(of: cell)
        let author = engine.circles[circle].author
        let now = Date().millis
        let op: Op?
        do {
            switch kind {
            case .reveal: op = try author.reveal(index, in: replica, atMillis: now)
            case .chord: op = try author.chord(index, in: replica, atMillis: now)
            case .flag:
                if let text = a.mark {
                    guard let mark = Mark.allCases.first(where: { $0.description == text.lowercased() }) else {
                        throw ControlError.badArguments("mark must be flag, question or none")
                    }
                    if mark == .question && !state.genesis.questionMarks {
                        throw ControlError(code: "no-question-marks", message: "this game was made without question marks")
                    }
                    op = try author.setMark(mark, on: index, in: replica, atMillis: now)
                } else {
                    op = try author.cycleMark(index, in: replica, atMillis: now)
                }
            }
        } catch let error as MoveError {
            throw GameActionError(error, x: a.x, y: a.y, geometry: geometry)
        }
        let before = GameBefore(
            id: state.gameID.description, geometry: geometry, status: state.status, progress: state.board.progress,
            trippedBy: state.trippedBy?.description)
        return (circle, op, before)
    }

    /// Applies a local op in place, commits the op (and the cached summary)
    /// to the store before anyone is answered; a failed commit reloads the
    /// engine from the store, so nothing uncommitted is kept.
    private func commit(_ op: Op, circle: Int) throws -> (SweeperSync.GameReplica, GameState) {
        try engine.insert(op, circle: circle)
        do {
            guard let (_, replica) = engine.game(op.gameID), let state = replica.state else {
                throw ControlError.internal("the game vanished")
            }
            let s = summary(replica, state)
            try store.append(
                [GameEngine.stored(op)], updating: op.gameID.description, status: state.status.rawValue,
                summary: try JSONEncoder().encode(s))
            onNewOps([op], self.replica)
            return (replica, state)
        } catch {
            reloadAfterFailedCommit(error)
            throw error
        }
    }

    private func hint(_ a: Commands.GameArguments) throws -> Commands.Hint.Result {
        let (_, _, state) = try lookup(a.game)
        let id = state.gameID.description
        guard state.status == .playing else { throw GameActionError.gameOver(state.status).error }
        guard let i = Solver.hint(for: state.board) else {
            return Commands.Hint.Result(game: id, x: nil, y: nil, kind: nil, message: "no cell can be proven safe from what is shown; time to guess")
        }
        let c = state.genesis.geometry.cell(at: i)
        return Commands.Hint.Result(game: id, x: c.x, y: c.y, kind: "safe", message: "\(c.x),\(c.y) is safe")
    }

    private func scores() -> Commands.Scores.Result {
        var best: [String: Commands.BestTime] = [:]
        let now = Date().millis
        for (_, state) in engine.games where state.status == .won && !state.isAssisted {
            let p = state.genesis.parameters
            let key = "\(p.width)x\(p.height)x\(p.mines)"
            let seconds = state.elapsedSeconds(nowMillis: now)
            let date = Double(state.startMillis) / 1000
            if let b = best[key], (b.seconds, b.date) <= (seconds, date) { continue }
            let players = engine.game(state.gameID).map { self.players($0.game, state).map(name(of:)) } ?? []
            best[key] = Commands.BestTime(
                width: p.width, height: p.height, mines: p.mines, seconds: seconds, game: state.gameID.description,
                players: players, date: date)
        }
        return Commands.Scores.Result(scores: best.values.sorted { ($0.width, $0.height, $0.mines) < ($1.width, $1.height, $1.mines) })
    }

    private func join(_ a: Commands.Join.Arguments) throws -> Commands.Join.Result {
        let key: CircleKey
        do {
            key = try InviteCode.decode(a.code)
        } catch {
            throw ControlError(code: "bad-invite", message: "that invite code is wrong: \(error)")
        }
        let next = engine.joining(key)
        try store.setSetting(GameEngine.previousCirclesKey, next.previousCirclesSetting)
        try store.setCircleKey(Data(key.bytes))
        engine = next
        logger.notice("joined a circle", metadata: ["circle": "\(key.tag)"])
        return Commands.Join.Result(circleTag: key.tag)
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
