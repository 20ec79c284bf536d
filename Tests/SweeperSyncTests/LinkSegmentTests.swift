import SweeperConventions
import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// Chain segments in the link's compact form (sync message type 8): what
/// a catch-up and a relay carry between peers of protocol 15.
@Suite struct LinkSegmentTests {
    /// Side 0 holds a game of three authors (it made the genesis), side 1
    /// only its genesis; both take the compact form.
    struct Scene {
        var world: OpWorld
        var pair: Pair
        var receiver = Fixtures.identity(77)

        init(seed: UInt64, steps: Int = 120) throws {
            world = try OpWorld.make(seed: seed, steps: steps)
            var full = Replica(circle: world.circle)
            for op in world.allOps { full.insert(op) }
            var fresh = Replica(circle: world.circle)
            fresh.insert(world.allOps[0])
            pair = Pair(full, fresh)
            pair.sessions[0].peer = receiver.peerID
            pair.sessions[0].liveAuthor = world.authors[0].identity.peerID
            pair.sessions[1].peer = world.authors[0].identity.peerID
            pair.sessions[1].liveAuthor = receiver.peerID
            for i in 0..<2 { pair.sessions[i].peerTakesChains = true }
        }

        var sender: PeerID { world.authors[0].identity.peerID }

        /// Both summaries delivered; what side 0 answers side 1's with.
        mutating func catchUp() throws -> [SyncMessage] {
            let first = pair.sessions[0].start(replica: pair.replicas[0])
            let second = pair.sessions[1].start(replica: pair.replicas[1])
            for m in first { _ = pair.sessions[1].receive(try SyncMessage(decoding: m.encoded), replica: &pair.replicas[1]) }
            var answer: [SyncMessage] = []
            for m in second { answer += pair.sessions[0].receive(try SyncMessage(decoding: m.encoded), replica: &pair.replicas[0]).replies }
            return answer
        }
    }

    @Test func aCatchUpNamesGameAndAuthorsAsTheLinkKnowsThem() throws {
        var scene = try Scene(seed: 41)
        let answer = try scene.catchUp()
        guard case .chains(let chains)? = answer.first, answer.count == 1 else {
            Issue.record("not one chains message: \(answer)")
            return
        }
        let game = scene.world.gameID
        let plain = scene.pair.replicas[0].segments(for: game, after: VersionVector(heads: [scene.sender: 1]))
        #expect(chains.count == plain.count && chains.count >= 3)
        // The game by its place in the receiver's summary, the sender's own
        // chain as the sender's, the others by their place in its summary,
        // and no previous hash: the receiver holds the op before each.
        #expect(chains.allSatisfy { $0.game == .summarized(0) && $0.previous == nil })
        let authors = chains.map(\.author)
        #expect(authors.filter { $0 == .sender }.count == 1)
        #expect(authors.filter { if case .summarized = $0 { true } else { false } }.count == chains.count - 1)
        // Per segment, a game id, a key, a proof and a hash less (each but one).
        let compact = answer[0].encoded.count
        let full = SyncMessage.ops(plain).encoded.count
        #expect(full - compact >= chains.count * (16 + 32 + 16 + 32) - 32 - 4 * chains.count, "\(full) → \(compact) bytes")

        let step = scene.pair.sessions[1].receive(try SyncMessage(decoding: answer[0].encoded), replica: &scene.pair.replicas[1])
        #expect(step.violation == nil && step.outcome.rejected.isEmpty)
        #expect(step.outcome.accepted.count == scene.world.allOps.count - 1)
        #expect(scene.pair.replicas[1].state(of: game)?.digest == scene.pair.replicas[0].state(of: game)?.digest)
        #expect(scene.pair.sessions[1].games(in: answer[0]) == [game])
    }

    @Test func aRelayNamesANewAuthorByKeyAndAKnownOneByPlace() throws {
        // The first seed from 42 whose game still plays: there are moves to make.
        var scene = try Scene(seed: 42, steps: 30)
        var seed: UInt64 = 42
        while scene.pair.replicas[0].state(of: scene.world.gameID)?.status != .playing && seed < 142 {
            seed += 1
            scene = try Scene(seed: seed, steps: 30)
        }
        for m in try scene.catchUp() { _ = scene.pair.sessions[1].receive(m, replica: &scene.pair.replicas[1]) }
        let game = scene.world.gameID
        // A member that is not in the sender's first summary moves; so does one that is.
        let newcomer = OpAuthor(identity: Fixtures.identity(8), circle: scene.world.circle)
        let held = try #require(scene.pair.replicas[0].games[game])
        let cell = try #require((0..<64).first { !(held.state?.board.isRevealed($0) ?? true) })
        let first = try #require(try newcomer.setMark(.flag, on: cell, in: held, atMillis: 1_790_000_100_000))
        let known = scene.world.authors[1]
        let second = try #require(try known.setMark(.question, on: cell, in: held, atMillis: 1_790_000_100_001))
        #expect(scene.pair.replicas[0].insert(first).accepted.count == 1)
        #expect(scene.pair.replicas[0].insert(second).accepted.count == 1)
        let pushed = scene.pair.sessions[0].push([first, second], replica: scene.pair.replicas[0])
        guard case .chains(let chains)? = pushed.first, pushed.count == 1 else {
            Issue.record("not one chains message: \(pushed)")
            return
        }
        #expect(chains.map(\.author).contains(.key(newcomer.identity.peerID)))
        #expect(chains.contains { if case .summarized = $0.author { $0.firstSeq > 1 && $0.previous == nil } else { false } })
        let step = scene.pair.sessions[1].receive(try SyncMessage(decoding: pushed[0].encoded), replica: &scene.pair.replicas[1])
        #expect(Set(step.outcome.accepted.map(\.hash)) == [first.hash, second.hash] && step.violation == nil)
    }

    @Test func aSegmentAfterAnOpNotHeldIsDroppedAndASummaryAsksForTheRest() throws {
        var scene = try Scene(seed: 43)
        let answer = try scene.catchUp()
        #expect(answer.count == 1)
        // The receiver lacks the first op of another author's chain (as after
        // a catch-up its sender dropped): the rest of the chain, sent without
        // the hash before it, cannot be rebuilt.
        let game = scene.world.gameID
        let held = try #require(scene.pair.replicas[0].games[game])
        let author = try #require(held.authors.first { $0 != scene.sender && held.chainLength(of: $0) >= 2 })
        let tail = try #require(held.segment(of: author, after: 1))
        let later = try #require(LinkSegment(tail, game: .summarized(0), author: .key(author), previousKnown: true))
        #expect(later.previous == nil && later.firstSeq == 2)
        let step = scene.pair.sessions[1].receive(try SyncMessage(decoding: SyncMessage.chains([later]).encoded), replica: &scene.pair.replicas[1])
        #expect(step.outcome.accepted.isEmpty && step.outcome.rejected.isEmpty && step.violation == nil)
        guard case .summary(_, let wantsReply)? = step.replies.first else {
            Issue.record("no summary asked: \(step.replies)")
            return
        }
        #expect(wantsReply)
        // With the hash given, the same ops wait for the one before them, and
        // go in with the catch-up.
        var given = later
        given.previous = tail.ops.first?.previous
        let waiting = scene.pair.sessions[1].receive(.chains([given]), replica: &scene.pair.replicas[1])
        #expect(waiting.outcome.accepted.isEmpty && waiting.outcome.rejected.isEmpty && waiting.replies.isEmpty)
        let taken = scene.pair.sessions[1].receive(answer[0], replica: &scene.pair.replicas[1])
        #expect(taken.outcome.rejected.isEmpty && taken.violation == nil)
        #expect(scene.pair.replicas[1].state(of: game)?.digest == scene.pair.replicas[0].state(of: game)?.digest)
    }

    @Test func namesNeverGivenCloseTheLink() throws {
        let scene = try Scene(seed: 44)
        let segment = try #require(scene.pair.replicas[0].games[scene.world.gameID]?.segment(of: scene.sender, after: 1))
        // Before the sender's summary came, an author by place names nothing.
        let byPlace = try #require(LinkSegment(segment, game: .new(scene.world.gameID), author: .summarized(0), previousKnown: false))
        var replica = scene.pair.replicas[1]
        var session = scene.pair.sessions[1]
        #expect(session.receive(.chains([byPlace]), replica: &replica).violation != nil)
        // A game number never given.
        let byNumber = try #require(LinkSegment(segment, game: .numbered(1), author: .sender, previousKnown: false))
        session = scene.pair.sessions[1]
        #expect(session.receive(.chains([byNumber]), replica: &replica).violation != nil)
        #expect(replica.games[scene.world.gameID]?.opCount == 1)
        // By id and key it is taken, and a game given by id in a chains
        // message takes no number: live pushes still number from 1.
        let byID = try #require(LinkSegment(segment, game: .new(scene.world.gameID), author: .key(scene.sender), previousKnown: false))
        session = scene.pair.sessions[1]
        let step = session.receive(.chains([byID]), replica: &replica)
        #expect(step.violation == nil && step.outcome.accepted.count == segment.ops.count)
        #expect(session.receive(.chains([byNumber]), replica: &replica).violation != nil)
    }

    @Test func encodingRoundTripsAndRefusesWhatIsMalformed() throws {
        let scene = try Scene(seed: 45)
        let segment = try #require(scene.pair.replicas[0].games[scene.world.gameID]?.segment(of: scene.sender, after: 1))
        for (game, author, known) in [
            (LinkGameRef.new(scene.world.gameID), LinkSegment.Author.key(scene.sender), false),
            (.numbered(2), .sender, true), (.summarized(7), .summarized(4_095), false),
        ] {
            let s = try #require(LinkSegment(segment, game: game, author: author, previousKnown: known))
            #expect(try SyncMessage(decoding: SyncMessage.chains([s]).encoded) == .chains([s]))
            #expect((s.previous == nil) == known)
        }
        let genesisChain = try #require(scene.pair.replicas[0].games[scene.world.gameID]?.segment(of: scene.sender, after: 0))
        let fromOne = try #require(LinkSegment(genesisChain, game: .numbered(1), author: .sender, previousKnown: false))
        #expect(fromOne.previous == nil, "seq 1 has no hash before it")
        var bytes = SyncMessage.chains([fromOne]).encoded
        // Flag a previous hash on a segment from seq 1: malformed.
        bytes[3] |= 1
        #expect(throws: ByteDecodingError.self) { try SyncMessage(decoding: bytes) }
        // An author place past the limit.
        var w = ByteWriter()
        w.byte(1); w.byte(8); w.varint(1); w.varint(2); w.varint(UInt64(LinkSegment.authorLimit) + 2)
        #expect(throws: ByteDecodingError.valueOutOfRange(field: "author", value: UInt64(LinkSegment.authorLimit) + 2)) {
            try SyncMessage(decoding: w.bytes)
        }
    }

    @Test func aPeerBeforeTheCompactFormIsSentOps() throws {
        var scene = try Scene(seed: 46)
        scene.pair.sessions[0].peerTakesChains = false
        let answer = try scene.catchUp()
        guard case .ops? = answer.first, answer.count == 1 else {
            Issue.record("not one ops message: \(answer)")
            return
        }
    }
}
