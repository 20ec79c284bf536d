import SweeperConventions
import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// Live pushes between two sessions: how they name games, what they leave
/// out, and what a receiver does with a reference it never gave.
@Suite struct LivePushTests {
    let circle = Fixtures.circle(5)
    let alice: OpAuthor
    let bob: OpAuthor

    init() {
        alice = OpAuthor(identity: Fixtures.identity(1), circle: circle)
        bob = OpAuthor(identity: Fixtures.identity(2), circle: circle)
    }

    /// Alice (side 0) and Bob (side 1), each holding `ops`, Bob pushing his own ops live.
    func pair(holding ops: [Op]) -> Pair {
        var replicas = [Replica(circle: circle), Replica(circle: circle)]
        for i in 0..<2 { for op in ops { replicas[i].insert(op) } }
        var pair = Pair(replicas[0], replicas[1])
        pair.sessions[0].peer = bob.identity.peerID
        pair.sessions[0].liveAuthor = alice.identity.peerID
        pair.sessions[1].peer = alice.identity.peerID
        pair.sessions[1].liveAuthor = bob.identity.peerID
        return pair
    }

    /// Bob flags the `n`th covered cell and pushes it; returns the op and the messages.
    func bobMarks(_ n: Int, in game: GameID, at millis: UInt64, _ pair: inout Pair) throws -> (Op, [SyncMessage]) {
        let held = try #require(pair.replicas[1].games[game])
        let board = try #require(held.state?.board)
        let cell = try #require((0..<81).filter { !board.isRevealed($0) }.dropFirst(n).first)
        let op = try #require(try bob.setMark(.flag, on: cell, in: held, atMillis: millis))
        #expect(pair.replicas[1].insert(op).accepted.count == 1)
        return (op, pair.sessions[1].push([op], replica: pair.replicas[1]))
    }

    @Test func aGameOfTheReceiversFirstSummaryGoesByItsPlace() throws {
        let genesis = try Fixtures.genesis(by: alice, seed: 3)
        var pair = pair(holding: [genesis])
        pair.start()
        _ = try pair.run()
        // A game Alice makes later, after her first summary: it has no place there.
        let later = try Fixtures.genesis(by: alice, seed: 4)
        for i in 0..<2 { pair.replicas[i].insert(later) }
        pair.inbox[1] += pair.sessions[0].tick(replica: pair.replicas[0])
        _ = try pair.run()

        let (mark, messages) = try bobMarks(0, in: genesis.gameID, at: 1_790_000_001_000, &pair)
        guard case .live(let pushed) = try #require(messages.first), messages.count == 1 else {
            Issue.record("not one live push: \(messages)")
            return
        }
        #expect(pushed.map(\.game) == [.summarized(0)])
        // The reference, the flag bits and the position; no game id, key, proof or signature.
        #expect(messages[0].encoded.count < 20, "\(messages[0].encoded.count) bytes")
        let step = pair.sessions[0].receive(try SyncMessage(decoding: messages[0].encoded), replica: &pair.replicas[0])
        #expect(step.violation == nil)
        #expect(step.outcome.accepted.map(\.hash) == [mark.hash], "rebuilt with the circle's proof for Bob, it is his op")
        #expect(pair.replicas[0].games[genesis.gameID]?.isUnsigned(author: bob.identity.peerID, seq: 1) == true)

        // The later game is not in Alice's first summary: named by id, then by the number it took.
        let (first, inLater) = try bobMarks(1, in: later.gameID, at: 1_790_000_002_000, &pair)
        let (second, again) = try bobMarks(2, in: later.gameID, at: 1_790_000_003_000, &pair)
        guard case .live(let one) = try #require(inLater.first), case .live(let two) = try #require(again.first) else {
            Issue.record("not live pushes")
            return
        }
        #expect(one.map(\.game) == [.new(later.gameID)] && two.map(\.game) == [.numbered(1)])
        for m in inLater + again {
            let step = pair.sessions[0].receive(try SyncMessage(decoding: m.encoded), replica: &pair.replicas[0])
            #expect(step.violation == nil)
        }
        #expect(pair.replicas[0].games[later.gameID]?.op(author: bob.identity.peerID, seq: 2)?.hash == second.hash)
        #expect(pair.replicas[0].games[later.gameID]?.op(author: bob.identity.peerID, seq: 1)?.hash == first.hash)

        // Bob's head signatures vouch for what Alice rebuilt: the same ops, byte for byte.
        let heads = pair.sessions[1].signHeads(replica: pair.replicas[1])
        guard case .heads(let signed) = try #require(heads.first) else {
            Issue.record("no heads message")
            return
        }
        #expect(Set(signed.map(\.game)) == [.summarized(0), .numbered(1)])
        let vouched = pair.sessions[0].receive(try SyncMessage(decoding: heads[0].encoded), replica: &pair.replicas[0])
        #expect(vouched.violation == nil && vouched.outcome.rejected.isEmpty)
        #expect(Set(vouched.outcome.signed.map(\.hash)) == [mark.hash, second.hash])
    }

    @Test func aGameTheReceiverNamedGoesByItsNumber() throws {
        var pair = pair(holding: [])
        pair.start()
        _ = try pair.run()
        // Alice makes a game while linked: her genesis goes live, naming it by id.
        let genesis = try Fixtures.genesis(by: alice, seed: 6)
        #expect(pair.replicas[0].insert(genesis).accepted.count == 1)
        let sent = pair.sessions[0].push([genesis], replica: pair.replicas[0])
        guard case .live(let pushed) = try #require(sent.first) else {
            Issue.record("the genesis did not go live: \(sent)")
            return
        }
        #expect(pushed.map(\.game) == [.new(genesis.gameID)])
        let took = pair.sessions[1].receive(try SyncMessage(decoding: sent[0].encoded), replica: &pair.replicas[1])
        #expect(took.violation == nil && took.outcome.accepted.map(\.hash) == [genesis.hash])

        // Bob's move names it by the number Alice gave it: no id.
        let (mark, messages) = try bobMarks(5, in: genesis.gameID, at: 1_790_000_001_000, &pair)
        guard case .live(let reply) = try #require(messages.first) else {
            Issue.record("not a live push: \(messages)")
            return
        }
        #expect(reply.map(\.game) == [.receiverNumbered(1)])
        #expect(messages[0].encoded.count < 20, "\(messages[0].encoded.count) bytes")
        let step = pair.sessions[0].receive(try SyncMessage(decoding: messages[0].encoded), replica: &pair.replicas[0])
        #expect(step.violation == nil && step.outcome.accepted.map(\.hash) == [mark.hash])
        // A number Alice never gave: the link drops.
        var unknown = reply[0]
        unknown.game = .receiverNumbered(2)
        #expect(pair.sessions[0].receive(.live([unknown]), replica: &pair.replicas[0]).violation != nil)
    }

    @Test func aPlaceOrNumberNeverGivenDropsTheLink() throws {
        let genesis = try Fixtures.genesis(by: alice, seed: 3)
        var pair = pair(holding: [genesis])
        let mark = LiveOp(game: .summarized(0), position: .absolute(seq: 1, lamport: 2, wall: 1), payload: .mark(cell: 0, mark: .flag), signature: nil)
        // Alice has sent no summary yet: no place is given.
        let early = pair.sessions[0].receive(.live([mark]), replica: &pair.replicas[0])
        #expect(early.violation != nil && early.outcome.accepted.isEmpty)

        pair = self.pair(holding: [genesis])
        _ = pair.sessions[0].start(replica: pair.replicas[0])
        var beyond = mark
        beyond.game = .summarized(1)
        let past = pair.sessions[0].receive(.live([beyond]), replica: &pair.replicas[0])
        #expect(past.violation != nil && past.outcome.accepted.isEmpty)
        var unnumbered = mark
        unnumbered.game = .numbered(1)
        let never = pair.sessions[0].receive(.live([unnumbered]), replica: &pair.replicas[0])
        #expect(never.violation != nil)
        let head = HeadSignature(game: .summarized(2), author: nil, seq: 1, signature: bob.identity.sign([0]))
        #expect(pair.sessions[0].receive(.heads([head]), replica: &pair.replicas[0]).violation != nil)
        // Place 0 is the game: taken.
        let taken = pair.sessions[0].receive(.live([mark]), replica: &pair.replicas[0])
        #expect(taken.violation == nil && taken.outcome.accepted.count == 1)
    }

    @Test func referencesRoundTripAndRefuseWhatIsPastTheLimit() throws {
        let refs: [LinkGameRef] = [
            .new(GameID(unchecked: Array(0..<16))), .numbered(1), .numbered(LinkGameRef.limit),
            .receiverNumbered(1), .receiverNumbered(LinkGameRef.limit), .summarized(0), .summarized(LinkGameRef.limit - 1),
        ]
        for ref in refs {
            for signature in [nil, bob.identity.sign([1])] {
                let op = LiveOp(game: ref, position: .next(lamportStep: 0, wallChange: -5), payload: .mark(cell: 3, mark: .none), signature: signature)
                #expect(try SyncMessage(decoding: SyncMessage.live([op]).encoded) == .live([op]))
            }
        }
        // Reference code 3 × limit + 1 (number limit + 1), with no flags: refused on decoding.
        var w = ByteWriter()
        w.append([1, 3])
        w.varint((UInt64(LinkGameRef.limit) * 3 + 1) << 2)
        w.varint(0)
        w.varint(0)
        OpPayload.mark(cell: 0, mark: .flag).encode(into: &w)
        #expect(throws: ByteDecodingError.self) { try SyncMessage(decoding: w.bytes) }
    }
}
