import Foundation
import SweeperControl
import SweeperSync
import Testing

@testable import SweeperDaemon

/// Every board of a day has the same mines: looking at another player's
/// board of today before one's own has ended is asked first, and marks
/// one's own board for everyone; making a board (as `daily --json` does)
/// enters nobody in the day's table until they move.
@Suite struct DailyLookTests {
    /// Reveals one covered safe cell of `game` as `router`'s player (with
    /// `flag`, flags a covered cell instead: a move too).
    static func moveIn(_ f: DaemonFixture, _ router: ControlRouter, _ game: GameView, flag: Bool = false) async throws {
        let id = try #require(GameID(hex: game.game))
        let layout = try #require(await f.service.replica.state(of: id)?.genesis.layout)
        let view = try await show(router, game.game)
        let cell = try #require((0..<game.width * game.height).first { !layout.isMine($0) && Array(view.board[$0 / game.width])[$0 % game.width] == "#" })
        let command = flag ? "flag" : "reveal"
        let _: Commands.MoveResult = try await result(
            router, #"{"id":5,"command":"\#(command)","game":"\#(game.game)","x":\#(cell % game.width),"y":\#(cell / game.width)}"#)
    }

    @Test func lookingAtAnothersBoardOfTodayIsAskedAndMarksOnesOwn() async throws {
        let f = try await DaemonFixture()
        let hosted = try await f.host(["Max", "Sam"])
        let (max, sam) = (try #require(hosted["Max"]).router, try #require(hosted["Sam"]).router)

        // Max plays his board of today: he is in the table.
        let maxs: GameView = try await result(max, #"{"id":2,"command":"daily"}"#)
        try await Self.moveIn(f, max, maxs)
        // Ada makes hers (as `daily --json` does) without moving: she is not in the table.
        let adas: GameView = try await result(f.router, #"{"id":3,"command":"daily"}"#)
        #expect(adas.game != maxs.game && adas.daily != nil, "her own board of the day, marked as one")
        let table: Commands.Scores.Result = try await result(f.router, #"{"id":4,"command":"scores","daily":true}"#)
        #expect(table.daily?.results.map(\.name) == ["Max"], "\(String(describing: table.daily?.results))")

        // Ada shows Max's board: refused, naming whose and why; hers stays unmarked.
        do {
            let _: GameView = try await result(f.router, #"{"id":6,"command":"show","game":"\#(maxs.game)"}"#)
            Issue.record("Max's board of the day was shown without asking")
        } catch let error as ControlError {
            #expect(error.code == "makes-practice" && error.message.hasPrefix("that is Max's board of the day"), "\(error)")
        }
        #expect(try await show(f.router, adas.game).assisted == false)
        // So is a replay of it.
        await #expect(throws: ControlError.self) {
            let _: Commands.Replay.Result = try await result(f.router, #"{"id":7,"command":"replay","game":"\#(maxs.game)"}"#)
        }
        // With look: shown, and hers is marked as having looked at the mines, not ranked.
        let looked: GameView = try await result(f.router, #"{"id":8,"command":"show","game":"\#(maxs.game)","look":true}"#)
        #expect(looked.game == maxs.game)
        let hers = try await show(f.router, adas.game)
        #expect(hers.assisted && hers.peeks?.map(\.name) == ["ada"], "\(String(describing: hers.peeks))")
        // Marked once: later looks are not asked again.
        let again: GameView = try await result(f.router, #"{"id":9,"command":"show","game":"\#(maxs.game)"}"#)
        #expect(again.game == maxs.game)

        // Sam has no board of today yet: looking makes his, marked, and enters him nowhere.
        let samLooked: GameView = try await result(sam, #"{"id":10,"command":"show","game":"\#(maxs.game)","look":true}"#)
        #expect(samLooked.game == maxs.game)
        let samsOwn: GameView = try await result(sam, #"{"id":11,"command":"daily"}"#)
        #expect(samsOwn.assisted && samsOwn.game != maxs.game)
        let after: Commands.Scores.Result = try await result(f.router, #"{"id":12,"command":"scores","daily":true}"#)
        #expect(after.daily?.results.map(\.name) == ["Max"])
        // Once Sam moves (a flag is a move), he is in the table, assisted for all to see.
        try await Self.moveIn(f, sam, samsOwn, flag: true)
        let entered: Commands.Scores.Result = try await result(f.router, #"{"id":13,"command":"scores","daily":true}"#)
        #expect(entered.daily?.results.first { $0.name == "Sam" }?.assisted == true)

        // Max's own board, and a board of another day, are never asked about.
        let _: GameView = try await result(max, #"{"id":14,"command":"show","game":"\#(maxs.game)"}"#)
        await f.cleanup()
    }
}
