import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// 3BV, clicks and efficiency as the community counts them, on a board
/// whose figures are worked out by hand, and each player's part.
@Suite struct GameFiguresTests {
    /// A 5×3 board, mines at the right of the top and bottom rows:
    ///
    ///     . . . 1 *
    ///     . . . 2 2
    ///     . . . 1 *
    ///
    /// Its 3BV is 2: the zeros of the left with their border of numbers
    /// (one click), and the 2 at the right, which borders no zero.
    static func board(by author: OpAuthor) throws -> Op {
        let geometry = BoardGeometry(width: 5, height: 3)
        let layout = try MineLayout(geometry: geometry, mineIndices: [4, 14])
        let parameters = try GameParameters(width: 5, height: 3, mines: 2, start: Cell(x: 0, y: 0))
        return try author.genesis(parameters: parameters, layout: layout, seed: 1, questionMarks: false, createdAtMillis: 1_000)
    }

    /// Ann's game on that board, and Bob, in one circle.
    static func game() throws -> (ann: OpAuthor, bob: OpAuthor, replica: Replica, id: GameID) {
        let circle = Fixtures.circle(1)
        let ann = OpAuthor(identity: Fixtures.identity(1), circle: circle)
        var replica = Replica(circle: circle)
        let genesis = try board(by: ann)
        replica.insert(genesis)
        return (ann, OpAuthor(identity: Fixtures.identity(2), circle: circle), replica, genesis.gameID)
    }

    @Test func aBoardWhoseFiguresAreKnown() throws {
        let (ann, bob, start, id) = try Self.game()
        var replica = start
        var figures = try #require(replica.games[id]?.figures())
        #expect(figures.threeBV == 2 && replica.state(of: id)?.genesis.layout.threeBV == 2)
        // The opening clicked the zeros: one unit solved, by nobody; its click is the creator's.
        #expect(figures.solvedThreeBV == 1 && figures.clicks == 1)
        #expect(figures.parts.keys.sorted() == [ann.identity.peerID] && figures.parts[ann.identity.peerID]?.clicks == 1)
        #expect(figures.parts[ann.identity.peerID]?.threeBV == 0 && figures.parts[ann.identity.peerID]?.cellsOpened == 0)

        // Bob flags the top mine and, wrongly, nothing else; Ann opens the lone 2.
        let before = try #require(replica.games[id])
        let flag = try #require(try bob.setMark(.flag, on: 4, in: before, atMillis: 2_000))
        replica.insert(flag)
        let flagged = try #require(replica.games[id])
        let open = try #require(try ann.reveal(9, in: flagged, atMillis: 3_000))
        replica.insert(open)
        #expect(replica.state(of: id)?.status == .won)
        figures = try #require(replica.games[id]?.figures())
        #expect(figures.solvedThreeBV == 2 && figures.clicks == 3)
        #expect(abs(figures.efficiency - 2.0 / 3.0) < 1e-9)
        #expect(figures.parts[ann.identity.peerID]?.threeBV == 1 && figures.parts[ann.identity.peerID]?.cellsOpened == 1)
        #expect(figures.parts[bob.identity.peerID]?.flagsRight == 1 && figures.parts[bob.identity.peerID]?.threeBV == 0)
        #expect(figures.winThatDidNotStand == nil)
        #expect(figures.parts.values.reduce(0) { $0 + $1.clicks } == figures.clicks, "the parts' clicks do not add up")
    }

    /// Flags count as they stand at the end: a flag set, cleared and set
    /// again is one, its last setter's; a flag cleared for good is none.
    @Test func flagsCountAsTheyStandAndAddUp() throws {
        let (ann, bob, start, id) = try Self.game()
        var replica = start
        // Bob flags the top mine, clears it and flags it again.
        for mark in [Mark.flag, .none, .flag] {
            let game = try #require(replica.games[id])
            let op = try #require(try bob.setMark(mark, on: 4, in: game, atMillis: 2_000))
            replica.insert(op)
        }
        let figures = try #require(replica.games[id]?.figures())
        let state = try #require(replica.state(of: id))
        let standing = (0..<15).filter { state.board.mark(at: $0) == .flag }
        let counted = figures.parts.values.reduce(0) { $0 + $1.flagsRight + $1.flagsWrong }
        #expect(counted == standing.count && standing == [4], "\(counted) flags counted, \(standing) on the board")
        #expect(figures.parts[bob.identity.peerID]?.flagsRight == 1 && figures.parts[ann.identity.peerID]?.flagsRight ?? 0 == 0)
        #expect(figures.parts.values.reduce(0) { $0 + $1.clicks } == figures.clicks)
    }

    /// The game played again: its moves in stamp order, each with the cell
    /// acted on and what it changed, ending on the game's own board.
    @Test func aReplayStepsThroughTheMovesInStampOrder() throws {
        let (ann, bob, start, id) = try Self.game()
        var replica = start
        let first = try #require(replica.games[id])
        let flag = try #require(try bob.setMark(.flag, on: 4, in: first, atMillis: 2_000))
        replica.insert(flag)
        let second = try #require(replica.games[id])
        let open = try #require(try ann.reveal(9, in: second, atMillis: 3_000))
        replica.insert(open)
        var boards: [[Bool]] = []
        let replay = try #require(replica.games[id]?.replay { _, after in boards.append((0..<15).map { after.board.isRevealed($0) }) })
        #expect(replay.steps.map(\.author) == [bob.identity.peerID, ann.identity.peerID])
        #expect(replay.steps.map(\.kind) == [.flag, .reveal] && replay.steps.map(\.cell) == [4, 9])
        #expect(replay.steps[0].changed == [4] && replay.steps[0].status == .playing)
        // The winning reveal opened cell 9; the game's end shows every mine.
        #expect(replay.steps[1].changed.contains(9) && replay.steps[1].status == .won)
        #expect(!(replay.opening.board.isRevealed(9)) && boards.last?[9] == true)
        #expect(replay.startMillis == 1_000 && replay.steps.map(\.wallClockMillis) == [2_000, 3_000])
    }

    /// Apart, Ann completes the board while Bob trips a mine; merged, the
    /// game is lost, and the figures say whose win did not stand.
    @Test func aWinThatAMineOnTheOtherSideUndidIsNamed() throws {
        let circle = Fixtures.circle(1)
        let ann = OpAuthor(identity: Fixtures.identity(1), circle: circle)
        let bob = OpAuthor(identity: Fixtures.identity(2), circle: circle)
        let genesis = try Self.board(by: ann)
        var annSide = Replica(circle: circle)
        var bobSide = Replica(circle: circle)
        annSide.insert(genesis)
        bobSide.insert(genesis)
        let annsGame = try #require(annSide.games[genesis.gameID])
        let win = try #require(try ann.reveal(9, in: annsGame, atMillis: 3_000))
        annSide.insert(win)
        let bobsGame = try #require(bobSide.games[genesis.gameID])
        let boom = try #require(try bob.reveal(4, in: bobsGame, atMillis: 3_100))
        bobSide.insert(boom)
        #expect(annSide.state(of: genesis.gameID)?.status == .won && bobSide.state(of: genesis.gameID)?.status == .lost)
        annSide.insert(boom)
        bobSide.insert(win)
        for side in [annSide, bobSide] {
            let state = try #require(side.state(of: genesis.gameID))
            #expect(state.status == .lost && state.trippedBy == bob.identity.peerID)
            #expect(side.games[genesis.gameID]?.figures()?.winThatDidNotStand == ann.identity.peerID)
        }
    }
}
