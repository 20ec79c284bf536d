import PropertyBased
import Testing

@testable import SweeperGame

@Suite struct GeneratorTests {
    /// Random valid parameters: size, mine count within the limit, a start cell.
    static func parameters(_ w: Int, _ h: Int, _ minesRoll: Int, _ startRoll: Int, noGuess: Bool) throws -> GameParameters {
        let maximum = noGuess ? max(1, min(GameParameters.maximumMines(width: w, height: h), w * h - 9)) : GameParameters.maximumMines(width: w, height: h)
        let mines = 1 + minesRoll % maximum
        let start = Cell(x: startRoll % w, y: (startRoll / w) % h)
        return try GameParameters(width: w, height: h, mines: mines, start: start, noGuess: noGuess)
    }

    @Test func generationRespectsSizeCountAndOpening() async {
        await propertyCheck(count: 300, input: Gen.int(in: 2...40), Gen.int(in: 2...40), Gen.int(in: 0...10_000), Gen.uint64()) { w, h, roll, seed in
            let p = try Self.parameters(w, h, roll, roll / 7, noGuess: false)
            let board = try Generator.generate(p, seed: seed)
            #expect(board.layout.geometry == p.geometry)
            #expect(board.layout.mineCount == p.mines)
            #expect(board.start == p.geometry.index(of: p.start))
            #expect(!board.layout.isMine(board.start))
            if p.clearsStartNeighbours {
                #expect(board.layout.adjacentMines(board.start) == 0)
            }
        }
    }

    @Test func theSameSeedGivesTheSameBoard() async {
        await propertyCheck(count: 50, input: Gen.int(in: 5...30), Gen.uint64(), Gen.bool) { w, seed, noGuess in
            let p = try GameParameters(width: w, height: w, mines: w * w / 6, noGuess: noGuess)
            let a = try Generator.generate(p, seed: seed)
            let b = try Generator.generate(p, seed: seed)
            #expect(a.layout.packedBits == b.layout.packedBits)
            let c = try Generator.generate(p, seed: seed &+ 1)
            // Different seeds give different boards (for sizes with many possible layouts).
            #expect(a.layout.packedBits != c.layout.packedBits)
        }
    }

    /// Every release makes the same board from the same seed: a board of
    /// the day is checked by making it again, so a faster generator that
    /// moved one mine differently would split a circle's tables by release.
    /// The fingerprints are of the boards the generator made before the
    /// solver kept its lists on memory of its own (FNV-1a over each board's
    /// mine cells and attempts, seeds 1 up), across sizes, densities, start
    /// cells at the edge and in a corner, and boards that need perturbing.
    @Test(
        arguments: [
            (9, 9, 10, nil, true, 100, 0xad86_93ad_8c67_52c1 as UInt64),
            (16, 16, 40, nil, true, 100, 0x53d3_47e0_3444_4596),
            (30, 16, 99, nil, true, 100, 0x90c9_9cd1_1948_23d0),
            (20, 12, 60, Cell(x: 0, y: 0), true, 50, 0x25a2_d9d6_a8e7_c7b1),
            (10, 10, 40, Cell(x: 9, y: 3), true, 50, 0xb7a8_75ff_c3d3_20d0),
            (100, 100, 2000, nil, true, 3, 0x9596_12d2_409a_d49a),
            (30, 16, 99, nil, false, 50, 0x9588_da90_cb17_7dd1),
        ] as [(Int, Int, Int, Cell?, Bool, Int, UInt64)])
    func theBoardsASeedMakesStayTheSame(w: Int, h: Int, mines: Int, start: Cell?, noGuess: Bool, seeds: Int, fingerprint: UInt64) throws {
        let p = try GameParameters(width: w, height: h, mines: mines, start: start, noGuess: noGuess)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var attempts = 0
        for seed in 1...UInt64(seeds) {
            let board = try Generator.generate(p, seed: seed)
            for cell in board.layout.mineIndices { hash = (hash ^ UInt64(cell)) &* 0x100_0000_01b3 }
            hash = (hash ^ UInt64(board.attempts)) &* 0x100_0000_01b3
            attempts += board.attempts
        }
        #expect(String(hash, radix: 16) == String(fingerprint, radix: 16))
        #expect(attempts >= seeds)
    }

    @Test func noGuessBoardsAreClearedByTheSolver() async {
        await propertyCheck(count: 150, input: Gen.int(in: 4...24), Gen.int(in: 4...24), Gen.int(in: 0...10_000), Gen.uint64()) { w, h, roll, seed in
            // Densities up to about a quarter, with a random start.
            let cap = max(1, min(w * h - 9, w * h / 4))
            let p = try GameParameters(width: w, height: h, mines: 1 + roll % cap, start: Cell(x: roll % w, y: roll % h), noGuess: true)
            let board = try Generator.generate(p, seed: seed)
            #expect(board.layout.mineCount == p.mines)
            #expect(board.layout.adjacentMines(board.start) == 0)
            let result = Solver.solve(board.layout, start: board.start)
            #expect(result.solvable, "w=\(w) h=\(h) mines=\(p.mines) seed=\(seed)")
            #expect(result.clearedSafeCells == board.layout.safeCellCount)
        }
    }

    /// The densest boards both our limits and Tatham's (w·h − 9) accept.
    @Test(arguments: [(9, 9), (8, 8), (5, 5), (30, 16), (4, 7)])
    func noGuessWorksAtTheHighestDensityAllowed(w: Int, h: Int) throws {
        let mines = min(GameParameters.maximumMines(width: w, height: h), w * h - 9)
        let p = try GameParameters(width: w, height: h, mines: mines, noGuess: true)
        for seed in UInt64(1)...3 {
            let board = try Generator.generate(p, seed: seed)
            #expect(board.layout.mineCount == mines)
            #expect(Solver.solve(board.layout, start: board.start).solvable)
        }
    }

    @Test func floodRevealsExactlyTheConnectedZeroRegionAndItsBorder() async {
        await propertyCheck(count: 300, input: Gen.int(in: 2...30), Gen.int(in: 2...30), Gen.int(in: 0...10_000), Gen.uint64()) { w, h, roll, seed in
            let p = try Self.parameters(w, h, roll % max(1, w * h / 5), roll, noGuess: false)
            let board = try Generator.generate(p, seed: seed)
            let safe = (0..<p.geometry.cellCount).filter { !board.layout.isMine($0) }
            let click = safe[roll % safe.count]
            var play = Board(layout: board.layout)
            let result = play.uncover(click)
            #expect(Set(result.revealed) == referenceFlood(board.layout, from: click))
            #expect(result.revealed == result.revealed.sorted())
        }
    }

    @Test func boardsSurviveTheirTextForm() async throws {
        await propertyCheck(count: 100, input: Gen.int(in: 2...40), Gen.int(in: 2...40), Gen.int(in: 0...10_000), Gen.uint64()) { w, h, roll, seed in
            let p = try Self.parameters(w, h, roll, roll / 3, noGuess: false)
            let board = try Generator.generate(p, seed: seed)
            let text = TextBoard(layout: board.layout, start: p.start).text
            let parsed = try TextBoard.parseAll(text + text)
            #expect(parsed.count == 2)
            #expect(parsed[0].layout == board.layout)
            #expect(parsed[1].start == p.start)
        }
    }

    @Test func packedBitsRoundTripAndRejectBadInput() throws {
        let p = try GameParameters(width: 13, height: 7, mines: 20)
        let board = try Generator.generate(p, seed: 99)
        let bits = board.layout.packedBits
        #expect(bits.count == (13 * 7 + 7) / 8)
        #expect(try MineLayout(geometry: p.geometry, packedBits: bits) == board.layout)
        #expect(throws: LayoutError.wrongByteCount(expected: bits.count, actual: bits.count - 1)) {
            try MineLayout(geometry: p.geometry, packedBits: Array(bits.dropLast()))
        }
        var stray = bits
        stray[stray.count - 1] |= 0x80
        #expect(throws: LayoutError.bitsPastLastCell) { try MineLayout(geometry: p.geometry, packedBits: stray) }
        #expect(throws: LayoutError.mineCountOutOfRange(0)) {
            try MineLayout(geometry: p.geometry, packedBits: [UInt8](repeating: 0, count: bits.count))
        }
    }
}
