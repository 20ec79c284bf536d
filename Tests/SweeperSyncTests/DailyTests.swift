import SweeperCrypto
import SweeperGame
import Testing
@testable import SweeperSync

/// The board of the day: derived from the circle and the day alone, the
/// same wherever it is made; a daily op is the creator's, counted in any
/// order; a game that says it is the day's board counts only when it is.
@Suite struct DailyTests {
    let circle = Fixtures.circle(1)

    /// `author`'s board of `day` in `circle`, with its daily op.
    func daily(by author: OpAuthor, day: Int, in circle: CircleKey, created: UInt64 = 1_795_000_000_000) throws -> (Op, Op, GeneratedBoard) {
        let board = try DailyBoard.board(circle: circle, day: day)
        let genesis = try author.genesis(
            parameters: board.parameters, layout: board.layout, seed: board.seed, questionMarks: false, createdAtMillis: created)
        var replica = Replica(circle: circle)
        replica.insert(genesis)
        let game = try #require(replica.games[genesis.gameID])
        let op = try #require(try author.daily(day, in: game, atMillis: created + 1))
        return (genesis, op, board)
    }

    @Test func theBoardOfTheDayIsTheCirclesAndTheDaysAlone() throws {
        let day = 20_417  // 2025-11-25
        let once = try DailyBoard.board(circle: circle, day: day)
        let again = try DailyBoard.board(circle: Fixtures.circle(1), day: day)
        #expect(once.layout == again.layout && once.seed == again.seed)
        #expect(once.parameters == (try DailyBoard.parameters()) && once.parameters.noGuess && once.layout.mineCount == 40)
        // Another day, or another circle, has another board.
        #expect(try DailyBoard.board(circle: circle, day: day + 1).layout != once.layout)
        #expect(try DailyBoard.board(circle: Fixtures.circle(2), day: day).layout != once.layout)
        // Days and dates.
        #expect(DailyBoard.date(of: 0) == "1970-01-01" && DailyBoard.date(of: day) == "2025-11-25" && DailyBoard.date(of: 11_016) == "2000-02-29")
        let midnight: UInt64 = UInt64(day) * 86_400_000
        #expect(DailyBoard.day(ofMillis: midnight, utcOffsetSeconds: 0) == day)
        #expect(DailyBoard.day(ofMillis: midnight - 1, utcOffsetSeconds: 0) == day - 1)
        // An hour east of Greenwich the day begins an hour earlier.
        #expect(DailyBoard.day(ofMillis: midnight - 1_800_000, utcOffsetSeconds: 3_600) == day)
        #expect(DailyBoard.day(ofMillis: midnight + 1_800_000, utcOffsetSeconds: -3_600) == day - 1)
    }

    @Test func aDailyOpIsTheCreatorsAndTheFirstCountsInAnyOrder() throws {
        let ann = OpAuthor(identity: Fixtures.identity(1), circle: circle)
        let bob = OpAuthor(identity: Fixtures.identity(2), circle: circle)
        let (genesis, first, board) = try daily(by: ann, day: 20_417, in: circle)
        var replica = Replica(circle: circle)
        replica.insert(genesis)
        // Bob may not say Ann's game is a board of the day: refused, as the seed's choice is.
        let game = try #require(replica.games[genesis.gameID])
        #expect(throws: MoveError.notTheCreator) { try bob.daily(20_417, in: game, atMillis: 5) }
        let forged = Op(
            signing: bob.identity, circle: circle, gameID: genesis.gameID, seq: 1, lamport: genesis.lamport + 1,
            previous: .none, wallClockMillis: 5, payload: .daily(day: 20_000))
        #expect(replica.insert(forged).rejection(of: forged) == .notPlayer)
        #expect(replica.insert(first).accepted.count == 1)
        // A second daily op of Ann's, naming another day, comes later: the first stands.
        let held = try #require(replica.games[genesis.gameID])
        let later = try ann.daily(20_418, in: held, atMillis: 7)
        #expect(later == nil, "the author makes one daily op a game")
        let second = Op(
            signing: ann.identity, circle: circle, gameID: genesis.gameID, seq: 3, lamport: first.lamport + 1,
            previous: first.hash, wallClockMillis: 8, payload: .daily(day: 20_418))
        #expect(replica.insert(second).accepted.count == 1)
        let state = try #require(replica.state(of: genesis.gameID))
        #expect(state.dailyDay == 20_417 && state.usesDaily)
        #expect(DailyBoard.matches(state.genesis, board))
        var other = Replica(circle: circle)
        for op in [second, first, genesis] { other.insert(op) }
        #expect(other.state(of: genesis.gameID)?.digest == state.digest && other.state(of: genesis.gameID)?.dailyDay == 20_417)
    }

    @Test func aGameThatIsNotTheDaysBoardDoesNotMatchIt() throws {
        let ann = OpAuthor(identity: Fixtures.identity(1), circle: circle)
        let (genesis, _, board) = try daily(by: ann, day: 20_417, in: circle)
        var replica = Replica(circle: circle)
        replica.insert(genesis)
        let state = try #require(replica.state(of: genesis.gameID))
        #expect(DailyBoard.matches(state.genesis, board))
        // Another day's board, another circle's, or an easier layout under the day's seed: not the day's.
        #expect(!DailyBoard.matches(state.genesis, try DailyBoard.board(circle: circle, day: 20_418)))
        #expect(!DailyBoard.matches(state.genesis, try DailyBoard.board(circle: Fixtures.circle(2), day: 20_417)))
        let easier = try Generator.generate(try GameParameters(width: 16, height: 16, mines: 40, start: Cell(x: 8, y: 8)), seed: 99)
        let crafted = try ann.genesis(
            parameters: board.parameters, layout: easier.layout, seed: board.seed, questionMarks: false, createdAtMillis: 1_795_000_000_000)
        replica.insert(crafted)
        let craftedState = try #require(replica.state(of: crafted.gameID))
        #expect(!DailyBoard.matches(craftedState.genesis, board))
        // Nor is a race on the day's very board.
        let bob = OpAuthor(identity: Fixtures.identity(2), circle: circle)
        let race = try ann.genesis(
            parameters: board.parameters, layout: board.layout, seed: board.seed, questionMarks: false, createdAtMillis: 1_795_000_000_000,
            players: [bob.identity.peerID], race: true)
        replica.insert(race)
        let raceState = try #require(replica.state(of: race.gameID))
        #expect(raceState.isRace && !DailyBoard.matches(raceState.genesis, board))
    }

    @Test func aPeerThatDoesNotReadDailyOpsIsNotSentSuchGames() throws {
        let ann = OpAuthor(identity: Fixtures.identity(1), circle: circle)
        let (genesis, op, _) = try daily(by: ann, day: 20_417, in: circle)
        var holder = Replica(circle: circle)
        holder.insert(genesis)
        holder.insert(op)
        var old = Pair(holder, Replica(circle: circle))
        old.sessions[0].peerReads.remove(.daily)
        old.start()
        _ = try old.run()
        #expect(old.replicas[1].games[genesis.gameID] == nil, "a game with a daily op went to a peer that cannot read it")
        var current = Pair(holder, Replica(circle: circle))
        current.start()
        _ = try current.run()
        #expect(current.replicas[1].state(of: genesis.gameID)?.dailyDay == 20_417)
    }
}
