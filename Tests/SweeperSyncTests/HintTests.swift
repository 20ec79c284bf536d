import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// Hints and a chosen seed are ops: every replica knows who asked for how
/// many hints and that a game is practice, and peers too old to read them
/// are not sent such games.
@Suite struct HintTests {
    @Test func hintsAreCountedPerPlayerInAnyOrderAndOnlyTheCreatorSeeds() throws {
        let circle = Fixtures.circle(1)
        let ann = OpAuthor(identity: Fixtures.identity(1), circle: circle)
        let bob = OpAuthor(identity: Fixtures.identity(2), circle: circle)
        var replica = Replica(circle: circle)
        let genesis = try Fixtures.genesis(by: ann, seed: 7)
        replica.insert(genesis)
        var ops: [Op] = []
        for (author, cell) in [(ann, 1), (bob, 2), (bob, 3)] {
            let game = try #require(replica.games[genesis.gameID])
            let op = try author.hint(cell, in: game, atMillis: 10)
            #expect(replica.insert(op).accepted.count == 1)
            ops.append(op)
        }
        let game = try #require(replica.games[genesis.gameID])
        #expect(throws: MoveError.notTheCreator) { try bob.seeded(in: game, atMillis: 11) }
        let seeded = try #require(try ann.seeded(in: game, atMillis: 11))
        #expect(replica.insert(seeded).accepted.count == 1)
        let state = try #require(replica.state(of: genesis.gameID))
        #expect(state.hintsBy == [ann.identity.peerID: 1, bob.identity.peerID: 2])
        #expect(state.isAssisted && state.isSeeded && state.assistedBy.isEmpty)

        // Another replica given the same ops in reverse order agrees.
        var other = Replica(circle: circle)
        other.insert(genesis)
        for op in ([seeded] + ops).reversed() { other.insert(op) }
        #expect(other.state(of: genesis.gameID)?.digest == state.digest)
        #expect(other.state(of: genesis.gameID)?.hintsBy == state.hintsBy)
    }

    @Test func aPeerThatDoesNotReadHintsIsNotSentSuchGames() throws {
        var (holder, plain, hinted, ann) = try InterestTests.twoGames()
        let circle = holder.circle
        holder.insert(try ann.hint(0, in: try #require(holder.games[hinted.gameID]), atMillis: 5))
        var pair = Pair(holder, Replica(circle: circle))
        pair.sessions[0].peerReads.remove(.hints)
        pair.start()
        _ = try pair.run()
        #expect(pair.replicas[1].state(of: plain.gameID) != nil)
        #expect(pair.replicas[1].games[hinted.gameID] == nil, "a game with a hint op went to a peer that cannot read it")
        // One that reads them gets it.
        var fresh = Pair(holder, Replica(circle: circle))
        fresh.start()
        _ = try fresh.run()
        #expect(fresh.replicas[1].state(of: hinted.gameID)?.hintsBy == [ann.identity.peerID: 1])
    }
}
