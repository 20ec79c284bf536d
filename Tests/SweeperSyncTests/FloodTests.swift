import SweeperConventions
import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

@Suite struct FloodTests {
    /// A board in a random state: some cells revealed by earlier moves, some
    /// flagged (mines and, now and then, safe cells: wrong flags).
    static func scrambledBoard(seed: UInt64, width: Int = 24, height: Int = 20, mines: Int = 60) throws -> Board {
        let (_, layout) = try Fixtures.layout(width: width, height: height, mines: mines, seed: seed)
        var board = Board(layout: layout)
        var rng = BoardRandom(seed: seed &+ 99)
        let n = layout.geometry.cellCount
        for _ in 0..<(n / 12) {
            let c = rng.below(n)
            if layout.isMine(c) || rng.below(6) == 0 {
                board.setMark(c, .flag)
            }
        }
        for _ in 0..<4 {
            let c = rng.below(n)
            if !layout.isMine(c) { board.uncover(c) }
        }
        // Some flags lifted after the floods they stopped: covered cells beside revealed zeros.
        for c in 0..<n where board.mark(at: c) == .flag && rng.below(4) == 0 { board.setMark(c, .none) }
        return board
    }

    /// Whether `cells` are what the author's move opened, plus numbers it
    /// had revealed already (which change nothing).
    static func agrees(_ cells: [Int], with opened: [Int], on board: Board) -> Bool {
        let openedSet = Set(opened)
        let layout = board.layout
        return openedSet.isSubset(of: cells)
            && cells.allSatisfy {
                openedSet.contains($0) || (board.isRevealed($0) && (layout.isMine($0) || layout.adjacentMines($0) > 0))
            }
    }

    @Test(arguments: 1...12 as ClosedRange<UInt64>)
    func everyRevealAndChordOpensFromTheLayoutWhatTheAuthorsBoardOpened(seed: UInt64) throws {
        let board = try Self.scrambledBoard(seed: seed)
        let n = board.layout.geometry.cellCount
        var reveals = 0
        var chords = 0
        for c in 0..<n {
            let opened = board.cellsUncovered(by: c)
            if !opened.isEmpty {
                let flood = Flood(cell: c, chord: false, opening: opened, on: board)
                #expect(Self.agrees(flood.cells(in: board.layout), with: opened, on: board), "reveal of \(c), seed \(seed)")
                reveals += 1
            }
            let chorded = board.cellsChorded(by: c)
            if !chorded.isEmpty {
                let flood = Flood(cell: c, chord: true, opening: chorded, on: board)
                #expect(Self.agrees(flood.cells(in: board.layout), with: chorded, on: board), "chord on \(c), seed \(seed)")
                chords += 1
            }
        }
        #expect(reveals > 100)
        _ = chords
    }

    @Test func aChordThatTripsOnAWrongFlagOpensTheMine() throws {
        // 3×3, the mine in a corner, a wrong flag on the opposite corner: the chord on the centre opens the mine.
        let layout = try MineLayout(geometry: BoardGeometry(width: 3, height: 3), mineIndices: [0])
        var board = Board(layout: layout)
        board.reveal(cells: [4])
        board.setMark(8, .flag)
        let chorded = board.cellsChorded(by: 4)
        #expect(chorded.contains(0))
        let flood = Flood(cell: 4, chord: true, opening: chorded, on: board)
        #expect(flood.exceptions == [8])
        // The centre, revealed before, is a number: opened again, it changes nothing.
        #expect(flood.cells(in: layout) == [0, 1, 2, 3, 4, 5, 6, 7])
    }

    @Test func aFloodOverAWholeBoardIsAFewBytesWhateverItsSize() throws {
        // 500×500 with 50 mines: the first reveal opens nearly every cell.
        let (_, layout) = try Fixtures.layout(width: 500, height: 500, mines: 50, seed: 3)
        let board = Board(layout: layout)
        let opened = board.cellsUncovered(by: 250 * 500 + 250)
        #expect(opened.count > 200_000)
        let flood = Flood(cell: 250 * 500 + 250, chord: false, opening: opened, on: board)
        #expect(flood.exceptions.isEmpty)
        #expect(OpPayload.flood(flood).encoded.count <= 6)
        #expect(flood.cells(in: layout) == opened)
    }

    @Test func encodingRoundTripsAndRefusesCellsOffAnyBoard() throws {
        let flood = try #require(Flood(cell: 300, chord: true, exceptions: [7, 3, 299, 1000]))
        var r = ByteReader(OpPayload.flood(flood).encoded)
        #expect(try OpPayload.decode(from: &r) == .flood(flood))
        #expect(Flood(cell: CellRuns.cellLimit, chord: false, exceptions: []) == nil)
        #expect(Flood(cell: 1, chord: false, exceptions: [CellRuns.cellLimit]) == nil)
        // kind 9, cell 1, one exception at the cell limit.
        var off = ByteWriter()
        off.byte(9)
        off.varint(2)
        off.varint(1)
        off.varint(CellRuns.cellLimit)
        var offReader = ByteReader(off.bytes)
        #expect(throws: ByteDecodingError.self) { try OpPayload.decode(from: &offReader) }
        // A count the input cannot hold is refused before anything is allocated.
        var huge = ByteWriter()
        huge.byte(9)
        huge.varint(2)
        huge.varint(CellRuns.cellLimit)
        var hugeReader = ByteReader(huge.bytes)
        #expect(throws: ByteDecodingError.self) { try OpPayload.decode(from: &hugeReader) }
    }

    @Test func aReplicaRefusesAFloodNamingCellsOffItsBoard() throws {
        let author = OpAuthor(identity: Fixtures.identity(1), circle: Fixtures.circle(1))
        let genesis = try Fixtures.genesis(by: author)
        var replica = Replica(circle: author.circle)
        replica.insert(genesis)
        let game = try #require(replica.games[genesis.gameID])
        let flood = try #require(Flood(cell: 3, chord: false, exceptions: [81]))
        let op = author.make(.flood(flood), in: game, atMillis: 5)
        #expect(replica.insert(op).rejection(of: op) == .cellOutOfRange)
        let inside = try #require(Flood(cell: 3, chord: false, exceptions: [80]))
        let good = author.make(.flood(inside), in: game, atMillis: 5)
        #expect(replica.insert(good).accepted.count == 1)
    }

    @Test func movesInAnOpenGameAreFloodsAndPeersBeforeVersion8AreNotSentTheGame() throws {
        let author = OpAuthor(identity: Fixtures.identity(1), circle: Fixtures.circle(1))
        let genesis = try Fixtures.genesis(by: author)
        var replica = Replica(circle: author.circle)
        replica.insert(genesis)
        let state = try #require(replica.state(of: genesis.gameID))
        let cell = try #require((0..<81).first { !state.board.isRevealed($0) && !state.genesis.layout.isMine($0) })
        let game = try #require(replica.games[genesis.gameID])
        let op = try #require(try author.reveal(cell, in: game, atMillis: 9))
        guard case .flood = op.payload else {
            Issue.record("a reveal in an open game is not a flood: \(op.payload.kind)")
            return
        }
        replica.insert(op)
        var old = SyncSession()
        old.peerReads.remove(.floods)
        #expect(old.receive(.summary([:], wantsReply: false), replica: &replica).replies.isEmpty)
        var current = SyncSession()
        #expect(!current.receive(.summary([:], wantsReply: false), replica: &replica).replies.isEmpty)
    }
}
