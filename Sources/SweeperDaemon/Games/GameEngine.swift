import FoundationEssentials
import Logging
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

/// One circle's games: SweeperSync's replica and this daemon's op author in
/// that circle. The first circle is the current one; earlier circles (left
/// by `join`) keep their games, still playable, under their own key.
struct CircleGames: Sendable {
    var circle: CircleKey
    var author: OpAuthor
    var replica: Replica
}

/// The daemon's replicated games: its identity, its circles, and the
/// conversion between SweeperSync ops and stored rows.
struct GameEngine: Sendable {
    let identity: SigningIdentity
    private(set) var circles: [CircleGames]
    /// Where every circle's replica reads back the ops it let go of.
    let archive: StoredOps
    /// Whether the games' snapshots are kept for the next start: while the
    /// readers are those the engine loaded with.
    private(set) var snapshotsServe = true
    /// How the last load found the stored games: held asleep as their
    /// snapshots said, or replayed from their ops.
    private(set) var loaded = (fromSnapshots: 0, replayed: 0)

    static let previousCirclesKey = "circle.previous"
    /// The setting that keeps, per game, the authors shown to have signed
    /// two ops at one place: lines of `game-hex author-hex`.
    static let equivocatorsKey = "games.equivocators"

    /// The (game, author) pairs of ``equivocatorsKey``'s value.
    static func equivocators(in text: String) -> [(GameID, PeerID)] {
        text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 2, let game = GameID(hex: String(parts[0])), let author = try? PeerID(parsing: String(parts[1])) else { return nil }
            return (game, author)
        }
    }

    /// How many games stay awake (their boards in memory) when nothing
    /// keeps more awake: the most recently used. The others sleep (see
    /// ``SweeperSync/Replica/sleep(_:)``) and wake, rebuilt from the store,
    /// when a player, a listing or a peer needs them.
    static let gamesKeptAwake = 8

    /// How many snapshots of replayed games a start keeps at once.
    static let snapshotBatch = 8

    /// Loads (or makes, on first start) the identity and circle, then
    /// rebuilds every game from its stored ops, one game at a time: each
    /// lets go of its older ops (they are in the store) and goes to sleep
    /// before the next is read, so that loading holds no more than one
    /// game's history and nothing resident grows with games nobody opens.
    ///
    /// The games replayed (no snapshot serves them) are reported to
    /// `replaying` before each one (how many are done, of how many) and
    /// once at the end, and their snapshots are kept a batch at a time
    /// (``snapshotBatch``), so a start stopped midway (a power cut, or
    /// systemd's start timeout) goes on from there the next time.
    static func load(_ store: Store, logger: Logger, replaying: (_ done: Int, _ total: Int) -> Void = { _, _ in }) throws -> GameEngine {
        let identity: SigningIdentity
        if let stored = try store.identity() {
            identity = try SigningIdentity(secretKeyBytes: [UInt8](stored.secretKey))
            guard identity.peerID.bytes == [UInt8](stored.publicKey) else {
                throw GameEngineError.identityMismatch
            }
        } else {
            let made = SigningIdentity()
            try store.saveIdentity(StoredIdentity(secretKey: Data(made.secretKeyBytes), publicKey: Data(made.peerID.bytes)))
            guard let again = try store.identity() else { throw GameEngineError.identityNotSaved }
            identity = try SigningIdentity(secretKeyBytes: [UInt8](again.secretKey))
            logger.notice("made a new identity", metadata: ["peer": "\(identity.peerID)"])
        }
        let current: CircleKey
        if let key = try store.circleKey() {
            current = try CircleKey(bytes: [UInt8](key))
        } else {
            current = CircleKey()
            try store.setCircleKey(Data(current.bytes))
            logger.notice("made a circle of its own", metadata: ["circle": "\(current.tag)"])
        }
        var keys = [current]
        for hex in (try store.setting(previousCirclesKey) ?? "").split(separator: ",") {
            if let bytes = Hex.decode(String(hex)), let key = try? CircleKey(bytes: bytes), !keys.contains(key) {
                keys.append(key)
            }
        }
        let archive = StoredOps(store: store)
        // The players this device hosts read the private games that name them.
        let hosted = HostedPlayers(store: store).all.map(\.identity)
        var replicas = keys.map { Replica(circle: $0, reader: identity, alsoReading: hosted, archive: archive) }
        // A game with a snapshot for every circle is held asleep as it says;
        // the others are replayed, and their snapshots kept for next time.
        let shelf = SnapshotShelf(store, readers: replicas.first.map(readersKey(of:)) ?? Data())
        var malformed = 0, fresh: [StoredSnapshot] = [], fromSnapshots = 0, replayed = 0
        var replays: [(game: String, circles: [Int])] = []
        for game in try store.games() {
            let replay = replicas.indices.filter { !shelf.install(game.id, into: &replicas[$0]) }
            if replay.isEmpty { fromSnapshots += 1 } else { replays.append((game.id, replay)) }
        }
        for (done, (game, replay)) in replays.enumerated() {
            replaying(done, replays.count)
            if fresh.count >= snapshotBatch {
                _ = try? store.saveSnapshots(fresh)
                fresh = []
            }
            replayed += 1
            var ops: [Op] = []
            var vouched: [Op] = []
            let rows = try store.ops(gameID: game)
            for stored in rows {
                guard let op = try? Op(decoding: [UInt8](stored.bytes)) else {
                    malformed += 1
                    continue
                }
                if stored.vouched { vouched.append(op) } else { ops.append(op) }
            }
            guard let id = (ops.first ?? vouched.first)?.gameID else { continue }
            let all = ops + vouched
            for i in replay {
                replicas[i].restore(ops, vouched: vouched)
                replicas[i].noteStored(all)
                let awake = replicas[i].games[id]
                replicas[i].sleep(id)
                if let row = snapshot(of: id, in: replicas[i], absentWith: rows.count, awake: awake) { fresh.append(row) }
            }
        }
        if !replays.isEmpty { replaying(replays.count, replays.count) }
        if malformed > 0 { logger.error("stored ops that cannot be decoded were skipped", metadata: ["count": "\(malformed)"]) }
        if shelf.unreadable > 0 { logger.notice("game snapshots that cannot be read were replaced", metadata: ["count": "\(shelf.unreadable)"]) }
        // Written only when a game was replayed: a start with every snapshot writes nothing.
        if !fresh.isEmpty { _ = try? store.saveSnapshots(fresh) }
        var circles: [CircleGames] = []
        let equivocators = equivocators(in: try store.setting(equivocatorsKey) ?? "")
        for (key, var replica) in zip(keys, replicas) {
            for (game, author) in equivocators { replica.noteEquivocator(author, in: game) }
            circles.append(CircleGames(circle: key, author: OpAuthor(identity: identity, circle: key), replica: replica))
        }
        var engine = GameEngine(identity: identity, circles: circles, archive: archive)
        engine.loaded = (fromSnapshots, replayed)
        return engine
    }

    /// The current circle.
    var circle: CircleKey { circles[0].circle }

    /// The games held only in circles this device left: readable here,
    /// never sent to the current circle.
    var gamesOfCirclesLeft: Set<GameID> {
        let current = Set(circles[0].replica.games.keys).union(circles[0].replica.sleeping.keys)
        return Set(circles.dropFirst().flatMap { Array($0.replica.games.keys) + $0.replica.sleeping.keys }).subtracting(current)
    }

    /// Every game readable here, awake or asleep: (circle index, overview).
    var games: [(circle: Int, state: GameOverview)] {
        var out: [(Int, GameOverview)] = []
        var seen: Set<GameID> = []
        for (i, c) in circles.enumerated() {
            for (id, g) in c.replica.games where !seen.contains(id) {
                if let s = GameOverview(g) {
                    out.append((i, s))
                    seen.insert(id)
                }
            }
            for (id, g) in c.replica.sleeping where !seen.contains(id) {
                if let s = g.overview {
                    out.append((i, s))
                    seen.insert(id)
                }
            }
        }
        return out
    }

    /// The ids of every game readable here, awake or asleep (``games``
    /// without building an overview of each).
    var gameIDs: Set<GameID> {
        var out: Set<GameID> = []
        for c in circles {
            for (id, g) in c.replica.games where g.state != nil { out.insert(id) }
            for (id, g) in c.replica.sleeping where g.overview != nil { out.insert(id) }
        }
        return out
    }

    /// The players of each private game of the current circle, read or not.
    var privateGamePlayers: [GameID: Set<PeerID>] { circles[0].replica.privateGamePlayers }

    /// The replica of one game readable here, and its circle index: a
    /// sleeping game is woken (and the game counts as used now).
    mutating func game(_ id: GameID) -> (circle: Int, game: SweeperSync.GameReplica)? {
        for i in circles.indices where circles[i].replica.reads(id) {
            guard circles[i].replica.wake(id) else { return nil }
            sleepIdleGames()
            guard let g = circles[i].replica.games[id], g.state != nil else { return nil }
            return (i, g)
        }
        return nil
    }

    /// The replica of one game readable here, and its circle index, without
    /// waking it: a sleeping game is read back from the store and let go
    /// again by the caller (a listing of every game).
    func awakened(_ id: GameID) -> (circle: Int, game: SweeperSync.GameReplica)? {
        for (i, c) in circles.enumerated() where c.replica.reads(id) {
            guard let g = c.replica.awakened(id), g.state != nil else { return nil }
            return (i, g)
        }
        return nil
    }

    /// Once a circle holds more than twice ``gamesKeptAwake`` games awake,
    /// puts every game to sleep that may, beyond the ``gamesKeptAwake``
    /// most recently used; returns how many went to sleep. (Waiting for
    /// twice as many spares a sort of the awake games at every use.)
    @discardableResult
    mutating func sleepIdleGames() -> Int {
        var slept = 0
        var asleep: Set<GameID> = []
        // The games as they were awake (copies that share their storage), for their frozen boards.
        var awake: [[GameID: SweeperSync.GameReplica]] = Array(repeating: [:], count: circles.count)
        for i in circles.indices where circles[i].replica.games.count > 2 * Self.gamesKeptAwake {
            awake[i] = circles[i].replica.games
            slept += circles[i].replica.sleepIdle(keepingAwake: Self.gamesKeptAwake)
            asleep.formUnion(Set(awake[i].keys).subtracting(circles[i].replica.games.keys))
        }
        if slept > 0 {
            keepSnapshots(of: asleep, awake: awake)
            Self.returnFreedMemory()
        }
        return slept
    }

    /// Gives the pages malloc holds free back to the system (glibc's
    /// `malloc_trim`, looked up at run time: the Glibc module leaves out
    /// `<malloc.h>`). Games that went to sleep freed their boards, but
    /// malloc keeps freed memory for reuse, so a peer that caught up with
    /// many games at once would stay as large as at that peak.
    static func returnFreedMemory() {
        #if canImport(Glibc)
        typealias MallocTrim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
        #endif
    }

    /// Inserts a locally made op into a copy of the engine; the caller
    /// commits it and then keeps the copy.
    func inserting(_ op: Op, circle index: Int) throws -> GameEngine {
        var next = self
        let outcome = next.circles[index].replica.insert(op)
        if let reason = outcome.rejection(of: op) {
            throw GameEngineError.ownOpRefused(reason)
        }
        return next
    }

    /// Inserts a locally made op in place (no copy of the engine, so a long
    /// game's chains are appended to, not copied). On a failed commit the
    /// caller reloads the engine from the store.
    mutating func insert(_ op: Op, circle index: Int) throws {
        let outcome = circles[index].replica.insert(op)
        if let reason = outcome.rejection(of: op) {
            throw GameEngineError.ownOpRefused(reason)
        }
    }

    /// Drops a game from every circle's replica (this device forgets it).
    mutating func forget(_ game: GameID) {
        for i in circles.indices { circles[i].replica.forget(game) }
    }

    /// Runs `body` on one circle's replica in place.
    mutating func withReplica<R>(circle index: Int, _ body: (inout Replica) throws -> R) rethrows -> R {
        try body(&circles[index].replica)
    }

    /// The players this device hosts now: the games made or woken from now
    /// on open the private games that name them too.
    mutating func host(_ players: [SigningIdentity]) {
        let readers = [identity] + players
        if readers.map(\.peerID) != circles[0].replica.readers.map(\.peerID) { snapshotsServe = false }
        for i in circles.indices { circles[i].replica.readers = readers }
    }

    /// The status of each of `ids` that is held, to compare with after ops
    /// of those games are inserted (a game not held yet has none).
    func statuses(of ids: some Sequence<GameID>) -> [GameID: GameStatus] {
        var out: [GameID: GameStatus] = [:]
        for id in ids where out[id] == nil {
            for c in circles {
                if let status = c.replica.status(of: id) {
                    out[id] = status
                    break
                }
            }
        }
        return out
    }

    /// A copy that has joined `key` (the old circle is kept for its games).
    func joining(_ key: CircleKey) -> GameEngine {
        var next = self
        if let i = next.circles.firstIndex(where: { $0.circle == key }) {
            let c = next.circles.remove(at: i)
            next.circles.insert(c, at: 0)
        } else {
            next.circles.insert(
                CircleGames(
                    circle: key, author: OpAuthor(identity: identity, circle: key),
                    replica: Replica(circle: key, reader: identity, alsoReading: Array(circles[0].replica.readers.dropFirst()), archive: archive)),
                at: 0)
        }
        return next
    }

    /// The stored list of previous circles.
    var previousCirclesSetting: String {
        circles.dropFirst().map { Hex.encode($0.circle.bytes) }.joined(separator: ",")
    }
}
