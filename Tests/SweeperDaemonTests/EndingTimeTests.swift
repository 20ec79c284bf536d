import Foundation
import SweeperControl
import Testing
@testable import SweeperDaemon

/// A lost game says one time: when the mine was tripped is when the game
/// ended, after its played time, however long ago the game was made.
@Suite struct EndingTimeTests {
    @Test func aLossSaysOneTime() async throws {
        let f = try await DaemonFixture()
        let game: GameView = try await result(f.router, #"{"id":1,"command":"new","preset":"beginner"}"#)
        // Made, then left a while: the wall clock runs, the played time does not.
        try await Task.sleep(for: .milliseconds(2_100))
        let cheat: GameView = try await result(f.router, #"{"id":2,"command":"show","game":"\#(game.id)","cheat":true}"#)
        let layout = try #require(cheat.mineLayout)
        let mine = try #require(layout.enumerated().lazy.compactMap { y, row in Array(row).firstIndex(of: "*").map { (x: $0, y: y) } }.first)
        let _: Commands.MoveResult = try await result(f.router, #"{"id":3,"command":"reveal","game":"\#(game.id)","x":\#(mine.x),"y":\#(mine.y)}"#)
        let lost: GameView = try await result(f.router, #"{"id":4,"command":"show","game":"\#(game.id)"}"#)
        let ending = try #require(lost.ending)
        #expect(ending.status == .lost && ending.trippedAfterSeconds == ending.seconds, "lost in \(ending.seconds) s, tripped after \(ending.trippedAfterSeconds ?? -1) s")
        let text = ControlFormatting.ending(ending).joined(separator: "\n")
        #expect(text.contains("Lost in \(ControlFormatting.duration(ending.seconds))") && !text.contains(" after "), "\(text)")
        await f.cleanup()
    }
}
