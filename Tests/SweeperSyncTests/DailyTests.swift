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

    @Test func aDeviceRemovedBeforeTheDayBeganCannotMakeItsBoard() throws {
        let first = circle
        let second = Fixtures.circle(7)
        let day = 20_800
        let midnight = UInt64(day) * 86_400_000
        // A removal's rekey made 15 hours before the day's midnight (UTC): before the day began anywhere.
        let made = midnight - 15 * 3_600_000
        let member = DailyKeys(first: first, later: [(made, second)])
        #expect(member.epoch(for: day) == 1 && member.epoch(for: day - 1) == 0)
        let board = try #require(try DailyBoard.board(day: day, keys: member))
        #expect(board.layout == (try DailyBoard.board(circle: second, day: day)).layout)
        #expect(board.layout != (try DailyBoard.board(circle: first, day: day)).layout)
        // Another member, apart all day, holding the same records and keys: the same board.
        let apart = DailyKeys(first: Fixtures.circle(1), later: [(made, Fixtures.circle(7))])
        #expect(try DailyBoard.board(day: day, keys: apart)?.layout == board.layout)
        // The removed device keeps the first key and sees the rekey, but cannot open it:
        // it makes no board, and the first key's board is not the day's.
        let removed = DailyKeys(first: first, later: [(made, nil)])
        #expect(try DailyBoard.board(day: day, keys: removed) == nil)
        #expect(try DailyBoard.boards(day: day, keys: member).map(\.seed) == [board.seed])
        // The days before keep the first key's board: the key of a day never changes while it is played.
        #expect(try DailyBoard.board(day: day - 1, keys: member)?.seed == DailyBoard.seed(circle: first, day: day - 1))
        // A rekey made after the day began somewhere (14 hours before its midnight UTC) counts from the next day.
        let late = DailyKeys(first: first, later: [(midnight - 14 * 3_600_000, second)])
        #expect(late.epoch(for: day) == 0 && late.epoch(for: day + 1) == 1)
        #expect(DailyKeys(first: first, later: [(midnight - 14 * 3_600_000 - 1, second)]).epoch(for: day) == 1)
        // Of several rekeys, the newest made before the day.
        let three = Fixtures.circle(8)
        let keys = DailyKeys(first: first, later: [(made - 5, second), (made, three), (midnight, Fixtures.circle(9))])
        #expect(keys.epoch(for: day) == 2 && keys.key(for: day) == three)
        // Without a rekey the board is the first key's, as the release before made it.
        #expect(try DailyBoard.board(day: day, keys: DailyKeys(first: first))?.seed == DailyBoard.seed(circle: first, day: day))
    }

    @Test func daysBeforeTheChangeAlsoCountTheFirstKeysBoard() throws {
        let second = Fixtures.circle(7)
        let day = DailyBoard.keyedByEpochSince - 1
        let keys = DailyKeys(first: circle, later: [(1_000, second)])
        let seeds = try DailyBoard.boards(day: day, keys: keys).map(\.seed)
        #expect(seeds == [DailyBoard.seed(circle: second, day: day), DailyBoard.seed(circle: circle, day: day)])
        let next = DailyBoard.keyedByEpochSince
        #expect(try DailyBoard.boards(day: next, keys: keys).map(\.seed) == [DailyBoard.seed(circle: second, day: next)])
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

    /// A covered safe cell of `state`'s board.
    func safeCell(_ state: GameState) throws -> Int {
        try #require((0..<state.genesis.geometry.cellCount).first { !state.board.isRevealed($0) && !state.genesis.layout.isMine($0) })
    }

    /// Bob's op of `payload` in `game`, the first of his chain, made by
    /// hand (his own daemon refuses to make it).
    func forged(_ payload: OpPayload, by bob: OpAuthor, in game: Op, lamport: UInt64? = nil) -> Op {
        Op(
            signing: bob.identity, circle: circle, gameID: game.gameID, seq: 1, lamport: lamport ?? game.lamport + 2,
            previous: .none, wallClockMillis: 9, payload: payload)
    }

    @Test func onlyTheCreatorMovesOnItsBoardOfTheDay() throws {
        let ann = OpAuthor(identity: Fixtures.identity(1), circle: circle)
        let bob = OpAuthor(identity: Fixtures.identity(2), circle: circle)
        let (genesis, daily, _) = try daily(by: ann, day: 20_417, in: circle)
        var replica = Replica(circle: circle)
        replica.insert(genesis)
        // Before the daily op, the game is an open one: Bob may move.
        let open = try #require(replica.games[genesis.gameID])
        let openState = try #require(open.state)
        let cell = try safeCell(openState)
        #expect(try bob.reveal(cell, in: open, atMillis: 3) != nil)
        replica.insert(daily)
        let game = try #require(replica.games[genesis.gameID])
        let state = try #require(game.state)
        #expect(state.isDaily && state.mayMove(ann.identity.peerID) && !state.mayMove(bob.identity.peerID))
        // His daemon makes no move in Ann's board of the day, naming whose it is.
        let refusal = MoveError.anothersDaily(creator: ann.identity.peerID)
        #expect(throws: refusal) { try bob.reveal(cell, in: game, atMillis: 3) }
        #expect(throws: refusal) { try bob.chord(cell, in: game, atMillis: 3) }
        #expect(throws: refusal) { try bob.cycleMark(cell, in: game, atMillis: 3) }
        #expect(throws: refusal) { try bob.peek(in: game, atMillis: 3) }
        #expect(throws: refusal) { try bob.hint(cell, in: game, atMillis: 3) }
        #expect(throws: refusal) { try bob.archive(true, in: game, atMillis: 3) }
        // A modified client's ops of every kind are refused by the replica, counted, and change nothing.
        let attempts: [OpPayload] = [
            .reveal(CellRuns(cells: [cell])), .flood(Flood(cell: cell, chord: false, opening: [cell], on: state.board)),
            .mark(cell: cell, mark: .flag), .assisted, .hint(cell: cell), .archive(true), .players([bob.identity.peerID]),
        ]
        for payload in attempts {
            let op = forged(payload, by: bob, in: daily)
            #expect(replica.insert(op).rejection(of: op) == .dailyOfAnother, "\(payload)")
        }
        #expect(replica.rejectionCounts[.dailyOfAnother] == attempts.count)
        #expect(replica.state(of: genesis.gameID)?.digest == state.digest)
        // Ann plays it.
        let own = try #require(try ann.reveal(cell, in: game, atMillis: 4))
        #expect(replica.insert(own).accepted.count == 1)
    }

    @Test func anotherPlayersMovesThatCameBeforeTheDailyOpAreDroppedInAnyOrder() throws {
        let ann = OpAuthor(identity: Fixtures.identity(1), circle: circle)
        let bob = OpAuthor(identity: Fixtures.identity(2), circle: circle)
        let (genesis, daily, _) = try daily(by: ann, day: 20_417, in: circle)
        var first = Replica(circle: circle)
        first.insert(genesis)
        let cell = try safeCell(try #require(first.state(of: genesis.gameID)))
        // Bob moved seeing the genesis only (or a forger wrote so): his op
        // goes in where the daily op has not come, and out when it comes.
        let open = try #require(first.games[genesis.gameID])
        let move = try #require(try bob.reveal(cell, in: open, atMillis: 3))
        #expect(first.insert(move).accepted.count == 1)
        #expect(first.state(of: genesis.gameID)?.board.isRevealed(cell) == true)
        let outcome = first.insert(daily)
        #expect(outcome.accepted.map(\.hash) == [daily.hash])
        #expect(outcome.dropped.map(\.hash) == [move.hash])
        #expect(first.games[genesis.gameID]?.authors == [ann.identity.peerID])
        let state = try #require(first.state(of: genesis.gameID))
        #expect(!state.board.isRevealed(cell))
        // The daily op first: Bob's op is refused; restored from every op, the same.
        var second = Replica(circle: circle)
        for op in [daily, genesis, move] { second.insert(op) }
        #expect(second.rejectionCounts[.dailyOfAnother] == 1)
        var restored = Replica(circle: circle)
        restored.restore([move, genesis], vouched: [daily])
        for r in [second, restored] {
            #expect(r.state(of: genesis.gameID)?.digest == state.digest)
            #expect(r.summary == first.summary)
        }
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
