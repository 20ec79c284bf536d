import Testing

@testable import SweeperGame

/// The classic effect tables and the rules around them.
@Suite struct RulesTests {
    // A 4×3 board:   *...
    //                ..*.
    //                ....
    let field = layout(["*...", "..*.", "...."])

    @Test func numbersCountAdjacentMines() {
        #expect(field.adjacentMines(at(field, 1, 0)) == 2)
        #expect(field.adjacentMines(at(field, 1, 1)) == 2)
        #expect(field.adjacentMines(at(field, 3, 2)) == 1)
        #expect(field.adjacentMines(at(field, 0, 2)) == 0)
        #expect(field.mineCount == 2)
        #expect(field.safeCellCount == 10)
    }

    /// Counts read from the layout's bits agree with counting the
    /// neighbours one by one, on boards whose rows start anywhere in a
    /// word and cross words (widths around 64), at every edge, with mines
    /// on a quarter of the cells and on all but one.
    @Test func countsFromBitsAgreeWithNeighboursOneByOne() throws {
        var rng = BoardRandom(seed: 64)
        for (width, height) in [(2, 2), (3, 5), (63, 3), (64, 4), (65, 3), (127, 2), (500, 3)] {
            let geometry = BoardGeometry(width: width, height: height)
            for dense in [false, true] {
                let mines = (0..<geometry.cellCount).map { i in dense ? i != geometry.cellCount / 2 : rng.below(4) == 0 }
                let layout = MineLayout(geometry: geometry, isMine: mines)
                #expect(layout.mineCount == mines.filter { $0 }.count)
                for i in 0..<geometry.cellCount {
                    var count = 0
                    geometry.forEachNeighbor(of: i) { if mines[$0] { count += 1 } }
                    #expect(layout.adjacentMines(i) == count, "\(width)×\(height), cell \(i)")
                    #expect(layout.isMine(i) == mines[i])
                }
                #expect(try MineLayout(geometry: geometry, mineIndices: layout.mineIndices) == layout)
                var packed = [UInt8](repeating: 0, count: (geometry.cellCount + 7) / 8)
                for i in 0..<geometry.cellCount where mines[i] { packed[i >> 3] |= 1 << UInt8(i & 7) }
                #expect(layout.packedBits == packed)
            }
        }
    }

    /// Which cells are revealed reads the same while the board holds their
    /// indices and after it moves them to a bit a cell (past one cell in
    /// 48): cells revealed one by one, by floods and by chords, against a
    /// plain list of what was revealed, on boards both sides of a word.
    @Test func revealedCellsReadTheSameBeforeAndAfterTheBitmap() {
        var rng = BoardRandom(seed: 48)
        for (width, height) in [(9, 9), (30, 16), (65, 40), (200, 120)] {
            let geometry = BoardGeometry(width: width, height: height)
            let mines = (0..<geometry.cellCount).map { _ in rng.below(6) == 0 }
            let layout = MineLayout(geometry: geometry, isMine: mines)
            var board = Board(layout: layout)
            var reference = [Bool](repeating: false, count: geometry.cellCount)
            var sawSparse = false
            var revealedCount = 0
            for _ in 0..<geometry.cellCount {
                let c = rng.below(geometry.cellCount)
                // Replicated reveals go in whatever the status (after a loss too).
                let opened: [Int]
                if mines[c] || rng.below(3) == 0 {
                    opened = board.reveal(cells: [c])
                } else if reference[c] {
                    opened = board.chord(c).revealed
                } else {
                    opened = board.uncover(c).revealed
                }
                for o in opened {
                    #expect(!reference[o], "\(width)×\(height): cell \(o) revealed twice")
                    reference[o] = true
                    revealedCount += 1
                }
                if board.revealedBits.isEmpty { sawSparse = true }
                if board.revealedBits.isEmpty != (revealedCount * 48 <= geometry.cellCount) {
                    Issue.record("\(width)×\(height): \(revealedCount) cells revealed, bitmap \(!board.revealedBits.isEmpty)")
                }
            }
            for i in 0..<geometry.cellCount { #expect(board.isRevealed(i) == reference[i], "\(width)×\(height), cell \(i)") }
            #expect(board.revealedSafeCount == reference.indices.filter { reference[$0] && !mines[$0] }.count)
            #expect(sawSparse)
            #expect(!board.revealedBits.isEmpty)
        }
    }

    /// A cell's column, found by multiplying by the layout's reciprocal of
    /// the width, is the remainder on every board size up to 500 × 500: at
    /// each row's first and last cell, where a rounding error would show.
    @Test func columnsByReciprocalAreExactOnEveryBoardSize() {
        for width in 2...BoardGeometry.maximumSide {
            let layout = MineLayout(geometry: BoardGeometry(width: width, height: 2), isMine: [Bool](repeating: false, count: width * 2))
            let limit = BoardGeometry.maximumSide * BoardGeometry.maximumSide
            var row = 0
            while row * width < limit {
                for n in [row * width, row * width + width - 1] where n < limit {
                    let q = Int((UInt64(n) &* layout.widthReciprocal) >> 32)
                    if q != n / width {
                        Issue.record("width \(width), cell \(n): \(q), not \(n / width)")
                        return
                    }
                }
                row += 1
            }
        }
    }

    // MARK: Uncover × cell state

    @Test func uncoverCoveredSafeNumberRevealsOnlyIt() {
        var board = Board(layout: field)
        let r = board.uncover(at(field, 1, 0))
        #expect(r.revealed == [at(field, 1, 0)])
        #expect(r.status == .playing)
        #expect(board.revealedSafeCount == 1)
    }

    @Test func uncoverCoveredMineLoses() {
        var board = Board(layout: field)
        let r = board.uncover(at(field, 0, 0))
        #expect(r.revealed == [0])
        #expect(r.status == .lost)
        #expect(board.detonatedMine == 0)
    }

    @Test func uncoverFlaggedCellHasNoEffect() {
        var board = Board(layout: field)
        board.setMark(0, .flag)
        #expect(board.uncover(0).isEmpty)
        #expect(board.status == .playing)
        #expect(!board.isRevealed(0))
    }

    @Test func uncoverQuestionMarkedCellReveals() {
        var board = Board(layout: field, questionMarks: true)
        board.setMark(at(field, 1, 0), .question)
        #expect(board.uncover(at(field, 1, 0)).revealed == [at(field, 1, 0)])
        #expect(board.mark(at: at(field, 1, 0)) == .none)
    }

    @Test func uncoverRevealedCellHasNoEffect() {
        var board = Board(layout: field)
        board.uncover(at(field, 1, 0))
        #expect(board.uncover(at(field, 1, 0)).isEmpty)
        #expect(board.revealedSafeCount == 1)
    }

    @Test func zeroFloodsToItsRegionAndBorderButNotPastFlags() {
        var board = Board(layout: field)
        let start = at(field, 0, 2)
        #expect(Set(board.cellsUncovered(by: start)) == referenceFlood(field, from: start))
        // A flag inside the region stops the flood there.
        board.setMark(at(field, 1, 2), .flag)
        let r = board.uncover(start)
        #expect(!r.revealed.contains(at(field, 1, 2)))
        #expect(Set(r.revealed) == [at(field, 0, 2), at(field, 0, 1), at(field, 1, 1)])
    }

    // MARK: Mark × cell state

    @Test func marksCycleWithoutQuestionMarks() {
        var board = Board(layout: field)
        #expect(board.cycleMark(5) == .flag)
        #expect(board.flagCount == 1)
        #expect(board.minesLeft == 1)
        #expect(board.cycleMark(5) == Mark.none)
        #expect(board.flagCount == 0)
    }

    @Test func marksCycleThroughQuestionMarks() {
        var board = Board(layout: field, questionMarks: true)
        #expect(board.cycleMark(5) == .flag)
        #expect(board.cycleMark(5) == .question)
        #expect(board.flagCount == 0)
        #expect(board.cycleMark(5) == Mark.none)
    }

    @Test func markingARevealedCellDoesNothing() {
        var board = Board(layout: field)
        board.uncover(at(field, 1, 0))
        let cycled = board.cycleMark(at(field, 1, 0))
        let changed = board.setMark(at(field, 1, 0), .flag)
        #expect(cycled == nil)
        #expect(!changed)
        #expect(board.flagCount == 0)
    }

    @Test func questionMarkIsNoneWhenQuestionMarksAreOff() {
        var board = Board(layout: field)
        let changed = board.setMark(3, .question)
        #expect(!changed)
        #expect(board.mark(at: 3) == Mark.none)
    }

    @Test func flagOnAMineCountsTowardsMinesLeftEvenWhenWrong() {
        var board = Board(layout: field)
        board.setMark(0, .flag)
        board.setMark(3, .flag)
        board.setMark(4, .flag)
        #expect(board.minesLeft == -1)
    }

    // MARK: Chord

    @Test func chordWithRightFlagsUncoversTheRest() {
        var board = Board(layout: field)
        let one = at(field, 1, 0)  // a 2 next to both mines
        board.uncover(one)
        board.setMark(0, .flag)
        board.setMark(at(field, 2, 1), .flag)
        let r = board.chord(one)
        #expect(Set(r.revealed) == [at(field, 2, 0), at(field, 0, 1), at(field, 1, 1)])
        #expect(r.status == .playing)
    }

    @Test func chordWithAWrongFlagLoses() {
        var board = Board(layout: field)
        let two = at(field, 1, 0)
        board.uncover(two)
        board.setMark(0, .flag)
        board.setMark(at(field, 2, 0), .flag)  // wrong: (2,1) is the mine
        let r = board.chord(two)
        #expect(r.revealed.contains(at(field, 2, 1)))
        #expect(r.status == .lost)
        #expect(board.detonatedMine == at(field, 2, 1))
    }

    @Test func chordWithTooFewFlagsDoesNothing() {
        var board = Board(layout: field)
        board.uncover(at(field, 1, 0))
        board.setMark(0, .flag)
        #expect(board.chord(at(field, 1, 0)).isEmpty)
    }

    @Test func chordOnCoveredOrZeroCellDoesNothing() {
        var board = Board(layout: field)
        #expect(board.chord(at(field, 1, 0)).isEmpty)
        board.uncover(at(field, 0, 2))
        #expect(board.chord(at(field, 0, 2)).isEmpty)
    }

    // MARK: Win, loss, game over

    @Test func revealingEverySafeCellWins() {
        var board = Board(layout: field)
        for i in 0..<field.geometry.cellCount where !field.isMine(i) { board.uncover(i) }
        #expect(board.status == .won)
        #expect(board.progress == 1)
    }

    @Test func movesAfterTheGameEndsDoNothing() {
        var board = Board(layout: field)
        board.uncover(0)
        #expect(board.status == .lost)
        #expect(board.uncover(at(field, 3, 0)).isEmpty)
        #expect(board.cycleMark(at(field, 3, 0)) == nil)
    }

    @Test func replicatedRevealIsAUnionWithoutFlood() {
        var board = Board(layout: field)
        let newly = board.reveal(cells: [at(field, 0, 2), at(field, 0, 2), at(field, 3, 2)])
        #expect(newly == [at(field, 0, 2), at(field, 3, 2)])
        #expect(board.revealedSafeCount == 2)
        let rebuilt = Board(layout: field, revealed: [at(field, 0, 2)], marks: [at(field, 0, 2): .flag, 0: .flag], questionMarks: false)
        #expect(rebuilt.mark(at: at(field, 0, 2)) == Mark.none)
        #expect(rebuilt.flagCount == 1)
    }

    @Test func threeBVCountsZeroRegionsAndIsolatedNumbers() {
        // One zero, (0,2), whose click opens its border; six numbers border no zero.
        #expect(field.threeBV == 7)
        // All numbers, no zeros: one click per safe cell.
        #expect(layout(["*.*", "...", "*.*"]).threeBV == 5)
        // No mines near most cells: one region, plus nothing else.
        #expect(layout(["*....", ".....", "....."]).threeBV == 1)
    }

    @Test func largeFloodOpensEverythingIteratively() throws {
        let g = BoardGeometry(width: 500, height: 500)
        let big = try MineLayout(geometry: g, mineIndices: [g.cellCount - 1])
        let board = Board(layout: big, start: 0)
        #expect(board.revealedSafeCount == g.cellCount - 1)
        #expect(board.status == .won)
    }
}
