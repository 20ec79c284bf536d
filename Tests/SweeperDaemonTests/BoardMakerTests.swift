import Foundation
import SweeperControl
import SweeperGame
import Testing

@testable import SweeperDaemon

/// A new game's board is made off the daemon's loop, within a time limit:
/// a board that takes long (a no-guess 500×500 at 40% mines: over 10 s in
/// a release build for each of three seeds, and it may take hours) holds
/// up no other request, and ends with a clear error.
@Suite struct BoardMakerTests {
    /// The answer line to `line`.
    static func answer(_ router: ControlRouter, _ line: String) async -> String {
        guard case .answer(let data) = await router.reply(to: Data(line.utf8)) else { return "no answer" }
        return String(decoding: data, as: UTF8.self)
    }

    @Test func aBoardThatTakesLongHoldsUpNothingAndEndsAtTheLimit() async throws {
        let clock = ManualClock()
        let d = try await DaemonFixture(clock: clock)
        defer { Task { await d.cleanup() } }
        let router = d.router
        let asked = Task { await Self.answer(router, #"{"id":1,"command":"new","width":500,"height":500,"mines":100000,"noGuess":true,"seed":1}"#) }
        // Meanwhile the daemon answers, and makes other games.
        for _ in 0..<20 {
            let status = await Self.answer(router, #"{"id":2,"command":"status"}"#)
            #expect(status.contains(#""ok":true"#))
        }
        let small = await Self.answer(router, #"{"id":3,"command":"new","preset":"beginner"}"#)
        #expect(small.contains(#""ok":true"#), "\(small)")
        // Past the limit on the daemon's clock, the dense board gives up, saying why.
        clock.advance(by: .seconds(BoardMaker.timeLimit + 1))
        let answer = await asked.value
        #expect(answer.contains("generation-failed") && answer.contains("in the time given"), "\(answer)")
    }

    @Test func twoBoardsAreMadeAtOnceAndAThirdIsRefusedSayingSo() async throws {
        let clock = ManualClock()
        let maker = BoardMaker(clock: clock)
        let dense = try GameParameters(width: 500, height: 500, mines: 100_000, noGuess: true)
        let first = Task { try await maker.board(dense, seed: 1) }
        let second = Task { try await maker.board(dense, seed: 2) }
        for _ in 0..<500 where maker.underWay < 2 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(maker.underWay == 2)
        // A third is refused while both are made, saying why.
        await #expect {
            _ = try await maker.board(try GameParameters(preset: .beginner), seed: 3)
        } throws: { error in
            "\(error)".contains("boards are being made already")
        }
        clock.advance(by: .seconds(BoardMaker.timeLimit + 1))
        for task in [first, second] {
            await #expect {
                _ = try await task.value
            } throws: { error in
                "\(error)".contains("in the time given")
            }
        }
        // Once they gave up, a board is made again.
        #expect(try await maker.board(try GameParameters(preset: .beginner), seed: 3).parameters.mines == 10)
    }

    @Test func theGeneratorStopsWhenToldTo() throws {
        let parameters = try GameParameters(width: 30, height: 30, mines: 800, noGuess: true)
        var asked = 0
        do {
            _ = try Generator.generate(parameters, seed: 1) {
                asked += 1
                return asked > 3
            }
            Issue.record("a board of 800 mines in 900 cells was made without a guess")
        } catch .stopped {
            #expect(asked == 4, "the generator went on after it was told to stop")
        } catch {
            Issue.record("gave up otherwise: \(error)")
        }
    }
}
