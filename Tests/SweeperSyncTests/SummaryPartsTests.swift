import SweeperConventions
import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// A summary too big for one message goes in parts, which the receiver
/// takes together as one summary.
@Suite struct SummaryPartsTests {
    /// A summary of `count` made-up games, each with one author at seq 1.
    static func summary(of count: Int, author: PeerID) -> [GameID: VersionVector] {
        var games: [GameID: VersionVector] = [:]
        for i in 0..<count {
            // Game ids are hashes: spread like one (a table hashes their first bytes).
            var id = [UInt8](repeating: 0, count: 16)
            var x = UInt64(i) &* 0x9E37_79B9_7F4A_7C15
            x ^= x >> 29
            withUnsafeBytes(of: x) { id.replaceSubrange(0..<8, with: $0) }
            withUnsafeBytes(of: UInt64(i).bigEndian) { id.replaceSubrange(8..<16, with: $0) }
            games[GameID(unchecked: id)] = VersionVector(heads: [author: 1])
        }
        return games
    }

    /// Past 100,000 games one summary message is refused on arrival (what
    /// broke links before parts); in parts, every message decodes, stays
    /// within the budget, and together they are the summary.
    @Test func aSummaryOfMoreGamesThanAMessageHoldsGoesInParts() throws {
        let author = Fixtures.identity(1).peerID
        let games = Self.summary(of: SyncMessage.gameLimit + 1, author: author)
        #expect(throws: ByteDecodingError.self) { try SyncMessage(decoding: SyncMessage.summary(games, wantsReply: true).encoded) }
        let budget = 1 << 20
        let parts = SyncMessage.parts(of: games, wantsReply: true, byteBudget: budget)
        #expect(parts.count > 1)
        var together: [GameID: VersionVector] = [:]
        for (i, part) in parts.enumerated() {
            let bytes = part.encoded
            #expect(bytes.count <= budget)
            switch try SyncMessage(decoding: bytes) {
            case .summaryPart(let some):
                #expect(i < parts.count - 1)
                together.merge(some) { a, _ in a }
            case .summary(let last, let wantsReply):
                #expect(i == parts.count - 1 && wantsReply)
                together.merge(last) { a, _ in a }
            default:
                Issue.record("a part decoded as another message")
            }
        }
        #expect(together == games)
        // A peer that does not take parts gets the first games that fit one message.
        guard case .summary(let first, true) = SyncMessage.truncated(games, wantsReply: true, byteBudget: budget) else {
            Issue.record("a cut summary is a summary")
            return
        }
        #expect(first.count == (try #require(parts.first.map { if case .summaryPart(let g) = $0 { g.count } else { 0 } })))
        #expect(first.keys.sorted() == Array(games.keys.sorted().prefix(first.count)))
        // A part that also asks for an answer is malformed.
        var both = SyncMessage.summaryPart([:]).encoded
        both[2] = 3
        #expect(throws: ByteDecodingError.self) { try SyncMessage(decoding: both) }
    }

    /// A session that gets a summary in parts answers as it answers the
    /// whole: it sends the peer the ops of the games the peer lacks, and of
    /// none that a part said the peer holds.
    @Test func aSessionTakesThePartsAsOneSummary() throws {
        let (holder, first, second, _) = try InterestTests.twoGames()
        // The peer holds the first game and lacks the second.
        var peer = Replica(circle: holder.circle)
        peer.insert(first)
        let theirs = peer.summary
        var whole = SyncSession()
        var replica = holder
        let answer = whole.receive(.summary(theirs, wantsReply: true), replica: &replica)
        // Each game its own part, the last ending the summary.
        let parts = SyncMessage.parts(of: theirs.merging([second.gameID: VersionVector()]) { a, _ in a }, wantsReply: true, byteBudget: 40)
        #expect(parts.count == 2)
        var parted = SyncSession()
        var other = holder
        var replies: [SyncMessage] = []
        for part in parts {
            let step = parted.receive(try SyncMessage(decoding: part.encoded), replica: &other)
            #expect(step.violation == nil)
            if case .summaryPart = part { #expect(step.replies.isEmpty, "a part is answered only with its summary's end") }
            replies += step.replies
        }
        func sent(_ messages: [SyncMessage]) -> Set<GameID> {
            var out: Set<GameID> = []
            for case .ops(let segments) in messages { for s in segments { if let g = s.ops.first?.gameID { out.insert(g) } } }
            return out
        }
        #expect(sent(answer.replies) == [second.gameID])
        #expect(sent(replies) == sent(answer.replies))
        #expect(parted.peerHolds[first.gameID] == theirs[first.gameID])
    }

    /// Parts without end are bounded: past the limit (a million games in
    /// the daemon; a thousand here) the link is dropped.
    @Test func endlessPartsAreAViolation() throws {
        var session = SyncSession()
        session.summaryPartsLimit = 1_000
        var replica = Replica(circle: Fixtures.circle(1))
        let all = Self.summary(of: 1_100, author: Fixtures.identity(1).peerID).sorted { $0.key < $1.key }
        var violation: String?
        var sent = 0
        for start in stride(from: 0, to: all.count, by: 100) where violation == nil {
            let part = Dictionary(uniqueKeysWithValues: all[start..<start + 100].map { ($0.key, $0.value) })
            violation = session.receive(.summaryPart(part), replica: &replica).violation
            sent += part.count
        }
        #expect(sent > 1_000)
        #expect(violation != nil)
    }
}

/// Ids come from peers: a table of them must stay fast whatever bytes a
/// peer picks.
@Suite struct CraftedIDTests {
    /// Game ids and peer keys that share their first bytes, as a member in
    /// bad faith could put 100,000 of in a summary, hash apart (with the
    /// first 8 bytes hashed alone they all collided, and a table of them
    /// went quadratic: minutes of a core for one summary).
    @Test func gameIDsSharingTheirFirstBytesDoNotCollide() throws {
        var crafted: Set<GameID> = []
        var hashes: Set<Int> = []
        for i in 0..<1_000 {
            var id = [UInt8](repeating: 0xAB, count: 16)
            withUnsafeBytes(of: UInt64(i)) { id.replaceSubrange(8..<16, with: $0) }
            let game = GameID(unchecked: id)
            crafted.insert(game)
            hashes.insert(game.hashValue)
        }
        #expect(crafted.count == 1_000)
        // Distinct ids hash apart: at most a handful of chance collisions.
        #expect(hashes.count > 990)
        var peers: Set<Int> = []
        var valid = 0
        for i in 0..<1_000 {
            var key = [UInt8](repeating: 0x0D, count: 32)
            withUnsafeBytes(of: UInt64(i)) { key.replaceSubrange(16..<24, with: $0) }
            guard let peer = try? PeerID(bytes: key) else { continue }
            valid += 1
            peers.insert(peer.hashValue)
        }
        #expect(valid > 100)
        #expect(peers.count > valid - 10)
    }
}
