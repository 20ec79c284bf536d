import Foundation
import SweeperControl
import SweeperCrypto
import SweeperSync
import Testing

@testable import SweeperDaemon

/// In a race every answer about a move speaks of the mover's own board:
/// a racer's reveal answers with their cells, status and progress, never
/// another racer's.
@Suite struct RaceAnswerTests {
    @Test func aRacersRevealAnswersWithTheirOwnBoard() async throws {
        let f = try await DaemonFixture()
        // Ann, hosted here.
        let ann = try #require(try await f.host(["Ann"])["Ann"]).router
        let race: GameView = try await result(f.router, #"{"id":2,"command":"new","preset":"expert","race":true,"players":["Ann"]}"#)
        // Ann opens cells of her own board until one opens more than itself.
        let board = try await show(ann, race.game)
        var answer: Commands.MoveResult?
        search: for (y, row) in board.board.enumerated() {
            for (x, c) in row.enumerated() where c == "#" {
                let moved: Commands.MoveResult = try await result(ann, #"{"id":3,"command":"reveal","game":"\#(race.game)","x":\#(x),"y":\#(y)}"#)
                answer = moved
                break search
            }
        }
        let moved = try #require(answer)
        let hers = try await show(ann, race.game)
        let mine = try await show(f.router, race.game)
        #expect(
            moved.status == hers.status && moved.progress == hers.progress,
            "answered \(moved.status) \(moved.progress), her board \(hers.status) \(hers.progress)")
        #expect(hers.progress != mine.progress || hers.status != mine.status, "the two boards did not differ: the test shows nothing")
        for cell in moved.changed { #expect(Array(hers.board[cell.y])[cell.x] != "#", "a cell the answer names is covered on her board") }
        await f.cleanup()
    }
}

/// A spectator's hint is refused: nothing could show it was given.
@Suite struct SpectatorHintTests {
    @Test func aPlayerWhoWatchesIsRefusedAHint() async throws {
        let f = try await DaemonFixture()
        let hosted = try await f.host(["Ann", "Bob"])
        let (ann, bob) = (try #require(hosted["Ann"]).router, try #require(hosted["Bob"]).router)
        // Only Ann (and this device) may move: Bob watches. A no-guess board,
        // so a safe cell can always be proven from the opening.
        let game: GameView = try await result(f.router, #"{"id":2,"command":"new","preset":"beginner","noGuess":true,"players":["Ann"]}"#)
        #expect(try await show(bob, game.game).watching == true)
        await #expect(throws: ControlError.self) {
            let _: Commands.Hint.Result = try await result(bob, #"{"id":3,"command":"hint","game":"\#(game.game)"}"#)
        }
        #expect(try await show(f.router, game.game).assisted == false)
        // Ann, a player, is given one, and it is recorded.
        let given: Commands.Hint.Result = try await result(ann, #"{"id":4,"command":"hint","game":"\#(game.game)"}"#)
        #expect(given.x != nil)
        let after = try await show(f.router, game.game)
        #expect(after.assisted && after.hints?.first?.name == "Ann", "\(String(describing: after.hints))")
        await f.cleanup()
    }
}

/// A plain race enrols the members here, not every member; and a race
/// whose absent racers never moved ends once the others have.
@Suite struct RaceEnrolmentTests {
    @Test func aPlainRaceEnrolsThoseHereAndEndsWithoutThoseWhoNeverStarted() async throws {
        let f = try await DaemonFixture()
        // Bob is a member, away (no link); Ann is a player hosted here.
        let bob = SigningIdentity()
        try await f.admit(bob.peerID)
        let annID = try #require(try await f.host(["Ann"])["Ann"]).id
        let race: GameView = try await result(f.router, #"{"id":2,"command":"new","preset":"beginner","race":true}"#)
        let racers = Set(race.race?.racers.map(\.peer) ?? [])
        let own = f.core.router.signer.peerID.description
        #expect(racers == [own, annID], "racers \(racers); Bob, away, should not race")

        // This player clears the board; Ann never moves: the race is over (she could no longer win), Ann did not start.
        let id = try #require(GameID(hex: race.game))
        let layout = try #require(await f.service.replica.state(of: id)?.genesis.layout)
        var after = try await show(f.router, race.game)
        for cell in 0..<81 where !layout.isMine(cell) && after.status == .playing && Array(after.board[cell / 9])[cell % 9] == "#" {
            let _: Commands.MoveResult = try await result(f.router, #"{"id":3,"command":"reveal","game":"\#(race.game)","x":\#(cell % 9),"y":\#(cell / 9)}"#)
            after = try await show(f.router, race.game)
        }
        #expect(after.status == .won)
        let table = try #require(after.race)
        #expect(table.over == true && table.winnerName == "ada", "\(table)")
        #expect(table.racers.first { $0.peer == annID }?.didNotStart == true && table.racers.first { $0.peer == own }?.didNotStart == nil)
        #expect(ControlFormatting.race(table).contains { $0.contains("did not start") })
        await f.cleanup()
    }
}
