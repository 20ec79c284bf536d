import Foundation
import Logging
import SweeperControl
import SweeperCrypto
import SweeperGame
import SweeperSync
import Testing

@testable import SweeperDaemon
@testable import SweeperStore

/// A start reads each sleeping game from its snapshot instead of replaying
/// its ops, and shows every game as a start that replays them would.
@Suite struct StartupSnapshotTests {
    /// An answer as the socket would send it.
    static func answer(_ router: ControlRouter, _ line: String) async -> String {
        guard case .answer(let data) = await router.reply(to: Data(line.utf8)) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The games listing, and each game's view, as `router` shows them.
    static func everything(_ router: ControlRouter, _ games: [String]) async throws -> [String] {
        var out = [await answer(router, #"{"id":1,"command":"games","archived":true}"#)]
        for game in games { out.append(await answer(router, #"{"id":2,"command":"show","game":"\#(game)"}"#)) }
        return out
    }

    @Test func aRestartReadsSnapshotsAndShowsTheSameGames() async throws {
        let f = try await DaemonFixture()
        // More games than stay awake: the oldest go to sleep, and are written down as they do.
        var games: [String] = []
        for seed in 1...(2 * GameEngine.gamesKeptAwake + 4) {
            let made: GameView = try await result(f.router, #"{"id":1,"command":"new","preset":"beginner","seed":\#(seed)}"#)
            games.append(made.game)
        }
        // A game with a move, and one archived.
        let opened = try await show(f.router, games[0])
        let row = try #require(opened.board.firstIndex { $0.contains("#") })
        let column = try #require(opened.board[row].firstIndex(of: "#")).utf16Offset(in: opened.board[row])
        let _: Commands.MoveResult = try await result(f.router, #"{"id":3,"command":"flag","game":"\#(games[0])","x":\#(column),"y":\#(row)}"#)
        #expect(await Self.answer(f.router, #"{"id":4,"command":"archive","game":"\#(games[1])"}"#).contains(#""ok":true"#))
        let before = try await Self.everything(f.router, games)

        // The first restart replays the games that were awake, and writes them down too.
        let first = try await DaemonFixture.daemon(store: f.store, directory: f.directory, loop: f.loop)
        let firstLoad = await first.service.engine.loaded
        #expect(firstLoad.fromSnapshots > 0 && firstLoad.fromSnapshots + firstLoad.replayed == games.count, "\(firstLoad)")
        #expect(try await Self.everything(first.router, games) == before)
        await first.network.node.shutdown()

        // The next replays none, and shows the same games, boards and moves.
        let second = try await DaemonFixture.daemon(store: f.store, directory: f.directory, loop: f.loop)
        let secondLoad = await second.service.engine.loaded
        #expect(secondLoad.fromSnapshots == games.count && secondLoad.replayed == 0, "\(secondLoad)")
        #expect(try f.store.snapshotCount() == games.count)
        #expect(try await Self.everything(second.router, games) == before)

        // A move drops its game's snapshot: the start after it replays that game alone, move included.
        let unmoved = try await show(second.router, games[2])
        let y = try #require(unmoved.board.firstIndex { $0.contains("#") })
        let x = try #require(unmoved.board[y].firstIndex(of: "#")).utf16Offset(in: unmoved.board[y])
        let _: Commands.MoveResult = try await result(second.router, #"{"id":5,"command":"flag","game":"\#(games[2])","x":\#(x),"y":\#(y)}"#)
        let moved = try await show(second.router, games[2])
        #expect(moved.digest != unmoved.digest)
        await second.network.node.shutdown()
        let third = try await DaemonFixture.daemon(store: f.store, directory: f.directory, loop: f.loop)
        let thirdLoad = await third.service.engine.loaded
        #expect(thirdLoad.replayed == 1 && thirdLoad.fromSnapshots == games.count - 1, "\(thirdLoad)")
        #expect(try await show(third.router, games[2]).digest == moved.digest)
        await third.network.node.shutdown()
        await f.cleanup()
    }

    @Test func aStopWritesDownTheGamesStillAwake() async throws {
        let f = try await DaemonFixture()
        var games: [String] = []
        for seed in 1...3 {
            let made: GameView = try await result(f.router, #"{"id":1,"command":"new","preset":"beginner","seed":\#(seed)}"#)
            games.append(made.game)
        }
        #expect(try f.store.snapshotCount() == 0)
        // What the daemon does as it stops.
        #expect(await f.service.keepSnapshots() == 3)
        let restarted = try await DaemonFixture.daemon(store: f.store, directory: f.directory, loop: f.loop)
        let load = await restarted.service.engine.loaded
        #expect(load.fromSnapshots == 3 && load.replayed == 0, "\(load)")
        #expect(try await Self.everything(restarted.router, games) == (try await Self.everything(f.router, games)))
        await restarted.network.node.shutdown()
        await f.cleanup()
    }

    @Test func anotherSetOfReadersReplaysEveryGame() async throws {
        let f = try await DaemonFixture()
        let made: GameView = try await result(f.router, #"{"id":1,"command":"new","preset":"beginner","seed":3}"#)
        #expect(await f.service.keepSnapshots() == 1)
        // A player hosted here since reads the games too: what they show may differ, so they are replayed.
        _ = try await f.host(["Ann"])
        #expect(await f.service.keepSnapshots() == 0, "snapshots were kept for readers the engine did not load with")
        let restarted = try await DaemonFixture.daemon(store: f.store, directory: f.directory, loop: f.loop)
        let load = await restarted.service.engine.loaded
        #expect(load.fromSnapshots == 0 && load.replayed == 1, "\(load)")
        #expect(try await show(restarted.router, made.game).digest == (try await show(f.router, made.game)).digest)
        await restarted.network.node.shutdown()
        await f.cleanup()
    }

    @Test func aStartThatReplaysReportsEachGameAndKeepsSnapshotsAsItGoes() async throws {
        let f = try await DaemonFixture()
        let count = 2 * GameEngine.snapshotBatch + 4
        for seed in 1...count {
            let _: GameView = try await result(f.router, #"{"id":1,"command":"new","preset":"beginner","seed":\#(seed)}"#)
        }
        // A player hosted here reads the games too: no snapshot serves the next start, which replays every game.
        _ = try await f.host(["Ann"])
        // Snapshots for the new readers (this device's key and Ann's), as the store holds them at each report.
        func kept() -> Int { ((try? f.store.snapshots()) ?? []).filter { $0.readers.count == 2 * 32 }.count }
        var reports: [(done: Int, total: Int, kept: Int)] = []
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let engine = try GameEngine.load(f.store, logger: logger) { done, total in reports.append((done, total, kept())) }
        #expect(engine.loaded.replayed == count && engine.loaded.fromSnapshots == 0, "\(engine.loaded)")
        #expect(reports.map(\.done) == Array(0...count) && reports.allSatisfy { $0.total == count }, "\(reports)")
        // Kept a batch at a time, not only at the end: a start stopped midway goes on from there.
        #expect(reports.first?.kept == 0)
        #expect(reports.contains { $0.done < count && $0.kept >= GameEngine.snapshotBatch }, "\(reports.map(\.kept))")
        #expect(kept() == count)
        // The start after it replays nothing and reports nothing.
        reports = []
        let next = try GameEngine.load(f.store, logger: logger) { done, total in reports.append((done, total, 0)) }
        #expect(next.loaded.fromSnapshots == count && next.loaded.replayed == 0 && reports.isEmpty)
        await f.cleanup()
    }

    @Test func aLongGameWakesFromItsFrozenBoardWithoutReadingItsOlderOps() async throws {
        let f = try await DaemonFixture()
        let made: GameView = try await result(f.router, #"{"id":1,"command":"new","preset":"beginner","seed":5}"#)
        let id = try #require(GameID(hex: made.game))
        // Flags set and taken away, past the length a frozen board is kept for: made
        // here as this device's own moves, and written as the daemon writes them.
        let engine = await f.service.engine
        let author = OpAuthor(identity: engine.identity, circle: f.circle)
        var local = Replica(circle: f.circle)
        for op in try #require(engine.circles[0].replica.games[id]).allOps() { local.insert(op) }
        let cell = try #require(local.state(of: id).flatMap { s in (0..<81).first { !s.board.isRevealed($0) } })
        var rows: [StoredOp] = []
        for i in 0..<GameReplica.frozenBoardMinimumOps {
            let game = try #require(local.games[id])
            let op = try #require(try author.setMark(i % 2 == 0 ? .flag : .none, on: cell, in: game, atMillis: 1_790_000_000_000 + UInt64(i)))
            #expect(local.insert(op).accepted.count == 1)
            rows.append(StoredOps.row(op))
        }
        #expect(try f.store.append(rows, updating: made.game) == rows.count)
        await f.core.network.node.shutdown()

        // The start replays the game and writes its frozen board down with its snapshot.
        let first = try await DaemonFixture.daemon(store: f.store, directory: f.directory, loop: f.loop)
        #expect(await first.service.engine.loaded.replayed == 1)
        #expect(try f.store.frozenBoard(game: made.game, circle: Data(f.circle.tag.utf8)) != nil)
        let shown = try await show(first.router, made.game)
        #expect(shown.digest == local.state(of: id)?.digestHex)
        await first.network.node.shutdown()

        // One of the game's older ops is damaged behind the daemon's back (the
        // trigger that would drop the snapshot taken out first): the wake never reads it.
        let db = try SQLiteConnection(path: f.directory + "/" + Store.fileName)
        try db.execute("DROP TRIGGER game_snapshots_op_changed")
        try db.execute("UPDATE ops SET bytes = x'00' WHERE gameID = '\(made.game)' AND seq = 3")
        let second = try await DaemonFixture.daemon(store: f.store, directory: f.directory, loop: f.loop)
        #expect(await second.service.engine.loaded.fromSnapshots == 1)
        #expect(try await show(second.router, made.game).digest == shown.digest)
        await second.network.node.shutdown()

        // Without the board, the same wake replays every op, and meets the damaged one.
        try db.execute("UPDATE game_snapshots SET board = NULL")
        db.close()
        let third = try await DaemonFixture.daemon(store: f.store, directory: f.directory, loop: f.loop)
        #expect(await third.service.engine.loaded.fromSnapshots == 1)
        #expect(await Self.answer(third.router, #"{"id":2,"command":"show","game":"\#(made.game)"}"#).contains(#""ok":false"#))
        await third.network.node.shutdown()
        await f.cleanup()
    }
}
