import Foundation
import SweeperControl
import SweeperGame
import SweeperSync
import Testing
@testable import SweeperDaemon

/// Best times: of games won by playing, unassisted.
@Suite struct ScoresTests {
    @Test func aGameItsOpeningWonIsNoBestTimeAndAPlayedWinIs() async throws {
        let f = try await DaemonFixture()
        // One mine on a 5×5 board: the free opening floods every safe cell.
        let opened: GameView = try await result(f.router, #"{"id":1,"command":"new","width":5,"height":5,"mines":1,"seed":3}"#)
        #expect(opened.status == .won)
        let none: Commands.Scores.Result = try await result(f.router, #"{"id":2,"command":"scores"}"#)
        #expect(none.scores.isEmpty, "\(none.scores)")

        // A beginner game won by revealing every safe cell counts.
        let game: GameView = try await result(f.router, #"{"id":3,"command":"new","preset":"beginner","seed":11}"#)
        let id = try #require(GameID(hex: game.id))
        let layout = try #require(await f.service.replica.state(of: id)?.genesis.layout)
        var view = game
        for y in 0..<game.height {
            for x in 0..<game.width where !layout.isMine(y * game.width + x) && view.board[y][view.board[y].index(view.board[y].startIndex, offsetBy: x)] == "#" {
                let move: Commands.MoveResult = try await result(f.router, #"{"id":4,"command":"reveal","game":"\#(game.id)","x":\#(x),"y":\#(y)}"#)
                #expect(move.status != .lost)
                view = try await show(f.router, game.id)
            }
        }
        #expect(view.status == .won)
        // After a win every mine shows flagged.
        let shown = view.board.joined()
        #expect(!shown.contains("*") && shown.filter { $0 == "F" }.count == game.mines, "\(view.board)")
        let best: Commands.Scores.Result = try await result(f.router, #"{"id":5,"command":"scores"}"#)
        #expect(best.scores.map(\.game) == [game.id])
        // Its start and its end: the end comes with the win, and no earlier than the start.
        let won = try #require(best.scores.first)
        #expect(won.ended.map { $0 >= won.date } == true, "\(won)")
        #expect(view.created == won.date && view.ended == won.ended)
        let listed: Commands.Games.Result = try await result(f.router, #"{"id":6,"command":"games"}"#)
        #expect(listed.games.first { $0.id == game.id }?.ended == won.ended)
        #expect(listed.games.first { $0.id == opened.id }?.ended != nil)
        await f.cleanup()
    }
}
