import Foundation
import SweeperControl
import SweeperCrypto
import Testing
@testable import SweeperDaemon

/// In a race every answer about a move speaks of the mover's own board:
/// a racer's reveal answers with their cells, status and progress, never
/// another racer's.
@Suite struct RaceAnswerTests {
    @Test func aRacersRevealAnswersWithTheirOwnBoard() async throws {
        let f = try await DaemonFixture()
        // Ann, hosted here (the fixture serves no web board, so no pairing comes with her).
        _ = await f.router.reply(to: Data(#"{"id":1,"command":"player-add","name":"Ann"}"#.utf8))
        let listed: Commands.PlayerList.Result = try await result(f.router, #"{"id":1,"command":"player-list"}"#)
        let annID = try #require(listed.players.first { $0.name == "Ann" }).peer
        let ann = try #require(f.router.acting(as: annID))
        let race: GameView = try await result(f.router, #"{"id":2,"command":"new","preset":"expert","race":true,"players":["Ann"]}"#)
        // Ann opens cells of her own board until one opens more than itself.
        let board = try await show(ann, race.id)
        var answer: Commands.MoveResult?
        search: for (y, row) in board.board.enumerated() {
            for (x, c) in row.enumerated() where c == "#" {
                let moved: Commands.MoveResult = try await result(ann, #"{"id":3,"command":"reveal","game":"\#(race.id)","x":\#(x),"y":\#(y)}"#)
                answer = moved
                break search
            }
        }
        let moved = try #require(answer)
        let hers = try await show(ann, race.id)
        let mine = try await show(f.router, race.id)
        #expect(moved.status == hers.status && moved.progress == hers.progress, "answered \(moved.status) \(moved.progress), her board \(hers.status) \(hers.progress)")
        #expect(hers.progress != mine.progress || hers.status != mine.status, "the two boards did not differ: the test shows nothing")
        for cell in moved.changed { #expect(Array(hers.board[cell.y])[cell.x] != "#", "a cell the answer names is covered on her board") }
        await f.cleanup()
    }
}
