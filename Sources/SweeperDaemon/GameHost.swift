import Foundation
import Logging
import SweeperControl
import SweeperGame
import SweeperStore

/// The daemon's engine and request router: holds every game's replica,
/// turns control requests into ops, commits them, answers, then notifies
/// subscribers. A local move is answered only after its op is committed.
actor GameHost: ControlResponder {
    /// The daemon's version, reported by `status`.
    static let version = "0.1.0"

    private let store: Store
    private var identity: LocalIdentity
    private let settings: DaemonSettings
    private let events: EventHub
    private let logger: Logger
    private let onGamesChanged: @Sendable (Int) -> Void
    private var games: [String: GameReplica] = [:]

    init(
        store: Store, settings: DaemonSettings, events: EventHub, logger: Logger,
        onGamesChanged: @escaping @Sendable (Int) -> Void
    ) throws {
        self.store = store
        self.settings = settings
        self.events = events
        self.logger = logger
        self.onGamesChanged = onGamesChanged
        let identity = try LocalIdentity.loadOrCreate(store)
        var games: [String: GameReplica] = [:]
        for game in try store.games() {
            do {
                games[game.id] = try GameReplica(stored: try store.ops(gameID: game.id))
            } catch {
                logger.error("cannot load a stored game; skipping it", metadata: ["game": "\(game.id)", "error": "\(error)"])
            }
        }
        logger.info("loaded games", metadata: ["count": "\(games.count)", "peer": "\(identity.author.peerID)"])
        self.identity = identity
        self.games = games
    }

    /// The number of games held.
    var gameCount: Int { games.count }

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
            switch command {
            case Commands.Status.name: return try answer(head.id, status())
            case Commands.Games.name: return try answer(head.id, Commands.Games.Result(games: summaries()))
            case Commands.New.name: return try answer(head.id, newGame(try args(line)))
            case Commands.Show.name: return try answer(head.id, show(try args(line)))
            case Commands.Reveal.name: return try answer(head.id, move(.reveal, try args(line)))
            case Commands.Flag.name: return try answer(head.id, move(.flag, try args(line)))
            case Commands.Chord.name: return try answer(head.id, move(.chord, try args(line)))
            case Commands.Hint.name: return try answer(head.id, hint(try args(line)))
            case Commands.Scores.name: return try answer(head.id, scores())
            case Commands.Invite.name:
                return try answer(head.id, Commands.Invite.Result(code: identity.inviteCode, circleTag: identity.circleTag))
            case Commands.Join.name: return try answer(head.id, join(try args(line)))
            case Commands.Peers.name: return try answer(head.id, peers())
            case Commands.Connect.name:
                let _: Commands.Connect.Arguments = try args(line)
                throw ControlError.notImplemented("connecting to peers (issue 5)")
            case Commands.Subscribe.name:
                let a: Commands.Subscribe.Arguments = try args(line)
                let game = try a.game.map { try resolve($0) }
                let stream = events.subscribe(game: game)
                return .subscribe(answer: try Self.success(head.id, Commands.Subscribe.Result(game: game)), events: stream)
            default:
                throw ControlError.unknownCommand(command)
            }
        } catch let error as ControlError {
            return .answer(Self.failure(head.id, error))
        } catch let error as GameActionError {
            return .answer(Self.failure(head.id, error.error))
        } catch let error as StoreError {
            logger.error("store failure", metadata: ["error": "\(error)"])
            return .answer(Self.failure(head.id, ControlError(code: "store-failure", message: "\(error)")))
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
    private func resolve(_ game: String?) throws -> String {
        guard let game, !game.isEmpty else {
            guard let latest = games.values.max(by: { ($0.created, $0.id) < ($1.created, $1.id) }) else {
                throw ControlError(code: "no-games", message: "there are no games yet; start one with `sweeper new`")
            }
            return latest.id
        }
        let wanted = game.lowercased()
        if games[wanted] != nil { return wanted }
        let matches = games.keys.filter { $0.hasPrefix(wanted) }.sorted()
        switch matches.count {
        case 1: return matches[0]
        case 0: throw ControlError(code: "unknown-game", message: "no game has an id starting with '\(game)'")
        default:
            throw ControlError(
                code: "ambiguous-game",
                message: "'\(game)' starts \(matches.count) game ids (\(matches.prefix(4).map { String($0.prefix(12)) }.joined(separator: ", "))…); type more of it")
        }
    }

    private func name(of author: String) -> String {
        if author == identity.author.peerID { return settings.name }
        if let peer = try? store.peers().first(where: { $0.peerID == author }) { return peer.name }
        return String(author.prefix(8))
    }

    private func summary(_ g: GameReplica, now: Date = Date()) -> GameSummary {
        GameSummary(
            id: g.id, width: g.parameters.width, height: g.parameters.height, mines: g.parameters.mines,
            status: g.status.rawValue, progress: g.board.progress, elapsedSeconds: g.elapsedSeconds(now: now),
            players: g.movers.map(name(of:)), created: g.created.timeIntervalSince1970, assisted: g.assisted)
    }

    private func summaries() -> [GameSummary] {
        games.values.sorted { ($0.created, $0.id) > ($1.created, $1.id) }.map { summary($0) }
    }

    private func view(_ g: GameReplica, cheat: Bool = false) -> GameView {
        let scores = g.scores
        let players = scores.map { PlayerScore(id: $0.key, name: name(of: $0.key), score: $0.value) }
            .sorted { ($1.score, $0.name) < ($0.score, $1.name) }
        return GameView(
            id: g.id, width: g.parameters.width, height: g.parameters.height, mines: g.parameters.mines,
            status: g.status.rawValue, digest: g.digest, revealed: g.revealedCount, flags: g.board.flagCount,
            board: g.rows, players: players, trippedBy: g.trippedBy, elapsedSeconds: g.elapsedSeconds(now: Date()),
            progress: g.board.progress, assisted: g.assisted, questionMarks: g.questionMarks,
            mineLayout: cheat ? g.layoutRows : nil)
    }

    private func status() throws -> Commands.Status.Result {
        Commands.Status.Result(
            peerID: identity.author.peerID, name: settings.name, circleTag: identity.circleTag, listening: settings.listen,
            mdns: settings.mdns ? "not running (peer discovery is not available in this version)" : "disabled",
            peers: 0, games: games.count, version: Self.version, pid: getpid())
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
        let replica: GameReplica
        let genesis: StoredOp
        do {
            (replica, genesis) = try GameReplica.create(
                parameters: parameters, seed: seed, questionMarks: a.questionMarks ?? false, author: identity.author, now: now)
        } catch let error as GenerationError {
            throw ControlError(code: "generation-failed", message: "\(error)")
        }
        let s = summary(replica, now: now)
        let record = StoredGame(
            id: replica.id, params: try JSONEncoder().encode(parameters), created: now, lastActivity: now,
            status: replica.status.rawValue, summary: try JSONEncoder().encode(s))
        guard try store.createGame(record, ops: [genesis]) else {
            throw ControlError.internal("game id collision; try again")
        }
        games[replica.id] = replica
        logger.info("new game", metadata: ["game": "\(replica.id)", "size": "\(parameters.width)x\(parameters.height)/\(parameters.mines)"])
        events.publish(ControlEvent(event: .gameAdded, game: replica.id, summary: s))
        onGamesChanged(games.count)
        return view(replica)
    }

    private func show(_ a: Commands.GameArguments) throws -> GameView {
        let id = try resolve(a.game)
        guard var g = games[id] else { throw ControlError(code: "unknown-game", message: "no game \(id)") }
        if a.cheat == true {
            let action = try g.cheat(author: identity.author, now: Date())
            if action.op != nil {
                g = try commit(action, id: id)
            }
        }
        return view(g, cheat: a.cheat == true)
    }

    private enum Move { case reveal, flag, chord }

    private func move(_ kind: Move, _ a: Commands.MoveArguments) throws -> Commands.MoveResult {
        let id = try resolve(a.game)
        guard let g = games[id] else { throw ControlError(code: "unknown-game", message: "no game \(id)") }
        let now = Date()
        let action: GameReplica.Action
        switch kind {
        case .reveal: action = try g.reveal(x: a.x, y: a.y, author: identity.author, now: now)
        case .chord: action = try g.chord(x: a.x, y: a.y, author: identity.author, now: now)
        case .flag:
            var mark: Mark?
            if let text = a.mark {
                guard let m = Mark.allCases.first(where: { $0.description == text.lowercased() }) else {
                    throw ControlError.badArguments("mark must be flag, question or none")
                }
                if m == .question && !g.questionMarks {
                    throw ControlError(code: "no-question-marks", message: "this game was made without question marks")
                }
                mark = m
            }
            action = try g.flag(x: a.x, y: a.y, mark: mark, author: identity.author, now: now)
        }
        let after = action.op == nil ? g : try commit(action, id: id)
        let geometry = after.board.geometry
        let changes = action.changed.map { i in
            let c = geometry.cell(at: i)
            return CellChange(x: c.x, y: c.y, value: String(after.look(i)))
        }
        if action.op != nil {
            events.publish(ControlEvent(
                event: .cells, game: id, cells: changes, status: after.status.rawValue, minesLeft: after.board.minesLeft,
                by: identity.author.peerID))
        }
        return Commands.MoveResult(
            game: id, changed: changes, status: after.status.rawValue, progress: after.board.progress, trippedBy: after.trippedBy)
    }

    /// Commits the action's op (and the cached summary) before the replica
    /// changes in memory; only then is the move answered.
    private func commit(_ action: GameReplica.Action, id: String) throws -> GameReplica {
        guard let op = action.op else { return action.replica }
        let s = summary(action.replica)
        try store.append([op], updating: id, status: action.replica.status.rawValue, summary: try JSONEncoder().encode(s))
        games[id] = action.replica
        return action.replica
    }

    private func hint(_ a: Commands.GameArguments) throws -> Commands.Hint.Result {
        let id = try resolve(a.game)
        guard let g = games[id] else { throw ControlError(code: "unknown-game", message: "no game \(id)") }
        guard g.status == .playing else { throw GameActionError.gameOver(g.status).error }
        guard let i = Solver.hint(for: g.board) else {
            return Commands.Hint.Result(game: id, x: nil, y: nil, kind: nil, message: "no cell can be proven safe from what is shown; time to guess")
        }
        let c = g.board.geometry.cell(at: i)
        return Commands.Hint.Result(game: id, x: c.x, y: c.y, kind: "safe", message: "\(c.x),\(c.y) is safe")
    }

    private func scores() -> Commands.Scores.Result {
        var best: [String: Commands.BestTime] = [:]
        let now = Date()
        for g in games.values where g.status == .won && !g.assisted {
            let p = g.parameters
            let key = "\(p.width)x\(p.height)x\(p.mines)"
            let seconds = g.elapsedSeconds(now: now)
            if let b = best[key], (b.seconds, b.date) <= (seconds, g.created.timeIntervalSince1970) { continue }
            best[key] = Commands.BestTime(
                width: p.width, height: p.height, mines: p.mines, seconds: seconds, game: g.id,
                players: g.movers.map(name(of:)), date: g.created.timeIntervalSince1970)
        }
        return Commands.Scores.Result(scores: best.values.sorted { ($0.width, $0.height, $0.mines) < ($1.width, $1.height, $1.mines) })
    }

    private func join(_ a: Commands.Join.Arguments) throws -> Commands.Join.Result {
        let key: Data
        do {
            key = try LocalIdentity.circleKey(fromInvite: a.code)
        } catch {
            throw ControlError(code: "bad-invite", message: "that invite code is wrong: \(error)")
        }
        try store.setCircleKey(key)
        identity.circleKey = key
        logger.notice("joined a circle", metadata: ["circle": "\(identity.circleTag)"])
        return Commands.Join.Result(circleTag: identity.circleTag)
    }

    private func peers() throws -> Commands.Peers.Result {
        Commands.Peers.Result(peers: try store.peers().map { PeerInfo(id: $0.peerID, name: $0.name, address: $0.address, state: "known") })
    }
}
