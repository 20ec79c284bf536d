import Foundation
import SweeperControl
import SweeperConventions
import SweeperStore
import SweeperSync
import Testing

@testable import SweeperDaemon

/// A game's older moves live in the store, not in memory: the daemon keeps
/// a hash prefix per op and each chain's newest ops, and reads the rest back when
/// a peer catches up from the start, a game is replayed, or after a restart.
@Suite struct StoredHistoryTests {
    @Test func aLongGamesOlderMovesLeaveMemoryAndComeBackFromTheStore() async throws {
        let f = try await DaemonFixture()
        let opened: GameView = try await result(f.router, #"{"id":1,"command":"new","width":16,"height":16,"mines":99,"seed":5}"#)
        let row = try #require(opened.board.firstIndex { $0.contains("#") })
        let column = try #require(opened.board[row].firstIndex(of: "#")).utf16Offset(in: opened.board[row])
        let id = try #require(GameID(hex: opened.game))
        // The genesis, and the op that says the board came from a seed.
        let start = try #require(await f.service.engine.awakened(id)?.game.opCount)
        // 200 moves: a flag set and taken away again, a hundred times.
        let moves = 200
        for i in 0..<moves {
            let mark = i % 2 == 0 ? "flag" : "none"
            let _: Commands.MoveResult = try await result(
                f.router, #"{"id":2,"command":"flag","game":"\#(opened.game)","x":\#(column),"y":\#(row),"mark":"\#(mark)"}"#)
        }
        let view = try await show(f.router, opened.game)
        let held = try #require(await f.service.engine.awakened(id)?.game)
        #expect(held.opCount == start + moves)
        // The newest ops stay; the rest went to the store.
        #expect(held.opsInMemory <= Replica.defaultRecentOpsKept + 1, "\(held.opsInMemory) ops in memory")

        // A peer catching up from nothing gets every op, read back from the store, and the same board.
        var fresh = Replica(circle: f.circle)
        for segment in await f.service.replica.segments(for: id, after: VersionVector()) { fresh.insert(segment) }
        #expect(fresh.games[id]?.opCount == start + moves)
        #expect(fresh.state(of: id).map { Hex.encode($0.digest) } == view.digest)

        // A replay plays every move again.
        let replay: Commands.Replay.Result = try await result(f.router, #"{"id":3,"command":"replay","game":"\#(opened.game)"}"#)
        #expect(replay.moves.count == moves)

        // After a restart, the game loads one game at a time and lets go of its older ops again.
        let restarted = try await DaemonFixture.daemon(store: f.store, directory: f.directory, loop: f.loop)
        let reloaded = try #require(await restarted.service.engine.awakened(id)?.game)
        #expect(reloaded.opCount == start + moves)
        #expect(reloaded.opsInMemory <= Replica.defaultRecentOpsKept + 1)
        let shown = try await show(restarted.router, opened.game)
        #expect(shown.digest == view.digest)
        await restarted.network.node.shutdown()
        await f.cleanup()
    }

    @Test func aPeersLongRunOfMovesLeavesMemoryOnceWritten() async throws {
        let f = try await DaemonFixture()
        let (bob, _, start, game) = try RemoteOpsTests.bobsGame(in: f.circle)
        var bobReplica = start
        try await f.admit(bob.identity.peerID)
        let state = try #require(bobReplica.state(of: game))
        let cell = try #require((0..<81).first { !state.board.isRevealed($0) })
        // Bob flags a cell and takes the flag away again, 75 times.
        for i in 0..<150 {
            let g = try #require(bobReplica.games[game])
            let op = try #require(try bob.setMark(i % 2 == 0 ? .flag : .none, on: cell, in: g, atMillis: 2_000 + UInt64(i)))
            bobReplica.insert(op)
        }
        var session = SyncSession()
        let intake = try await f.service.receive(.ops(bobReplica.segments(for: game, after: VersionVector())), in: &session)
        #expect(intake.accepted.count == 151)
        // The write follows in a job of its own; this waits for it.
        await f.service.writeRemoteOps()
        #expect(try f.store.ops(gameID: game.description).count == 151)
        let held = try #require(await f.service.engine.awakened(game)?.game)
        #expect(held.opsInMemory <= Replica.defaultRecentOpsKept + 1, "\(held.opsInMemory) ops in memory")

        // What a third member catching up gets comes back from the store, whole.
        var fresh = Replica(circle: f.circle)
        for segment in await f.service.replica.segments(for: game, after: VersionVector()) { fresh.insert(segment) }
        #expect(fresh.games[game]?.opCount == 151)
        #expect(fresh.state(of: game)?.digest == bobReplica.state(of: game)?.digest)
        await f.cleanup()
    }
}

/// Games nobody uses sleep: the daemon keeps only their vectors and what
/// listings read, wakes a game from the store when a player or a peer needs
/// it, and after a restart holds none of them awake.
@Suite struct SleepingGamesTests {
    /// The games each circle keeps awake at most, once they are more.
    static let awakeAtMost = 2 * GameEngine.gamesKeptAwake

    @Test func gamesNobodyUsesSleepAndWakeAsTheyWere() async throws {
        let f = try await DaemonFixture()
        var views: [String: GameView] = [:]
        let count = Self.awakeAtMost + 4
        for seed in 1...count {
            let view: GameView = try await result(f.router, #"{"id":1,"command":"new","width":9,"height":9,"mines":10,"seed":\#(seed)}"#)
            views[view.game] = view
        }
        var replica = await f.service.engine.circles[0].replica
        #expect(replica.games.count <= Self.awakeAtMost)
        #expect(replica.sleeping.count >= count - Self.awakeAtMost)
        #expect(replica.summary.count == count)
        let asleep = try #require(replica.sleeping.keys.first)

        // A listing reads every game, and wakes none.
        let listed: Commands.Games.Result = try await result(f.router, #"{"id":2,"command":"games"}"#)
        #expect(Set(listed.games.map(\.game)) == Set(views.keys))
        #expect(await f.service.engine.circles[0].replica.sleeping.count == replica.sleeping.count)

        // Shown, a sleeping game wakes as it was; a move goes in.
        let shown = try await show(f.router, asleep.description)
        #expect(shown.digest == views[asleep.description]?.digest && shown.board == views[asleep.description]?.board)
        #expect(await f.service.engine.circles[0].replica.games[asleep] != nil)
        let row = try #require(shown.board.firstIndex { $0.contains("#") })
        let column = try #require(shown.board[row].firstIndex(of: "#")).utf16Offset(in: shown.board[row])
        let moved: Commands.MoveResult = try await result(
            f.router, #"{"id":3,"command":"flag","game":"\#(asleep)","x":\#(column),"y":\#(row),"mark":"flag"}"#)
        #expect(moved.changed.count == 1)

        // Every game used in turn: never more than the bound awake.
        for id in views.keys {
            _ = try await show(f.router, id)
            #expect(await f.service.engine.circles[0].replica.games.count <= Self.awakeAtMost)
        }

        // After a restart every game sleeps, and each comes back the same.
        let restarted = try await DaemonFixture.daemon(store: f.store, directory: f.directory, loop: f.loop)
        replica = await restarted.service.engine.circles[0].replica
        #expect(replica.games.isEmpty && replica.sleeping.count == count)
        let again: Commands.Games.Result = try await result(restarted.router, #"{"id":4,"command":"games"}"#)
        #expect(again.games.map(\.game) == listed.games.map(\.game))
        #expect(try await show(restarted.router, asleep.description).flags == 1)
        await restarted.network.node.shutdown()
        await f.cleanup()
    }
}
