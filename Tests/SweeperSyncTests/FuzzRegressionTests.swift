import SweeperCrypto
import SweeperGame
import Testing
@testable import SweeperSync

/// Inputs found while fuzzing (Scripts/fuzz.sh) that trapped, kept as they were found.
@Suite struct SyncFuzzRegressionTests {
    /// A summary from a peer that claims an author's seq 2^64 − 1: the
    /// daemon's sync counts (`sweeper peers`) took Int(theirs − ours), which trapped.
    @Test func summaryClaimingTheLargestSeqCountsWithoutTrapping() throws {
        let author = Fixtures.identity(2).peerID
        let game = [UInt8](repeating: 0xAB, count: 16)
        let bytes: [UInt8] = [1, 0, 1, 1] + game + [1] + author.bytes + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]
        guard case .summary(let games, true) = try SyncMessage(decoding: bytes) else {
            Issue.record("not a summary")
            return
        }
        let theirs = try #require(games[GameID(unchecked: game)])
        #expect(theirs[author] == UInt64.max)
        let ours = VersionVector(heads: [author: 3])
        #expect(ours.lag(against: theirs) == (ahead: 0, behind: Int.max))
        #expect(theirs.lag(against: ours) == (ahead: Int.max, behind: 0))
        let two = VersionVector(heads: [author: .max, Fixtures.identity(3).peerID: .max])
        #expect(two.opCount == UInt64.max)
        #expect(two.lag(against: VersionVector()) == (ahead: Int.max, behind: 0))
        #expect(VersionVector(heads: [author: 5]).lag(against: VersionVector(heads: [author: 2])) == (ahead: 3, behind: 0))
    }
}
