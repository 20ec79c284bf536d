import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// Peer protocol 18 between two sessions: Bob pushes his moves before he
/// keeps them, and Alice lets a move he lost go when he says what he kept.
@Suite struct ProvisionalTests {
    let circle = Fixtures.circle(7)
    let alice: OpAuthor
    let bob: OpAuthor

    init() {
        alice = OpAuthor(identity: Fixtures.identity(1), circle: circle)
        bob = OpAuthor(identity: Fixtures.identity(2), circle: circle)
    }

    /// Alice (side 0) and Bob (side 1) on a link of protocol 18 (or not),
    /// holding `alicesOps` and `bobsOps`, their sessions started.
    func link(_ alicesOps: [Op], _ bobsOps: [Op], provisional: Bool = true) throws -> Pair {
        var replicas = [Replica(circle: circle), Replica(circle: circle)]
        for op in alicesOps { replicas[0].insert(vouchedIfUnsigned: op) }
        for op in bobsOps { replicas[1].insert(op) }
        var pair = Pair(replicas[0], replicas[1])
        for (i, me, peer) in [(0, alice, bob), (1, bob, alice)] {
            pair.sessions[i].peer = peer.identity.peerID
            pair.sessions[i].liveAuthor = me.identity.peerID
            pair.sessions[i].provisional = provisional
        }
        pair.start()
        // As the daemon does once the hello came: ask for the signatures of what is held unsigned.
        pair.inbox[1] += pair.sessions[0].askForSignatures(replica: pair.replicas[0])
        return pair
    }

    /// Delivers until both sides are quiet; the violations either side saw.
    func run(_ pair: inout Pair) throws -> (violations: [String], replaced: [Op]) {
        var violations: [String] = []
        var replaced: [Op] = []
        while let i = (0..<2).first(where: { !pair.inbox[$0].isEmpty }) {
            let message = try SyncMessage(decoding: pair.inbox[i].removeFirst().encoded)
            let step = pair.sessions[i].receive(message, replica: &pair.replicas[i])
            if let v = step.violation { violations.append(v) }
            replaced += step.outcome.replaced
            pair.inbox[1 - i] += step.replies
        }
        return (violations, replaced)
    }

    /// Bob's flag on the `n`th covered cell of `game` as his replica holds it, put in it.
    func bobMarks(_ n: Int, in game: GameID, at millis: UInt64, _ replica: inout Replica) throws -> Op {
        let held = try #require(replica.games[game])
        let board = try #require(held.state?.board)
        let cell = try #require((0..<81).filter { !board.isRevealed($0) }.dropFirst(n).first)
        let op = try #require(try bob.setMark(.flag, on: cell, in: held, atMillis: millis))
        #expect(replica.insert(op).accepted.count == 1)
        return op
    }

    @Test func aMovePushedBeforeItIsKeptGoesUnsignedAndItsSignatureFollowsTheCommit() throws {
        let genesis = try Fixtures.genesis(by: alice, seed: 3)
        var pair = try link([genesis], [genesis])
        _ = try run(&pair)
        for i in 0..<SyncSession.headInterval {
            let op = try bobMarks(i, in: genesis.gameID, at: 1_790_000_000_000 + UInt64(i), &pair.replicas[1])
            let before = pair.sessions[1].pushBeforeKeeping([op], replica: pair.replicas[1])
            guard case .live(let pushed) = try #require(before.first), before.count == 1 else {
                Issue.record("not one live push: \(before)")
                return
            }
            // Not even the 32nd, which a push after the commit signs.
            #expect(pushed.allSatisfy { $0.signature == nil })
            pair.inbox[0] += before
            // Kept: the push after the commit has nothing new, and the head is due at the 32nd.
            let after = pair.sessions[1].push([op], replica: pair.replicas[1])
            #expect(after.isEmpty)
            let heads = pair.sessions[1].signDueHeads(replica: pair.replicas[1])
            if i + 1 < SyncSession.headInterval {
                #expect(heads.isEmpty)
            } else {
                guard case .heads(let signed) = try #require(heads.first) else {
                    Issue.record("no heads message: \(heads)")
                    return
                }
                #expect(signed.map(\.seq) == [UInt64(SyncSession.headInterval)])
                pair.inbox[0] += heads
            }
        }
        let (violations, replaced) = try run(&pair)
        #expect(violations.isEmpty && replaced.isEmpty)
        let held = try #require(pair.replicas[0].games[genesis.gameID])
        #expect(held.chainLength(of: bob.identity.peerID) == UInt64(SyncSession.headInterval))
        #expect(held.firstUnsigned(of: bob.identity.peerID) == nil, "the head signature covers every op")
    }

    @Test func nothingGoesBeforeTheCommitOnALinkOfAnEarlierVersion() throws {
        let genesis = try Fixtures.genesis(by: alice, seed: 3)
        var pair = try link([genesis], [genesis], provisional: false)
        _ = try run(&pair)
        let op = try bobMarks(0, in: genesis.gameID, at: 1_790_000_000_000, &pair.replicas[1])
        #expect(pair.sessions[1].pushBeforeKeeping([op], replica: pair.replicas[1]).isEmpty)
        #expect(!pair.sessions[1].push([op], replica: pair.replicas[1]).isEmpty, "it goes after the commit, as before")
    }

    /// Bob kept `kept` moves, then pushed one more and stopped before
    /// keeping it: Alice holds them all, unsigned (he never paused).
    func bobLosesAMove(kept: Int) throws -> (genesis: Op, bobs: [Op], lost: Op, alices: [Op]) {
        let genesis = try Fixtures.genesis(by: alice, seed: 3)
        var pair = try link([genesis], [genesis])
        _ = try run(&pair)
        var bobs: [Op] = [genesis]
        for i in 0...kept {
            let op = try bobMarks(i, in: genesis.gameID, at: 1_790_000_000_000 + UInt64(i), &pair.replicas[1])
            pair.inbox[0] += pair.sessions[1].pushBeforeKeeping([op], replica: pair.replicas[1])
            if i < kept { bobs.append(op) }
        }
        _ = try run(&pair)
        let lost = try #require(pair.replicas[1].games[genesis.gameID]?.op(author: bob.identity.peerID, seq: UInt64(kept + 1)))
        let alices = try #require(try pair.replicas[0].games[genesis.gameID]?.allOps())
        #expect(alices.contains { $0.hash == lost.hash }, "Alice took the move before it was lost")
        return (genesis, bobs, lost, alices)
    }

    @Test func whatTheAuthorSaysItKeptDropsTheMoveItLost() throws {
        let (genesis, bobs, lost, alices) = try bobLosesAMove(kept: 3)
        // Bob starts again from what he kept: his summary on the new link says so.
        var pair = try link(alices, bobs)
        let (violations, replaced) = try run(&pair)
        #expect(violations.isEmpty)
        #expect(replaced.map(\.hash) == [lost.hash])
        let held = try #require(pair.replicas[0].games[genesis.gameID])
        #expect(held.chainLength(of: bob.identity.peerID) == 3)
        #expect(held.equivocators.isEmpty)
        // His next move takes the place, as any other.
        let next = try bobMarks(5, in: genesis.gameID, at: 1_790_000_009_000, &pair.replicas[1])
        #expect(next.seq == lost.seq && next.hash != lost.hash)
        pair.inbox[0] += pair.sessions[1].pushBeforeKeeping([next], replica: pair.replicas[1])
        #expect(try run(&pair).violations.isEmpty)
        #expect(pair.replicas[0].state(of: genesis.gameID)?.digest == pair.replicas[1].state(of: genesis.gameID)?.digest)
    }

    /// Bob's move after `bobs`, what he kept: made again before the link
    /// came back, his chain is as long as what Alice holds.
    func bobMovesAgain(after bobs: [Op], in game: GameID) throws -> Op {
        var bobsReplica = Replica(circle: circle)
        for op in bobs { bobsReplica.insert(op) }
        return try bobMarks(6, in: game, at: 1_790_000_009_000, &bobsReplica)
    }

    @Test func aHeadOfTheAuthorsOwnThatDoesNotMatchDropsTheMoveItLost() throws {
        let (genesis, bobs, lost, alices) = try bobLosesAMove(kept: 3)
        let moved = try bobMovesAgain(after: bobs, in: genesis.gameID)
        #expect(moved.seq == lost.seq)
        var pair = try link(alices, bobs + [moved])
        let (violations, replaced) = try run(&pair)
        #expect(violations.isEmpty, "a head over a move its author lost is not a violation")
        // Every op of Bob's held unsigned goes, and comes back signed in the segment the summary asks for.
        #expect(replaced.map(\.hash) == alices.filter { $0.author == bob.identity.peerID }.map(\.hash))
        #expect(pair.replicas[0].games[genesis.gameID]?.firstUnsigned(of: bob.identity.peerID) == nil)
        let held = try #require(pair.replicas[0].games[genesis.gameID])
        #expect(held.op(author: bob.identity.peerID, seq: lost.seq)?.hash == moved.hash)
        #expect(held.equivocators.isEmpty)
        #expect(pair.replicas[0].state(of: genesis.gameID)?.digest == pair.replicas[1].state(of: genesis.gameID)?.digest)
    }

    @Test func onALinkOfAnEarlierVersionSuchAHeadIsStillAViolation() throws {
        let (genesis, bobs, lost, alices) = try bobLosesAMove(kept: 3)
        let moved = try bobMovesAgain(after: bobs, in: genesis.gameID)
        var pair = try link(alices, bobs + [moved], provisional: false)
        let (violations, replaced) = try run(&pair)
        #expect(violations == ["a head signature that is not its author's"])
        #expect(replaced.isEmpty)
        #expect(pair.replicas[0].games[genesis.gameID]?.op(author: bob.identity.peerID, seq: lost.seq)?.hash == lost.hash)
    }

    @Test func onTheAuthorsWordOnlyItsNewestMoveGivesWay() throws {
        let (genesis, bobs, lost, alices) = try bobLosesAMove(kept: 3)
        let moved = try bobMovesAgain(after: bobs, in: genesis.gameID).with(signature: nil)
        var replica = Replica(circle: circle)
        for op in alices { replica.insert(vouchedIfUnsigned: op) }
        // Not on a link of protocol 18: a conflict, as before.
        var earlier = replica
        #expect(earlier.insert(vouched: moved).rejection(of: moved) == .conflictingOp)
        // On one: the newest move held unsigned takes it.
        let outcome = replica.insert(vouched: moved, givingWay: true)
        #expect(outcome.replaced.map(\.hash) == [lost.hash] && outcome.accepted.map(\.hash) == [moved.hash])
        // An older place, on the author's word alone: a conflict.
        let older = try #require(bobs.last).with(signature: nil)
        let other = Op(
            gameID: older.gameID, author: older.author, seq: older.seq, lamport: older.lamport, previous: older.previous,
            wallClockMillis: older.wallClockMillis + 1, membershipProof: older.membershipProof, payload: older.payload, signature: nil)
        #expect(replica.insert(vouched: other, givingWay: true).rejection(of: other) == .conflictingOp)
    }
}

extension Replica {
    /// Inserts `op` signed, or vouched for (as a live push) when it has no signature.
    @discardableResult
    mutating func insert(vouchedIfUnsigned op: Op) -> InsertOutcome {
        op.signature == nil ? insert(vouched: op) : insert(op)
    }
}
