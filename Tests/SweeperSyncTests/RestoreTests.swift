import SweeperCrypto
import Testing

@testable import SweeperSync

/// A restart rebuilds games from the store with one signature check per
/// chain: the newest signed op of each run of an author's ops, whose hash
/// chain proves the ops before it. Anything that does not chain is checked
/// op by op, as every op was before.
@Suite struct RestoreTests {
    let circle = Fixtures.circle(4)

    /// `op` with a signature that is not its author's.
    func damaged(_ op: Op) -> Op {
        op.with(signature: Fixtures.identity(9).sign(Op.signatureDomain + op.canonicalBytes))
    }

    /// What inserting `ops` one by one, in seq order, accepts: the rule a
    /// restore must give the same answer as wherever the ops chain.
    func oneByOne(_ genesis: Op, _ ops: [Op]) -> (accepted: [UInt64], rejected: [UInt64]) {
        var r = Replica(circle: circle)
        r.insert(genesis)
        var accepted: [UInt64] = [], rejected: [UInt64] = []
        for op in ops {
            let outcome = r.insert(op)
            accepted += outcome.accepted.map(\.seq)
            rejected += outcome.rejected.map(\.seq)
        }
        return (accepted, rejected)
    }

    func restored(_ genesis: Op, _ ops: [Op]) -> (replica: Replica, accepted: [UInt64], rejected: [UInt64]) {
        var r = Replica(circle: circle)
        let outcome = r.restore([genesis] + ops.reversed())
        let bob = ops[0].author
        return (r, outcome.accepted.filter { $0.author == bob }.map(\.seq).sorted(), outcome.rejected.filter { $0.author == bob }.map(\.seq).sorted())
    }

    @Test func aChainThatHoldsIsProvenByItsNewestSignature() throws {
        let (genesis, ops) = try Fixtures.flagRun(in: circle, moves: 20)
        #expect(Replica.provenSeqs(ops) == [1...20])
        // A middle op's own signature is damaged; its hash, which the next op
        // names, is not. The newest op's signature proves it is Bob's.
        var stored = ops
        stored[9] = damaged(ops[9])
        #expect(!stored[9].hasValidSignature, "the damage shows on its own: the test would show nothing")
        #expect(oneByOne(genesis, stored).rejected.first == 10, "checked on its own, the damaged op is refused")
        let (replica, accepted, rejected) = restored(genesis, stored)
        #expect(accepted == Array(1...20) && rejected.isEmpty, "accepted \(accepted), refused \(rejected)")
        #expect(replica.games[genesis.gameID]?.chainLength(of: ops[0].author) == 20)
    }

    @Test func aDamagedNewestSignatureIsStillRefused() throws {
        let (genesis, ops) = try Fixtures.flagRun(in: circle, moves: 12)
        var stored = ops
        stored[11] = damaged(ops[11])
        #expect(Replica.provenSeqs(stored).isEmpty)
        let (_, accepted, rejected) = restored(genesis, stored)
        let expected = oneByOne(genesis, stored)
        #expect(accepted == Array(1...11) && rejected == [12])
        #expect(accepted == expected.accepted.sorted() && rejected == expected.rejected.sorted())
    }

    @Test func anOpThatBreaksTheChainIsCheckedOpByOp() throws {
        let (genesis, ops) = try Fixtures.flagRun(in: circle, moves: 10)
        // A second op at seq 5, signed by Bob: two records at one place. The
        // run no longer chains past it, so each op is checked on its own.
        let forge = Forge(circle: circle)
        let other = forge.op(
            Fixtures.identity(2), game: genesis.gameID, seq: 5, lamport: ops[4].lamport, previous: ops[3].hash,
            payload: ops[4].payload, wall: 99)
        var stored = ops
        stored[4] = other
        #expect(Replica.provenSeqs(stored) == [])
        let (_, accepted, rejected) = restored(genesis, stored)
        let expected = oneByOne(genesis, stored)
        #expect(accepted == expected.accepted.sorted() && rejected == expected.rejected.sorted(), "restored \(accepted) \(rejected), one by one \(expected)")
        #expect(accepted == [1, 2, 3, 4, 5] && rejected.contains(6))
    }

    @Test func eachRunOfSeqsIsProvenOnItsOwn() throws {
        let (_, ops) = try Fixtures.flagRun(in: circle, moves: 9)
        // Seqs 1–3 and 6–9 are held; 4 and 5 are not. The second run's first
        // op names a hash the first run does not end with, and that is fine:
        // each run is proven by its own newest signature.
        let stored = Array(ops[0..<3]) + Array(ops[5...])
        #expect(Replica.provenSeqs(stored) == [1...3, 6...9])
        // Unsigned ops after the newest signed one are not proven.
        let unsignedTail = Array(ops[0..<6]) + ops[6...].map { $0.with(signature: nil) }
        #expect(Replica.provenSeqs(unsignedTail) == [1...6])
    }
}
