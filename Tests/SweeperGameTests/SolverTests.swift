import PropertyBased
import Testing

@testable import SweeperGame

/// Every layout consistent with what `board` shows: the board's mine total,
/// no mine on a revealed cell, and every revealed number matched.
/// Enumerated by backtracking over the covered cells.
func consistentLayouts(_ board: Board) -> [[Bool]] {
    let g = board.geometry
    let covered = (0..<g.cellCount).filter { !board.isRevealed($0) }
    var mine = [Bool](repeating: false, count: g.cellCount)
    var results: [[Bool]] = []
    // The revealed numbers each covered cell touches, for pruning.
    func fits(final: Bool) -> Bool {
        for i in 0..<g.cellCount where board.isRevealed(i) {
            var placed = 0
            var open = 0
            for nb in g.neighbors(of: i) where !board.isRevealed(nb) {
                if mine[nb] { placed += 1 } else { open += 1 }
            }
            let need = board.layout.adjacentMines(i)
            if placed > need { return false }
            if final && placed != need { return false }
        }
        return true
    }
    func place(_ k: Int, _ left: Int) {
        if left == 0 {
            if fits(final: true) { results.append(mine) }
            return
        }
        guard k < covered.count, covered.count - k >= left else { return }
        mine[covered[k]] = true
        if fits(final: false) { place(k + 1, left - 1) }
        mine[covered[k]] = false
        place(k + 1, left)
    }
    place(0, board.layout.mineCount)
    return results
}

@Suite struct SolverTests {
    @Test func solverIsSoundAgainstBruteForceEnumeration() async {
        // Small boards, random layouts (not no-guess), and a player who only
        // ever takes the solver's hints: each hinted cell must be safe in
        // every layout consistent with what the board shows.
        await propertyCheck(count: 120, input: Gen.int(in: 3...5), Gen.int(in: 3...5), Gen.int(in: 1...6), Gen.uint64()) { w, h, mines, seed in
            let p = try GameParameters(width: w, height: h, mines: min(mines, GameParameters.maximumMines(width: w, height: h)))
            let generated = try Generator.generate(p, seed: seed)
            var board = Board(layout: generated.layout, start: generated.start)
            var steps = 0
            while board.status == .playing, let cell = Solver.hint(for: board), steps < 30 {
                #expect(!board.isRevealed(cell))
                let layouts = consistentLayouts(board)
                #expect(!layouts.isEmpty)
                #expect(layouts.allSatisfy { !$0[cell] }, "hint \(cell) can be a mine: w=\(w) h=\(h) mines=\(p.mines) seed=\(seed)")
                board.uncover(cell)
                steps += 1
            }
            #expect(board.status != .lost)
        }
    }

    @Test func subsetDeductionClearsACorner() {
        //  0 0 0     the opening floods rows 0 and 1; {a,b,c} holds 2 and
        //  1 2 1     {a,b} holds 1, so c is a mine, then b is safe and a a mine
        //  a b c
        let l = layout(["...", "...", "*.*"])
        #expect(Solver.solve(l, start: 0) == SolveResult(solvable: true, clearedSafeCells: 7, safeCells: 7))
    }

    @Test func mineCountSettlesCellsOutsideEveryConstraint() {
        //  0 1 ? ?       {(2,0),(2,1)} holds the only mine, so the total count
        //  0 1 ? ?       proves (3,0) and (3,1) safe; then a true 50/50 remains
        let l = layout(["..*.", "...."])
        #expect(Solver.solve(l, start: 0) == SolveResult(solvable: false, clearedSafeCells: 6, safeCells: 7))
    }

    @Test func aTrueFiftyFiftyNeedsAGuess() {
        let pair = layout(["*.", ".*"])
        #expect(Solver.solve(pair, start: 1) == SolveResult(solvable: false, clearedSafeCells: 1, safeCells: 2))
    }

    @Test func hintFindsASafeCellOrSaysNone() {
        let l = layout(["*...", "....", "...."])
        let board = Board(layout: l, start: at(l, 3, 2))
        // The opening clears every safe cell: the game is won, no hint.
        #expect(board.status == .won)
        #expect(Solver.hint(for: board) == nil)
        let l2 = layout(["*.*.", "....", "...."])
        let b2 = Board(layout: l2, start: at(l2, 0, 2))
        // Rows 1 and 2 are open; (1,0) and (3,0) can be proven safe, and
        // the hint must be one of them.
        let hint = Solver.hint(for: b2)
        #expect(hint == at(l2, 1, 0) || hint == at(l2, 3, 0))
    }
}
