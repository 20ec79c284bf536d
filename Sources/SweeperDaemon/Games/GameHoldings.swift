import FoundationEssentials
import Logging
import NIOCore
import NIOPosix
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

/// Which games and ops this device holds: a removed device's later ops
/// dropped, games forgotten and followed, the sync mode, and the games of a
/// circle left when joining another.
extension GameService {
    // MARK: Who writes

    /// Takes new ops only from the devices `authors` gives, handed the
    /// devices whose ops are held (see ``CircleMembers/opAuthors(holding:)``).
    func admitAuthors(_ authors: (Set<PeerID>) -> Set<PeerID>?) {
        let allowed = authors(engine.circles[0].replica.heldAuthors)
        engine.withReplica(circle: 0) { $0.admitAuthors(allowed) }
    }

    // MARK: Removed devices

    /// A device an admin admitted again after its removal, as the games
    /// take it: its admission record (hex) and, per game, how many of its
    /// ops its removal kept.
    struct Readmitted: Sendable, Equatable {
        var record: String
        var kept: [GameID: UInt64]
    }

    /// The store setting that lists the admissions again whose cut the
    /// games took (record hashes, hex, one a line): each is taken once, so
    /// that a device's moves after it came back are never cut again.
    static let readmissionsSetting = "circle.readmissions"

    /// Applies the circle's removals to its games: each removed device's
    /// ops after what its removal kept leave the replica (the boards are
    /// derived again), the store and the write queue, viewers are told what
    /// changed, and such ops are refused from now on. A device admitted
    /// again (`readmitted`) is taken back: in the games its removal listed
    /// its ops after those kept leave, once, and its new ops are taken.
    func applyRemovals(_ removals: [PeerID: [GameID: UInt64]], readmitted: [PeerID: Readmitted] = [:]) {
        for (peer, kept) in removals.sorted(by: { $0.key < $1.key }) where engine.circles[0].replica.removed[peer] != kept {
            cut(peer, keeping: kept, listedOnly: false) { $0.remove(peer, kept: kept) }
        }
        guard !readmitted.isEmpty else { return }
        var taken = Set(((try? store.setting(Self.readmissionsSetting)) ?? nil)?.split(separator: "\n").map(String.init) ?? [])
        for (peer, again) in readmitted.sorted(by: { $0.key < $1.key })
        where !taken.contains(again.record) || engine.circles[0].replica.removed[peer] != nil {
            cut(peer, keeping: again.kept, listedOnly: true) { $0.readmit(peer, kept: again.kept) }
            taken.insert(again.record)
            do {
                try store.setSetting(Self.readmissionsSetting, taken.sorted().joined(separator: "\n"))
            } catch {
                logger.warning("could not note a device admitted again", metadata: ["peer": "\(peer.shortDescription)", "error": "\(error)"])
            }
            logger.notice("a removed device was admitted again: its new moves count", metadata: ["peer": "\(peer.shortDescription)"])
        }
    }

    /// Cuts `peer`'s ops after `kept` (in every game, or with `listedOnly`
    /// in the games `kept` lists) by `change` on the replica, then in the
    /// write queue and the store, and tells the viewers.
    private func cut(_ peer: PeerID, keeping kept: [GameID: UInt64], listedOnly: Bool, _ change: (inout Replica) -> [GameID: [Op]]) {
        let before = engine.statuses(of: engine.circles[0].replica.knownGames)
        let faults = engine.circles[0].replica.archiveFaults
        let droppedOps = engine.withReplica(circle: 0, change)
        if engine.circles[0].replica.archiveFaults > faults {
            logger.error(
                "could not read a game's earlier moves back from the store: a removed device's moves stay shown there until a restart",
                metadata: ["peer": "\(peer.shortDescription)"])
        }
        for id in Array(unwritten.ops.keys) where !listedOnly || kept[id] != nil {
            unwritten.ops[id]?.removeAll { $0.author == peer && $0.seq > kept[id] ?? 0 }
        }
        for (id, ops) in droppedOps.sorted(by: { $0.key < $1.key }) {
            let replica = engine.game(id)?.game
            do {
                if let replica, let state = replica.state {
                    try store.dropOps(
                        gameID: id.description, author: Data(peer.bytes), after: Int64(clamping: kept[id] ?? 0), status: state.status.rawValue)
                    // The cut read the ops it kept back into memory; the store has them.
                    engine.withReplica(circle: 0) { $0.noteStored(peer, in: id, through: kept[id] ?? 0) }
                    for var changed in replica.changes(by: ops, state: state, before: before[id]) {
                        changed.clicked = nil  // undone moves: no "last move" to mark
                        sinks.changes.gameChanged(.cells(changed))
                    }
                } else {
                    try store.dropOps(gameID: id.description, author: Data(peer.bytes), after: 0, status: nil)
                    sinks.changes.gameChanged(.gone(id))
                    sinks.status.gamesChanged(to: engine.gameIDs.count)
                }
            } catch {
                logger.warning("could not delete a removed device's moves", metadata: ["game": "\(id)", "error": "\(error)"])
            }
            logger.notice(
                "dropped a removed device's moves", metadata: ["peer": "\(peer.shortDescription)", "game": "\(id)", "ops": "\(ops.count)"])
        }
    }

    /// The most played time a share of `game` by `author` may claim, read
    /// without waking the game: how long it has lasted (to its end, or to
    /// `nowMillis`) and an hour for clocks that differ; `nil` when the game
    /// is not held here or `author` may not move in it. A private game not
    /// read here bounds only who (its players): `.max`.
    func playedTimeBound(of game: GameID, by author: PeerID, nowMillis: UInt64) -> UInt64? {
        let replica = engine.circles[0].replica
        let slack: UInt64 = 3_600_000
        if let overview = replica.overview(of: game) {
            guard overview.mayMove(author) else { return nil }
            // Saturating: the clocks are what the game's ops say, up to UInt64.max.
            let (bound, over) = (max(overview.startMillis, overview.endMillis ?? nowMillis) - overview.startMillis).addingReportingOverflow(slack)
            return over ? .max : bound
        }
        guard let players = replica.privateGamePlayers[game], players.contains(author) else { return nil }
        return .max
    }

    /// Deletes the ops held unsigned that gave way to their authors' proven
    /// ops at their places (see ``InsertOutcome/replaced``) from the write
    /// queue and the store, and tells the viewers. `before` is each game's
    /// status before they went.
    func forgetReplaced(_ replaced: [Op], before: [GameID: GameStatus]) {
        for (id, ops) in Dictionary(grouping: replaced, by: \.gameID).sorted(by: { $0.key < $1.key }) {
            let from = Dictionary(grouping: ops, by: \.author).mapValues { $0.map(\.seq).min() ?? 1 }
            unwritten.ops[id]?.removeAll { op in from[op.author].map { op.seq >= $0 } ?? false }
            unwritten.signed.removeAll { op in op.gameID == id && from[op.author].map { op.seq >= $0 } ?? false }
            // A private game this device does not read is kept as such.
            let state = engine.game(id)?.game.state
            for (author, first) in from.sorted(by: { $0.key < $1.key }) {
                do {
                    _ = try store.dropOps(
                        gameID: id.description, author: Data(author.bytes), after: Int64(first) - 1,
                        status: state?.status.rawValue ?? GameService.unreadStatus)
                    // The ops before them were read back into memory; the store has them.
                    engine.withReplica(circle: 0) { $0.noteStored(author, in: id, through: first - 1) }
                } catch {
                    logger.warning("could not delete moves their author never kept", metadata: ["game": "\(id)", "error": "\(error)"])
                }
                logger.notice(
                    "dropped moves a device pushed and never kept (it stopped, or its commit failed, first): its own word replaced them",
                    metadata: ["game": "\(id)", "author": "\(author.shortDescription)", "from": "\(first)"])
            }
            guard let replica = engine.game(id)?.game, let state else { continue }
            for var changed in replica.changes(by: ops, state: state, before: before[id]) {
                changed.clicked = nil  // undone moves: no "last move" to mark
                sinks.changes.gameChanged(.cells(changed))
            }
        }
    }

    /// Deletes the ops a board of the day dropped from the write queue and
    /// the store, and tells the viewers: other players' ops that came
    /// before its creator's daily op (see ``InsertOutcome/dropped``).
    /// `before` is each game's status before they went.
    func forgetDroppedFromDaily(_ dropped: [Op], before: [GameID: GameStatus]) {
        for (id, ops) in Dictionary(grouping: dropped, by: \.gameID).sorted(by: { $0.key < $1.key }) {
            let authors = Set(ops.map(\.author))
            unwritten.ops[id]?.removeAll { authors.contains($0.author) }
            unwritten.signed.removeAll { $0.gameID == id && authors.contains($0.author) }
            guard let replica = engine.game(id)?.game, let state = replica.state else { continue }
            for author in authors.sorted() {
                do {
                    _ = try store.dropOps(gameID: id.description, author: Data(author.bytes), after: 0, status: state.status.rawValue)
                } catch {
                    logger.warning("could not delete moves dropped from a board of the day", metadata: ["game": "\(id)", "error": "\(error)"])
                }
            }
            for var changed in replica.changes(by: ops, state: state, before: before[id]) {
                changed.clicked = nil  // undone moves: no "last move" to mark
                sinks.changes.gameChanged(.cells(changed))
            }
            logger.notice(
                "dropped other players' moves from a board of the day: only its creator plays it",
                metadata: ["game": "\(id)", "ops": "\(ops.count)"])
        }
    }

    /// Per game of the current circle, how many of `peer`'s ops are held:
    /// what a removal of it keeps.
    func heldOps(of peer: PeerID) -> [GameID: UInt64] {
        var out: [GameID: UInt64] = [:]
        let replica = engine.circles[0].replica
        for (id, game) in replica.games {
            let n = game.chainLength(of: peer)
            if n > 0 { out[id] = n }
        }
        for (id, game) in replica.sleeping where game.vector[peer] > 0 { out[id] = game.vector[peer] }
        return out
    }

    // MARK: What syncs

    /// What this device tells its peers it takes.
    var interest: GameInterest {
        selection.interest(holding: engine.gameIDs)
    }

    /// Sets the sync mode, kept in the store over the configuration's.
    func setSyncMode(_ mode: SyncMode) throws {
        try store.setSetting(Store.syncModeSetting, mode.rawValue)
        selection.mode = mode
        logger.notice("sync mode set", metadata: ["mode": "\(mode.rawValue)"])
    }

    /// Forgets a game held here: its ops and shares of played time leave
    /// the database (and the space is given back), it leaves the replicas
    /// and every list, and it is no longer taken from peers. Ops of it
    /// still waiting to be written are dropped.
    /// Returns the game and how many of its ops were deleted. The file is
    /// rebuilt off the event loop (``compactOffTheLoop()``).
    ///
    /// First every link is sent the signatures of the heads this player's
    /// live pushes left unsigned (as after a pause): a peer holds those ops
    /// unsigned until then, can relay none of them, and this device, its
    /// copy of them gone, could sign them no more; so a game made here and
    /// followed again would never come back whole.
    func forget(_ game: String) async throws -> (id: GameID, deleted: Int) {
        let id = try resolve(game)
        sinks.sessions.signHeads(replica: replica)
        unwritten.ops[id] = nil
        unwritten.newGames.remove(id)
        let deleted = try store.forgetGame(id: id.description, gameBytes: id.bytes, compacting: false)
        engine.forget(id)
        selection.forget(id)
        sinks.play.forget(id)
        sinks.status.gamesChanged(to: engine.gameIDs.count)
        sinks.changes.gameChanged(.gone(id))
        logger.notice("forgot a game", metadata: ["game": "\(id)", "ops": "\(deleted)"])
        try await compactOffTheLoop()
        return (id, deleted)
    }

    /// Writes a consistent copy of the whole database to the new file
    /// `path` (``Store/backUp(to:)``) on a thread of NIO's pool, so the
    /// event loop goes on serving viewers and links meanwhile; moves made
    /// while it runs are in the next backup.
    func backUp(to path: String) async throws -> Store.BackupContents {
        let store = self.store
        let copy = try await NIOThreadPool.singleton.runIfActive { try store.backUp(to: path) }
        logger.notice("backed up this device", metadata: ["file": "\(path)", "bytes": "\(copy.bytes)", "games": "\(copy.games)"])
        return copy
    }

    /// Rebuilds the database file (`VACUUM`, which rewrites all of it) on a
    /// thread of NIO's pool, so the event loop goes on serving viewers and
    /// links meanwhile; a write that comes in the meantime waits for it.
    func compactOffTheLoop() async throws {
        let store = self.store
        try await NIOThreadPool.singleton.runIfActive { try store.compact() }
    }

    /// Follows a game: one held here (kept in `mine` mode from now on), one
    /// forgotten, or one of `available` (what linked peers hold), named by
    /// a full id or a unique prefix. The caller then tells the peers.
    /// Returns the game, whether it is held here, and how many of its ops.
    func follow(_ game: String, available: Set<GameID>) throws -> (id: GameID, held: Bool, ops: Int) {
        let held = engine.gameIDs
        let id = try Self.match(game, among: held.union(available).union(selection.forgotten))
        try store.followGame(id: id.description)
        selection.follow(id)
        sinks.play.follow(id)
        // Counted without waking the game.
        let ops = engine.circles.first { $0.replica.reads(id) }?.replica.opCount(of: id) ?? 0
        logger.notice("following a game", metadata: ["game": "\(id)", "held": "\(held.contains(id))"])
        return (id, held.contains(id), ops)
    }

    /// The games `peers` (each peer's last summary) hold that are not held
    /// here, with the most ops any of them holds.
    func available(from peers: [PeerHoldings]) -> [GameElsewhere] {
        // Held, read or not (a private game this device does not play is held unread).
        let held = engine.gameIDs.union(engine.circles[0].replica.summary.keys)
        var found: [GameID: GameElsewhere] = [:]
        for peer in peers {
            for (game, vector) in peer.holds where !held.contains(game) {
                var entry = found[game] ?? GameElsewhere(id: game, ops: 0, players: [], heldBy: [], forgotten: selection.forgotten.contains(game))
                entry.players.formUnion(vector.heads.keys)
                entry.heldBy.append((peer.peer, peer.name))
                // The description of the peer that holds the most of it.
                if vector.opCount >= entry.ops, let described = peer.described[game] { entry.described = described }
                entry.ops = max(entry.ops, vector.opCount)
                found[game] = entry
            }
        }
        return found.values.map { e in
            var e = e
            e.heldBy.sort { ($0.name, $0.peer) < ($1.name, $1.peer) }
            return e
        }.sorted { ($0.ops, $1.id) > ($1.ops, $0.id) }
    }

    /// Moves to the circle of `key`: new games and links use it; games of
    /// the circles left stay, playable under their own key.
    /// With `forgetGames`, every game held before is forgotten (deleted
    /// from the database, not recorded as a choice: it is of no circle
    /// this device syncs); else they stay, readable, and nothing of them
    /// goes to the new circle. Returns how many games were forgotten or kept.
    @discardableResult
    func join(_ key: CircleKey, forgetGames: Bool = false) async throws -> Int {
        try reloadIfPending()
        let held = engine.gameIDs
        let next = engine.joining(key)
        try store.setSetting(GameEngine.previousCirclesKey, next.previousCirclesSetting)
        try store.setCircleKey(Data(key.bytes))
        engine = next
        logger.notice("joined a circle", metadata: ["circle": "\(key.tag)"])
        if forgetGames {
            // One transaction and one rebuild of the file for them all.
            let deleted = try store.forgetGames(held.map { ($0.description, $0.bytes) }, recordingChoice: false, compacting: false)
            for id in held {
                unwritten.ops[id] = nil
                unwritten.newGames.remove(id)
                engine.forget(id)
                sinks.play.forget(id)
                sinks.changes.gameChanged(.gone(id))
            }
            logger.notice("forgot the games of the circle left", metadata: ["games": "\(held.count)", "ops": "\(deleted)"])
            sinks.status.gamesChanged(to: engine.gameIDs.count)
        }
        sinks.links.withhold(engine.gamesOfCirclesLeft)
        if forgetGames { try await compactOffTheLoop() }
        return held.count
    }
}
