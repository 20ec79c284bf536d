import SweeperConventions
import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// Which games a side takes: an interest sent to the peer limits catch-up,
/// pushes and anti-entropy to those games, and what arrives outside it
/// anyway is dropped before the replica.
@Suite struct InterestTests {
    /// Side 0 holds two games; side 1 takes only the second.
    static func twoGames() throws -> (Replica, first: Op, second: Op, author: OpAuthor) {
        let circle = Fixtures.circle(1)
        let ann = OpAuthor(identity: Fixtures.identity(1), circle: circle)
        var replica = Replica(circle: circle)
        let first = try Fixtures.genesis(by: ann, seed: 1)
        let second = try Fixtures.genesis(by: ann, seed: 2)
        replica.insert(first)
        replica.insert(second)
        return (replica, first, second, ann)
    }

    @Test func interestsEncodeAndDecode() throws {
        let a = GameID(unchecked: [UInt8](repeating: 1, count: 16))
        let b = GameID(unchecked: [UInt8](repeating: 2, count: 16))
        for interest in [GameInterest.everything, .allBut([a]), .only([a, b]), .only([])] {
            #expect(try SyncMessage(decoding: SyncMessage.interest(interest).encoded) == .interest(interest))
        }
        // The ids go in ascending order, whatever the set's order.
        #expect(SyncMessage.interest(.only([b, a])).encoded == [1, 2, 1, 2] + a.bytes + b.bytes)
        #expect(throws: ByteDecodingError.self) { try SyncMessage(decoding: [1, 2, 2, 0]) }  // unknown kind
        #expect(throws: ByteDecodingError.self) { try SyncMessage(decoding: [1, 2, 1, 1] + a.bytes + [0]) }  // trailing byte
        #expect(throws: ByteDecodingError.self) { try SyncMessage(decoding: [1, 2, 1, 2] + a.bytes) }  // cut short
    }

    @Test func aPeerIsSentOnlyTheGamesItTakes() throws {
        let (holder, first, second, ann) = try Self.twoGames()
        var pair = Pair(holder, Replica(circle: holder.circle))
        // Side 1 says what it takes before its summary, as the daemon does.
        pair.inbox[0] += pair.sessions[1].start(replica: pair.replicas[1], interest: .only([second.gameID]))
        pair.inbox[1] += pair.sessions[0].start(replica: pair.replicas[0])
        _ = try pair.run()
        #expect(pair.sessions[0].peerInterest == .only([second.gameID]))
        #expect(pair.replicas[1].state(of: second.gameID) != nil)
        #expect(pair.replicas[1].games[first.gameID] == nil, "no op of the game not taken was sent")

        // A move in each game: only the one in the game taken is pushed.
        var moves: [Op] = []
        for genesis in [first, second] {
            let game = try #require(pair.replicas[0].games[genesis.gameID])
            let move = try #require(try ann.peek(in: game, atMillis: 9))
            moves += pair.replicas[0].insert(move).accepted
        }
        let pushed = pair.sessions[0].push(moves, replica: pair.replicas[0])
        let games = pushed.flatMap { message -> [GameID] in
            guard case .ops(let segments) = message else { return [] }
            return segments.compactMap { $0.ops.last?.gameID }
        }
        #expect(games == [second.gameID])

        // Anti-entropy does not bring the other game either.
        pair.inbox[1] += pushed
        pair.inbox[0] += pair.sessions[1].tick(replica: pair.replicas[1])
        _ = try pair.run()
        #expect(pair.replicas[1].games[first.gameID] == nil)
        #expect(pair.replicas[1].state(of: second.gameID)?.digest == pair.replicas[0].state(of: second.gameID)?.digest)

        // Following it later: a new interest and summary bring it whole.
        pair.inbox[0] += pair.sessions[1].start(replica: pair.replicas[1], interest: .everything)
        _ = try pair.run()
        #expect(pair.replicas[1].state(of: first.gameID)?.digest == pair.replicas[0].state(of: first.gameID)?.digest)
    }

    @Test func summariesLeaveOutTheGamesThePeerForgotButNotThoseItDoesNotFollow() throws {
        var (holder, first, second, _) = try Self.twoGames()
        func summarised(_ messages: [SyncMessage]) -> Set<GameID> {
            var out = Set<GameID>()
            for case .summary(let games, _) in messages { out.formUnion(games.keys) }
            return out
        }
        var session = SyncSession()
        #expect(summarised(session.tick(replica: holder)) == [first.gameID, second.gameID])
        _ = session.receive(.interest(.allBut([first.gameID])), replica: &holder)
        #expect(summarised(session.tick(replica: holder)) == [second.gameID])
        #expect(summarised(session.start(replica: holder)) == [second.gameID])
        // A peer that takes only some games hears of the others, to follow them.
        _ = session.receive(.interest(.only([second.gameID])), replica: &holder)
        #expect(summarised(session.tick(replica: holder)) == [first.gameID, second.gameID])
    }

    @Test func opsOutsideTheInterestAreDroppedOnArrival() throws {
        let (holder, first, second, _) = try Self.twoGames()
        // A peer that was never told (an older daemon) sends both games.
        var sender = SyncSession()
        var receiver = SyncSession()
        var replica = Replica(circle: holder.circle)
        let summary = receiver.start(replica: replica)
        var sent: [SyncMessage] = []
        var held = holder
        for message in summary { sent += sender.receive(message, replica: &held).replies }
        var accepted: [Op] = []
        var unwanted = 0
        for message in sent {
            let step = receiver.receive(message, replica: &replica, taking: .allBut([first.gameID]))
            accepted += step.outcome.accepted
            unwanted += step.unwanted
        }
        #expect(unwanted == 1)
        #expect(accepted.map(\.gameID) == [second.gameID])
        #expect(replica.games[first.gameID] == nil)
        #expect(replica.rejectionCounts.isEmpty, "dropped, not refused")
    }

    @Test func forgettingAGameDropsItsOpsHeldAndWaiting() throws {
        var (replica, first, second, ann) = try Self.twoGames()
        let game = try #require(replica.games[first.gameID])
        let move = try #require(try ann.peek(in: game, atMillis: 3))
        replica.insert(move)
        let forgot = replica.forget(first.gameID)
        let again = replica.forget(first.gameID)
        #expect(forgot && !again)
        #expect(replica.games[first.gameID] == nil && replica.summary[first.gameID] == nil)
        #expect(replica.state(of: second.gameID) != nil)
        // It can come back whole.
        replica.insert(first)
        #expect(replica.insert(move).accepted.count == 1)
    }
}
