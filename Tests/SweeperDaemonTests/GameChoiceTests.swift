import Foundation
import SweeperControl
import SweeperStore
import SweeperSync
import Testing

@testable import SweeperDaemon

/// `forget`, `follow` and `sync` through the control router, on a daemon
/// with its real store.
@Suite struct GameChoiceTests {
    @Test func aForgottenGameLeavesTheListsAndTheStoreAndFollowBringsTheChoiceBack() async throws {
        let f = try await DaemonFixture()
        let kept: GameView = try await result(f.router, #"{"id":1,"command":"new","preset":"beginner","seed":3}"#)
        let gone: GameView = try await result(f.router, #"{"id":2,"command":"new","preset":"beginner","seed":4}"#)
        _ = try await result(f.router, #"{"id":3,"command":"flag","game":"\#(gone.game)","x":0,"y":0}"#, as: Commands.MoveResult.self)
        // The genesis, the seeded op (the seed was chosen) and the flag.
        #expect(try f.store.ops(gameID: gone.game).count == 3)

        let forgot: Commands.GameChoiceResult = try await result(f.router, #"{"id":4,"command":"forget","game":"\#(gone.game.prefix(10))"}"#)
        #expect(forgot == Commands.GameChoiceResult(game: gone.game, held: false, ops: 3))
        let games: Commands.Games.Result = try await result(f.router, #"{"id":5,"command":"games","available":true}"#)
        #expect(games.games.map(\.game) == [kept.game])
        #expect(games.available == [], "no peer is linked")
        #expect(try f.store.ops(gameID: gone.game).isEmpty && f.store.game(id: gone.game) == nil)
        #expect(try f.store.ops(gameID: kept.game).count == 2)
        await #expect(throws: ControlError.self) { try await show(f.router, gone.game) }
        // It is no longer taken from peers; the other one is.
        let interest = await f.service.interest
        #expect(!interest.contains(try #require(GameID(hex: gone.game))))
        #expect(interest.contains(try #require(GameID(hex: kept.game))))
        let choices: Commands.Sync.Result = try await result(f.router, #"{"id":6,"command":"sync"}"#)
        #expect(choices == Commands.Sync.Result(mode: .all, followedGames: [], forgottenGames: [gone.game]))

        // Forgetting what is not here says so.
        await #expect(throws: ControlError.self) {
            let _: Commands.GameChoiceResult = try await result(f.router, #"{"id":7,"command":"forget","game":"\#(gone.game)"}"#)
        }

        // `mine` takes the games held here only; following the forgotten one takes it again.
        let mine: Commands.Sync.Result = try await result(f.router, #"{"id":8,"command":"sync","mode":"mine"}"#)
        #expect(mine.mode == .mine)
        #expect(await f.service.interest == .only([try #require(GameID(hex: kept.game))]))
        let followed: Commands.GameChoiceResult = try await result(f.router, #"{"id":9,"command":"follow","game":"\#(gone.game.prefix(6))"}"#)
        #expect(followed == Commands.GameChoiceResult(game: gone.game, held: false, ops: 0))
        #expect(await f.service.interest == .only([try #require(GameID(hex: kept.game)), try #require(GameID(hex: gone.game))]))
        #expect(try f.store.gameChoices() == [gone.game: true])
        #expect(try f.store.setting(Store.syncModeSetting) == "mine")

        // A bad mode is refused, saying what is allowed.
        guard case .answer(let data) = await f.router.reply(to: Data(#"{"id":10,"command":"sync","mode":"some"}"#.utf8)) else {
            Issue.record("no answer")
            return
        }
        #expect(String(decoding: data, as: UTF8.self).contains("bad-arguments"))
        await f.cleanup()
    }
}
