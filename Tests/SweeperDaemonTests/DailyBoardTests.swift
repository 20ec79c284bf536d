import Foundation
import SweeperControl
import SweeperCrypto
import SweeperGame
import SweeperSync
import Testing

@testable import SweeperDaemon

/// The board of the day is its player's own: another member's daemon makes
/// no move in it, says whose it is, and drops moves that came before the
/// game was known to be one.
@Suite struct DailyBoardTests {
    /// A board of the day of `author`'s (any layout: the replica goes by the daily op).
    static func dailyGame(by author: OpAuthor, circle: CircleKey) throws -> (genesis: Op, daily: Op, board: GeneratedBoard) {
        let board = try Generator.generate(try GameParameters(preset: .beginner), seed: 4)
        let genesis = try author.genesis(
            parameters: board.parameters, layout: board.layout, seed: 4, questionMarks: false, createdAtMillis: 1_000)
        var replica = Replica(circle: circle)
        replica.insert(genesis)
        let game = try #require(replica.games[genesis.gameID])
        let daily = try #require(try author.daily(20_417, in: game, atMillis: 1_001))
        return (genesis, daily, board)
    }

    /// A covered safe cell of `board` once its opening is shown.
    static func safeCell(_ board: GeneratedBoard, genesis: Op, circle: CircleKey) throws -> Int {
        var replica = Replica(circle: circle)
        replica.insert(genesis)
        let state = try #require(replica.games.values.first?.state)
        return try #require((0..<state.genesis.geometry.cellCount).first { !state.board.isRevealed($0) && !board.layout.isMine($0) })
    }

    @Test func aLocalMoveOnAnothersBoardOfTheDayIsRefusedNamingItsPlayer() async throws {
        let f = try await DaemonFixture()
        let bob = OpAuthor(identity: SigningIdentity(), circle: f.circle)
        try await f.admit(bob.identity.peerID)
        let (genesis, daily, board) = try Self.dailyGame(by: bob, circle: f.circle)
        let intake = try await f.service.receive(.ops([try #require(OpSegment(verifiedOps: [genesis, daily]))]))
        #expect(intake.accepted.count == 2)
        let cell = board.parameters.geometry.cell(at: try Self.safeCell(board, genesis: genesis, circle: f.circle))
        let id = genesis.gameID.description
        // `games` marks it with its day.
        let listed: Commands.Games.Result = try await result(f.router, #"{"id":1,"command":"games"}"#)
        #expect(listed.games.first { $0.game == id }?.day == DailyBoard.date(of: 20_417))
        for command in ["reveal", "flag", "chord"] {
            do {
                let _: Commands.MoveResult = try await result(f.router, #"{"id":1,"command":"\#(command)","game":"\#(id)","x":\#(cell.x),"y":\#(cell.y)}"#)
                Issue.record("\(command) on Bob's board of the day was made")
            } catch let error as ControlError {
                #expect(error.code == "not-a-player")
                #expect(error.message == "that is \(bob.identity.peerID.shortDescription)'s board of the day: only they play it")
            }
        }
        // A hint is refused too, for the same reason: nothing could show it was given.
        do {
            let _: Commands.Hint.Result = try await result(f.router, #"{"id":2,"command":"hint","game":"\#(id)"}"#)
            Issue.record("a hint on Bob's board of the day was given")
        } catch let error as ControlError {
            #expect(error.code == "not-a-player" && error.message.contains("board of the day"), "\(error)")
        }
        // The game shows as watched, and holds Bob's two ops alone.
        #expect(try await show(f.router, id).watching == true)
        await f.service.writeRemoteOps()
        #expect(try f.store.ops(gameID: id).count == 2)
        await f.cleanup()
    }

    @Test func anotherMembersMovesThatCameBeforeTheDailyOpLeaveTheStore() async throws {
        let f = try await DaemonFixture()
        let bob = OpAuthor(identity: SigningIdentity(), circle: f.circle)
        let carol = OpAuthor(identity: SigningIdentity(), circle: f.circle)
        try await f.admit(bob.identity.peerID)
        try await f.admit(carol.identity.peerID)
        let (genesis, daily, board) = try Self.dailyGame(by: bob, circle: f.circle)
        // Carol's move, made where only the genesis was known, arrives first.
        var carols = Replica(circle: f.circle)
        carols.insert(genesis)
        let game = try #require(carols.games[genesis.gameID])
        let move = try #require(try carol.reveal(try Self.safeCell(board, genesis: genesis, circle: f.circle), in: game, atMillis: 2_000))
        var session = SyncSession()
        _ = try await f.service.receive(.ops([try #require(OpSegment(verifiedOps: [genesis]))]), in: &session)
        let taken = try await f.service.receive(.ops([try #require(OpSegment(verifiedOps: [move]))]), in: &session)
        #expect(taken.accepted.count == 1)
        await f.service.writeRemoteOps()
        let id = genesis.gameID.description
        #expect(try f.store.ops(gameID: id).count == 2)
        // Bob's daily op makes it his board of the day: Carol's move leaves the replica and the store.
        let later = try await f.service.receive(.ops([try #require(OpSegment(verifiedOps: [genesis, daily]))]), in: &session)
        #expect(later.accepted.map(\.hash) == [daily.hash])
        await f.service.writeRemoteOps()
        let stored = try f.store.ops(gameID: id)
        #expect(stored.count == 2 && stored.allSatisfy { $0.author == Data(bob.identity.peerID.bytes) })
        let view = try await show(f.router, id)
        #expect(view.players.map(\.peer) == [bob.identity.peerID.description])
        await f.cleanup()
    }

    @Test func afterARemovalTheBoardsOfLaterDaysAreMadeWithTheNewKey() async throws {
        let f = try await DaemonFixture()
        let bob = SigningIdentity()
        try await f.admit(bob.peerID)
        let members = f.core.router.members
        _ = try members.remove(bob.peerID, kept: [:])
        let keys = members.dailyKeys
        let newKey = try #require(keys.later.first?.key)
        #expect(keys.later.count == 1 && newKey != f.circle)
        // Today began before the removal: its board stays the first key's. The day after tomorrow is the new key's.
        let today = DailyBoard.day(ofMillis: Date().millis, utcOffsetSeconds: 0)
        #expect(keys.epoch(for: today) == 0 && keys.epoch(for: today + 2) == 1)
        let (_, state, made) = try await f.service.dailyGame(day: today + 2, keys: keys)
        #expect(made && state.genesis.seed == DailyBoard.seed(circle: newKey, day: today + 2))
        #expect(state.genesis.seed != DailyBoard.seed(circle: f.circle, day: today + 2))
        // Counted as that day's board, and found again rather than made twice.
        #expect(try await f.service.dailyGames(of: today + 2, keys: keys).map(\.state.gameID) == [state.gameID])
        let (_, again, madeAgain) = try await f.service.dailyGame(day: today + 2, keys: keys)
        #expect(!madeAgain && again.gameID == state.gameID)
        await f.cleanup()
    }
}
