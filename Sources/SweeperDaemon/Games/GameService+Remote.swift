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

/// Peers' ops: taken in the link's sync session, shown and relayed at once,
/// written behind without an fsync (their authors hold them).
extension GameService {
    /// Takes what a peer's sync message brings into the current circle's
    /// replica: `step` runs the message in the peer's sync session (the
    /// peer side owns sessions: ``receive(_:in:wakeBudget:now:)`` in
    /// `Peers/`) with the replica and the games this device takes; then
    /// viewers are told of the games in `touched`, the ops are relayed and
    /// queued for writing (see ``commitRemote(_:before:)``).
    ///
    /// Waking the sleeping games it needs reads back at most `wakeBudget`
    /// ops here (`nil`: no bound); the games past it come back in
    /// ``RemoteIntake/deferredWakes``, their ops refused for now.
    ///
    /// With `now` (the steady clock, in seconds), the ops taken count
    /// against their authors' ``AuthorQuota``.
    func take(
        touching touched: [GameID], wakeBudget: Int? = nil, now: Double? = nil,
        _ step: (inout Replica, GameInterest) -> SyncSession.Step
    ) throws -> RemoteIntake {
        try reloadIfPending()
        let before = engine.statuses(of: touched)
        let interest = self.interest
        // Authors whose day ended write again from this message on.
        if let now { countAgainstQuota([], now: now) }
        let (done, woken, deferred) = engine.withReplica(circle: 0) { replica in
            replica.wakeBudget = wakeBudget
            defer { replica.wakeBudget = nil }
            let done = step(&replica, interest)
            let jobs = replica.takeDeferredWakes().sorted()
            return (done, (wakeBudget ?? 0) - (replica.wakeBudget ?? 0), jobs)
        }
        let catchUps = done.catchUps.compactMap { c in replica.wakeJob(for: c.game).map { (job: $0, catchUp: c) } }
        commitRemote(done.outcome, before: before)
        if let now { countAgainstQuota(done.outcome.accepted, now: now) }
        engine.sleepIdleGames()
        return RemoteIntake(
            replies: done.replies, accepted: done.outcome.accepted, rejected: done.outcome.rejected.map(OpRefusal.init),
            violation: done.violation, wokenOps: woken, deferredWakes: deferred, catchUps: catchUps)
    }

    /// Counts ops taken from peers against their authors' ``AuthorQuota``;
    /// an author newly over it is refused from now on, and said so once in
    /// the log; one whose day ended is taken again.
    func countAgainstQuota(_ ops: [Op], now: Double) {
        let local = Set(replica.readers.map(\.peerID))
        let over = authorQuota.count(ops, exempt: local, now: now)
        let before = replica.overDailyQuota
        guard over != before else { return }
        engine.withReplica(circle: 0) { $0.overDailyQuota = over }
        for author in over.subtracting(before).sorted() {
            logger.warning(
                "a member's device sent more moves in a day than a family's play makes: the rest are refused until its day is over",
                metadata: [
                    "author": "\(author.shortDescription)", "ops": "\(authorQuota.used[author]?.ops ?? 0)",
                    "bytes": "\(authorQuota.used[author]?.bytes ?? 0)",
                ])
        }
    }

    /// Puts in a game woken off the loop (``WakeJob``), when it still
    /// sleeps as it did; returns whether it is awake now.
    func install(_ woken: GameReplica, from job: WakeJob) -> Bool {
        engine.withReplica(circle: 0) { $0.install(woken, from: job) }
    }

    /// Keeps, across restarts, the authors shown to have signed two
    /// different ops at one place of a game (the second op is refused, so
    /// only this note remembers it), and says so once in the log: `show`
    /// names them (`equivocatedBy`).
    func noteEquivocations(_ pairs: [(GameID, PeerID)]) {
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
    func commitRemote(_ outcome: InsertOutcome, before: [GameID: GameStatus]) {
        noteEquivocations(outcome.rejected.filter { $0.reason == .conflictingOp }.map { ($0.gameID, $0.author) })
        forgetDroppedFromDaily(outcome.dropped, before: before)
        forgetReplaced(outcome.replaced, before: before)
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
                // Who plays it decides whose watching counts its time, from now on.
                sinks.play.setPlayers(state.players, of: gameID)
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
    func scheduleWrite() {
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
    func writeUnwritten() {
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
                        created: Date(timeIntervalSince1970: Double(state.startMillis) / 1000), lastActivity: wallNow,
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
    func writeUnread(_ gameID: GameID, _ ops: [Op], isNew: Bool) throws {
        guard let game = engine.circles[0].replica.games[gameID], game.isKnown else { return }
        let stored = ops.map { StoredOps.row($0, vouched: game.isVouchedOnly($0)) }
        let empty = Data("{}".utf8)
        if isNew {
            let record = StoredGame(
                id: gameID.description, params: empty, created: wallNow, lastActivity: wallNow, status: Self.unreadStatus)
            if try store.createGame(record, ops: stored, durability: .deferred) { return }
        }
        try store.append(stored, updating: gameID.description, status: Self.unreadStatus, durability: .deferred)
    }

    /// The status stored for a private game this device does not read.
    static let unreadStatus = "unread"
}
