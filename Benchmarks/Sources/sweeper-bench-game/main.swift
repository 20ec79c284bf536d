// sweeper-bench-game: in-process figures for the game engine, printed, not
// asserted. Scripts/bench-boards.sh runs it beside Tatham's Mines.
import Foundation
import SweeperGame

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }

// Flood: a 500×500 board with one mine, opened from the far corner.
let geometry = BoardGeometry(width: 500, height: 500)
let oneMine = try MineLayout(geometry: geometry, mineIndices: [geometry.cellCount - 1])
var floodTimes: [Double] = []
for _ in 0..<15 {
    floodTimes.append(
        seconds {
            var board = Board(layout: oneMine)
            let opened = board.uncover(0).revealed.count
            precondition(opened == geometry.cellCount - 1, "flood must open every safe cell")
        })
}
print(String(format: "flood 500x500 (one mine): median %.2f ms over %d runs", median(floodTimes) * 1000, floodTimes.count))
print(String(format: "result: boards.flood_500x500_ms %.3f", median(floodTimes) * 1000))

// No-guess generation in process, per board.
for (w, h, m, count) in [(9, 9, 10, 200), (16, 16, 40, 200), (30, 16, 99, 200), (100, 100, 2000, 20)] {
    let p = try GameParameters(width: w, height: h, mines: m, noGuess: true)
    var attempts = 0
    let t = try seconds {
        for k in 0..<count { attempts += try Generator.generate(p, seed: UInt64(k)).attempts }
    }
    print(
        String(
            format: "no-guess %dx%d/%d: %.3f ms per board (%d boards, %.2f layouts tried per board)", w, h, m, t / Double(count) * 1000, count,
            Double(attempts) / Double(count)))
}

// The boards `sweeper board generate --no-guess --width 30 --height 16
// --mines 99 --count 100 --seed 1` makes (seeds 1 to 100, start in the
// middle), in process: what that command spends making them, without the
// program's start and its command line. Best of 5.
let cliExpert = try GameParameters(width: 30, height: 16, mines: 99, noGuess: true)
var cliBest = Double.infinity
for _ in 0..<5 {
    cliBest = min(cliBest, try seconds { for k in 1...100 { _ = try Generator.generate(cliExpert, seed: UInt64(k)) } })
}
print(String(format: "no-guess 30x16/99, seeds 1 to 100: %.2f ms for the 100 boards (best of 5)", cliBest * 1000))
print(String(format: "result: boards.inprocess.30x16n99_ms %.3f", cliBest * 1000))

// Solving: the verdict alone on expert boards.
let expert = try GameParameters(preset: .expert, noGuess: true)
let boards = try (0..<200).map { try Generator.generate(expert, seed: UInt64($0)) }
let solveTime = seconds { for b in boards { _ = Solver.solve(b.layout, start: b.start) } }
print(String(format: "solve expert: %.1f µs per board", solveTime / Double(boards.count) * 1e6))
