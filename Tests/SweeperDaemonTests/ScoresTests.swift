import Foundation
import SweeperControl
import SweeperGame
import SweeperSync
import Testing

@testable import SweeperDaemon

/// Records: ranked wins per class, help and practice apart, the ending.
@Suite struct ScoresTests {
    /// Reveals every safe cell of `game`, reading the layout from the
    /// daemon's replica (as anyone holding the game could); with `hint`,
    /// asks for a hint before each move, as a player leaning on them would.
    static func win(_ f: DaemonFixture, _ game: GameView, hint: Bool = false) async throws -> GameView {
        let id = try #require(GameID(hex: game.game))
        let layout = try #require(await f.service.replica.state(of: id)?.genesis.layout)
        var view = game
        for y in 0..<game.height {
            for x in 0..<game.width where !layout.isMine(y * game.width + x) && view.board[y][view.board[y].index(view.board[y].startIndex, offsetBy: x)] == "#"
            {
                if hint { _ = try await result(f.router, #"{"id":9,"command":"hint","game":"\#(game.game)"}"#, as: Commands.Hint.Result.self) }
                let move: Commands.MoveResult = try await result(f.router, #"{"id":4,"command":"reveal","game":"\#(game.game)","x":\#(x),"y":\#(y)}"#)
                #expect(move.status != .lost)
                view = try await show(f.router, game.game)
                if view.status != .playing { return view }
            }
        }
        return view
    }

    @Test func rankedWinsHelpAndPracticeAreToldApart() async throws {
        let f = try await DaemonFixture()
        // One mine on a 5×5 board: the free opening floods every safe cell. Won, but not played.
        let opened: GameView = try await result(f.router, #"{"id":1,"command":"new","width":5,"height":5,"mines":1,"seed":3}"#)
        #expect(opened.status == .won && opened.ending?.ranked == false)
        let none: Commands.Scores.Result = try await result(f.router, #"{"id":2,"command":"scores"}"#)
        #expect(none.scores.isEmpty && none.classes == [], "\(none)")

        // A beginner game won by revealing every safe cell: ranked, a record.
        let game: GameView = try await result(f.router, #"{"id":3,"command":"new","preset":"beginner"}"#)
        #expect(game.seeded == nil)
        let won = try await Self.win(f, game)
        #expect(won.status == .won)
        // After a win every mine shows flagged, and the flag count says so.
        let shown = won.board.joined()
        #expect(!shown.contains("*") && shown.filter { $0 == "F" }.count == game.mines && won.flags == game.mines, "\(won.board)")
        let ending = try #require(won.ending)
        #expect(ending.ranked && ending.record?.hasPrefix("Best Beginner 9×9 (10), classic time: ") == true, "\(ending)")
        #expect(ending.solvedThreeBV == ending.threeBV && ending.threeBV > 0 && ending.clicks > 1)
        #expect(ending.parts.count == 1 && ending.parts[0].threeBV > 0 && ending.parts[0].cellsOpened > 0)
        #expect(ControlFormatting.show(won).contains("New record! Best Beginner"))

        // The same size with hints: assisted, listed apart with who asked how often.
        let helped: GameView = try await result(f.router, #"{"id":5,"command":"new","preset":"beginner"}"#)
        let helpedWon = try await Self.win(f, helped, hint: true)
        #expect(helpedWon.status == .won && helpedWon.assisted && (helpedWon.hints?.first?.hintCount ?? 0) > 0)
        #expect(helpedWon.ending?.ranked == false && helpedWon.ending?.notRanked?.contains("asked for") == true)
        // A chosen seed: practice.
        let seeded: GameView = try await result(f.router, #"{"id":6,"command":"new","preset":"beginner","seed":11}"#)
        #expect(seeded.seeded == true)
        let practised = try await Self.win(f, seeded)
        #expect(practised.ending?.notRanked?.contains("practice") == true)
        // A no-guess board is a class of its own.
        let noGuess: GameView = try await result(f.router, #"{"id":7,"command":"new","preset":"beginner","noGuess":true}"#)
        _ = try await Self.win(f, noGuess)

        let scores: Commands.Scores.Result = try await result(f.router, #"{"id":8,"command":"scores","player":"ada"}"#)
        let classes = try #require(scores.classes)
        #expect(classes.map(\.name) == ["Beginner 9×9 (10), classic", "Beginner 9×9 (10), no-guess"], "\(classes.map(\.name))")
        #expect(classes[0].best.map(\.game) == [game.game])
        #expect(scores.scores.map(\.game) == [game.game, noGuess.game])
        #expect(scores.assistedWins?.map(\.win.game) == [helped.game] && scores.assistedWins?.first?.hints.first?.name == "ada")
        #expect(scores.practice?.map(\.game) == [seeded.game])
        let record = try #require(scores.player)
        #expect(record.played == 4 && record.won == 4 && record.lost == 0 && record.records.count == 2)
        // Names are unique regardless of case: `ADA` is Ada, named as she names herself.
        let shouted: Commands.Scores.Result = try await result(f.router, #"{"id":8,"command":"scores","player":"ADA"}"#)
        #expect(shouted.player?.name == "ada" && shouted.player?.played == 4 && shouted.player?.records.count == 2)
        // An unknown player is a clear error naming who played.
        await #expect(throws: ControlError.self) {
            let _: Commands.Scores.Result = try await result(f.router, #"{"id":9,"command":"scores","player":"nobody"}"#)
        }
        let listed: Commands.Games.Result = try await result(f.router, #"{"id":10,"command":"games"}"#)
        // `games` says which board is no-guess and which is practice.
        #expect(listed.games.first { $0.game == noGuess.game }?.noGuess == true && listed.games.first { $0.game == game.game }?.noGuess == nil)
        #expect(listed.games.first { $0.game == seeded.game }?.seeded == true && listed.games.first { $0.game == game.game }?.seeded == nil)
        #expect(listed.games.allSatisfy { $0.day == nil })
        #expect(listed.games.first { $0.game == game.game }?.endedAt == won.endedAt)

        // After a restart every game sleeps: records, endings and the list
        // read them from the store, and say the same (to the millisecond:
        // the daemon signs its shares of time as it stops).
        f.core.play.stop()
        let restarted = try await DaemonFixture.daemon(store: f.store, directory: f.directory, loop: f.loop)
        #expect(await restarted.service.engine.circles[0].replica.games.isEmpty)
        let again: Commands.Scores.Result = try await result(restarted.router, #"{"id":11,"command":"scores","player":"ada"}"#)
        #expect(again == scores)
        let allWins: Commands.Scores.Result = try await result(restarted.router, #"{"id":12,"command":"scores"}"#)
        #expect(allWins.classes == scores.classes && allWins.assistedWins == scores.assistedWins && allWins.practice == scores.practice)
        #expect(try await show(restarted.router, game.game).ending == won.ending)
        let relisted: Commands.Games.Result = try await result(restarted.router, #"{"id":13,"command":"games"}"#)
        #expect(relisted.games == listed.games)
        await restarted.network.node.shutdown()
        await f.cleanup()
    }
}
