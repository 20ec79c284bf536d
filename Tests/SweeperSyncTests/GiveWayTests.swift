import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// Ops held on their author's link's word (live pushes, no signature yet)
/// give way to a different op of their author at their place that carries
/// the author's proof: what is left of an author that pushed a move and
/// stopped before keeping it, then made another at that place. Two signed
/// ops at one place are still a conflict.
@Suite struct GiveWayTests {
    let circle = Fixtures.circle(4)
    let forge = Forge(circle: Fixtures.circle(4))
    let bob = Fixtures.identity(2)

    /// Alice's game with Bob's first `signed` flag ops signed and his next
    /// `live` ones held as a live push brings them (no signature).
    func replicaWithLiveTail(signed: Int, live: Int) throws -> (Replica, genesis: Op, ops: [Op]) {
        let (genesis, ops) = try Fixtures.flagRun(in: circle, moves: signed + live)
        var replica = Replica(circle: circle)
        replica.insert(genesis)
        for op in ops.prefix(signed) { #expect(replica.insert(op).accepted.count == 1) }
        for op in ops.dropFirst(signed) { #expect(replica.insert(vouched: op.with(signature: nil)).accepted.count == 1) }
        return (replica, genesis, ops)
    }

    /// Bob's op at `seq` after `previous` that is not his flag run's.
    func another(_ genesis: Op, seq: UInt64, previous: OpHash) -> Op {
        forge.op(bob, game: genesis.gameID, seq: seq, lamport: seq + 1, previous: previous, payload: .assisted)
    }

    @Test func aSignedOpTakesThePlaceOfALivePushAndTheTailAfterIt() throws {
        var (replica, genesis, ops) = try replicaWithLiveTail(signed: 3, live: 2)
        #expect(replica.games[genesis.gameID]?.isUnsigned(author: bob.peerID, seq: 4) == true)
        let mine = another(genesis, seq: 4, previous: ops[2].hash)

        let outcome = replica.insert(mine)

        #expect(outcome.rejected.isEmpty)
        #expect(outcome.accepted.map(\.hash) == [mine.hash])
        #expect(outcome.replaced.map(\.hash) == [ops[3].hash, ops[4].hash])
        let game = try #require(replica.games[genesis.gameID])
        #expect(game.equivocators.isEmpty)
        #expect(game.chainLength(of: bob.peerID) == 4)
        #expect(game.op(author: bob.peerID, seq: 4)?.hash == mine.hash)
        // The board is what the ops that stay make, as a replica that never saw the live ones has it.
        var fresh = Replica(circle: circle)
        for op in [genesis] + ops.prefix(3) + [mine] { fresh.insert(op) }
        #expect(replica.state(of: genesis.gameID)?.digest == fresh.state(of: genesis.gameID)?.digest)
    }

    @Test func aSignedSegmentFromAnotherPeerTakesThePlaceOfALivePush() throws {
        var (replica, genesis, ops) = try replicaWithLiveTail(signed: 2, live: 3)
        // Carol holds Bob's chain as he kept it: his first two ops, then two others.
        let third = another(genesis, seq: 3, previous: ops[1].hash)
        let fourth = forge.op(bob, game: genesis.gameID, seq: 4, lamport: 5, previous: third.hash, payload: .assisted)
        var carol = Replica(circle: circle)
        for op in [genesis] + ops.prefix(2) + [third, fourth] { carol.insert(op) }
        var held = VersionVector()
        held.advance(genesis.author, to: 1)
        held.advance(bob.peerID, to: 2)
        let segments = carol.segments(for: genesis.gameID, after: held)
        #expect(segments.count == 1)

        var outcome = InsertOutcome()
        for segment in segments { outcome.merge(replica.insert(segment)) }

        #expect(outcome.rejected.isEmpty)
        #expect(outcome.replaced.map(\.hash) == ops[2...].map(\.hash))
        #expect(outcome.accepted.map(\.hash) == [third.hash, fourth.hash])
        #expect(replica.games[genesis.gameID]?.equivocators.isEmpty == true)
        #expect(replica.state(of: genesis.gameID)?.digest == carol.state(of: genesis.gameID)?.digest)
    }

    @Test func aSignedOpThatNamesAnotherOpBeforeItLetsTheOneHeldUnsignedGo() throws {
        var (replica, genesis, ops) = try replicaWithLiveTail(signed: 3, live: 1)
        // Bob's fourth op as he kept it, and a fifth after it; the fifth comes first.
        let fourth = another(genesis, seq: 4, previous: ops[2].hash)
        let fifth = forge.op(bob, game: genesis.gameID, seq: 5, lamport: 6, previous: fourth.hash, payload: .assisted)

        let first = replica.insert(fifth)

        #expect(first.rejected.isEmpty, "not a broken chain")
        #expect(first.replaced.map(\.hash) == [ops[3].hash])
        #expect(first.waiting == 1 && first.accepted.isEmpty)
        let then = replica.insert(fourth)
        #expect(then.accepted.map(\.hash) == [fourth.hash, fifth.hash])
        #expect(replica.games[genesis.gameID]?.equivocators.isEmpty == true)
    }

    @Test func aSignedOpAtAPlaceASignatureCoversIsStillAConflict() throws {
        var (replica, genesis, ops) = try replicaWithLiveTail(signed: 3, live: 2)
        // Bob's head signature comes for his fifth op: it covers the fourth too.
        let signature = try #require(ops[4].signature)
        #expect(replica.attach(signature, to: ChainHead(game: genesis.gameID, author: bob.peerID, seq: 5)).signed.count == 1)
        #expect(replica.games[genesis.gameID]?.isUnsigned(author: bob.peerID, seq: 4) == false)
        let mine = another(genesis, seq: 4, previous: ops[2].hash)

        let outcome = replica.insert(mine)

        #expect(outcome.rejection(of: mine) == .conflictingOp)
        #expect(outcome.replaced.isEmpty)
        #expect(replica.games[genesis.gameID]?.equivocators == [bob.peerID])
        #expect(replica.games[genesis.gameID]?.chainLength(of: bob.peerID) == 5)
    }

    @Test func anOpWithoutItsAuthorsSignatureTakesNoPlace() throws {
        var (replica, genesis, ops) = try replicaWithLiveTail(signed: 3, live: 2)
        // Not Bob's signature: refused before anything gives way.
        let forged = another(genesis, seq: 4, previous: ops[2].hash).with(signature: ops[0].signature)

        let outcome = replica.insert(forged)

        #expect(outcome.rejection(of: forged) == .badSignature)
        #expect(outcome.replaced.isEmpty)
        #expect(replica.games[genesis.gameID]?.chainLength(of: bob.peerID) == 5)
        #expect(replica.games[genesis.gameID]?.op(author: bob.peerID, seq: 4)?.hash == ops[3].hash)
    }
}
