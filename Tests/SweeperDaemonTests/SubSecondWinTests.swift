import Foundation
import SweeperControl
import SweeperSync
import Testing

@testable import SweeperDaemon

/// A win in under a second keeps its real time: it ranks by milliseconds,
/// with a 3BV/s, and every table shows it to the hundredth.
@Suite struct SubSecondWinTests {
    @Test func aWinInUnderASecondRanksWithItsRealTime() async throws {
        let clock = ManualClock()
        let f = try await DaemonFixture(clock: clock)
        let game: GameView = try await result(f.router, #"{"id":1,"command":"new","preset":"beginner"}"#)
        let id = try #require(GameID(hex: game.game))
        let layout = try #require(await f.service.replica.state(of: id)?.genesis.layout)
        var view = game
        var moves = 0
        // Every safe cell still hidden, revealed 20 ms apart by the game's clock: a fast player's win.
        search: for y in 0..<game.height {
            for x in 0..<game.width where !layout.isMine(y * game.width + x) && Array(view.board[y])[x] == "#" {
                clock.advance(by: .milliseconds(20))
                let _: Commands.MoveResult = try await result(f.router, #"{"id":2,"command":"reveal","game":"\#(game.game)","x":\#(x),"y":\#(y)}"#)
                moves += 1
                view = try await show(f.router, game.game)
                if view.status != .playing { break search }
            }
        }
        #expect(view.status == .won && moves > 1)
        let ending = try #require(view.ending)
        let millis = ending.playedMillis
        // Counted from the first move to the win, to the millisecond: under a second, yet not nothing.
        #expect(millis / 1000 == 0 && millis > 0 && millis < 1000, "won in \(millis) ms after \(moves) moves")
        let rate = try #require(ending.threeBVPerSecond, "a sub-second win has its 3BV/s")
        #expect(abs(rate - Double(ending.solvedThreeBV) * 1000 / Double(millis)) < 0.001)
        #expect(ControlFormatting.ending(ending)[0].hasPrefix("Won in 0:00:00.\(String(cFormat: "%02ld", millis / 10))"), "\(ControlFormatting.ending(ending))")

        let scores: Commands.Scores.Result = try await result(f.router, #"{"id":3,"command":"scores"}"#)
        let best = try #require(scores.classes?.first?.best.first)
        #expect(best.game == game.game && best.playedMillis == millis && best.threeBVPerSecond == rate, "\(best)")
        #expect(ControlFormatting.scores(scores).contains(ControlFormatting.duration(millis: millis)))
        await f.cleanup()
    }
}
