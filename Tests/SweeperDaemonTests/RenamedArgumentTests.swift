import Foundation
import SweeperControl
import Testing

@testable import SweeperDaemon

/// Version 3 of the control protocol named `show`'s peek at the mines
/// `peek` (version 2 said `cheat`): the new name works, and the old one is
/// refused by name rather than quietly answered without the mines.
@Suite struct RenamedArgumentTests {
    @Test func peekShowsTheMinesAndCheatIsRefusedByName() async throws {
        let f = try await DaemonFixture()
        let game: GameView = try await result(f.router, #"{"id":1,"command":"new","preset":"beginner","seed":5}"#)
        #expect(!game.assisted)

        guard case .answer(let data) = await f.router.reply(to: Data(#"{"id":2,"command":"show","game":"\#(game.game)","cheat":true}"#.utf8)) else {
            Issue.record("no answer")
            return
        }
        let refusal = String(decoding: data, as: UTF8.self)
        #expect(refusal.contains("bad-arguments") && refusal.contains(#"\"peek\""#), "\(refusal)")
        let untouched: GameView = try await result(f.router, #"{"id":3,"command":"show","game":"\#(game.game)"}"#)
        #expect(!untouched.assisted && untouched.mineLayout == nil, "a refused request changed the game")

        let peeked: GameView = try await result(f.router, #"{"id":4,"command":"show","game":"\#(game.game)","peek":true}"#)
        #expect(peeked.assisted)
        #expect(peeked.mineLayout?.joined().filter { $0 == "*" }.count == 10)
        await f.cleanup()
    }
}
