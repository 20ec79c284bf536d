import Foundation
import SweeperControl
import SweeperCrypto
import SweeperGame
import SweeperSync
import Testing

@testable import SweeperDaemon

/// A lost game says one time: when the mine was tripped is when the game
/// ended, after its played time, however long ago the game was made.
@Suite struct EndingTimeTests {
    @Test func aLossSaysOneTime() async throws {
        // The daemon's clock, moved by hand (the fixture's store began
        // counting played time at its start: a game made before then would
        // keep its wall time, and the test could not fail).
        let clock = ManualClock()
        let f = try await DaemonFixture(clock: clock)
        let game: GameView = try await result(f.router, #"{"id":1,"command":"new","preset":"beginner"}"#)
        // Made, then left a while: the wall clock runs, the played time does not.
        clock.advance(by: .milliseconds(2_100))
        let peek: GameView = try await result(f.router, #"{"id":2,"command":"show","game":"\#(game.game)","peek":true}"#)
        let layout = try #require(peek.mineLayout)
        let mine = try #require(layout.enumerated().lazy.compactMap { y, row in Array(row).firstIndex(of: "*").map { (x: $0, y: y) } }.first)
        let _: Commands.MoveResult = try await result(f.router, #"{"id":3,"command":"reveal","game":"\#(game.game)","x":\#(mine.x),"y":\#(mine.y)}"#)
        let lost: GameView = try await result(f.router, #"{"id":4,"command":"show","game":"\#(game.game)"}"#)
        let ending = try #require(lost.ending)
        #expect(
            ending.status == .lost && ending.trippedAfterMillis == ending.playedMillis,
            "lost in \(ending.playedMillis) ms, tripped after \(ending.trippedAfterMillis ?? -1) ms")
        let text = ControlFormatting.ending(ending).joined(separator: "\n")
        #expect(text.contains("Lost in \(ControlFormatting.duration(millis: ending.playedMillis))") && !text.contains(" after "), "\(text)")
        await f.cleanup()
    }
}

/// A game that ended elsewhere, whose players' shares of time have not come
/// (a game followed again after `forget`): its time is from its start to
/// its end, never nothing, so it claims no record it did not set.
@Suite struct UnsharedTimeTests {
    @Test func aGameWonElsewhereWithNoShareYetTakesItsWallTimeAndNoRecord() async throws {
        let f = try await DaemonFixture()
        let bob = OpAuthor(identity: SigningIdentity(), circle: f.circle)
        try await f.admit(bob.identity.peerID)
        // Bob's game, made after this store began counting, won by Bob a second a move.
        let board = try Generator.generate(try GameParameters(preset: .beginner), seed: 12)
        let start = UInt64(Date().timeIntervalSince1970 * 1000) + 60_000
        let genesis = try bob.genesis(parameters: board.parameters, layout: board.layout, seed: 12, questionMarks: false, createdAtMillis: start)
        var replica = Replica(circle: f.circle)
        replica.insert(genesis)
        var ops = [genesis]
        var t = start
        while let game = replica.games[genesis.gameID], let state = game.state, state.status == .playing {
            guard let cell = (0..<81).first(where: { !board.layout.isMine($0) && !state.board.isRevealed($0) }) else { break }
            t += 1_000
            guard let op = try bob.reveal(cell, in: game, atMillis: t) else { break }
            replica.insert(op)
            ops.append(op)
        }
        #expect(ops.count > 2 && replica.games[genesis.gameID]?.state?.status == .won)
        let taken = try await f.service.receive(.ops([try #require(OpSegment(verifiedOps: ops))]))
        #expect(taken.accepted.count == ops.count)
        let view = try await show(f.router, genesis.gameID.description)
        let ending = try #require(view.ending)
        // Start to end, to the millisecond: not 0:00:00, which would top every table.
        #expect(ending.status == .won && ending.playedMillis == Int(t - start), "\(ending)")
        #expect(view.elapsedMillis == ending.playedMillis)
        await f.cleanup()
    }
}
