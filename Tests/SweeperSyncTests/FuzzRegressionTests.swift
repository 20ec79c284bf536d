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

    /// FuzzReplica input (base64) `AAEhCAABAwACAQAgICAxAAMBAAEhCAABAwAqAQAgICBCb29sAAIDAgD/`:
    /// bob sends a segment of two reveals, the first on the board, the
    /// second (the signed one) off it. The first was accepted, unsigned, and
    /// ended bob's chain: it could never be relayed and was gone after a
    /// restart (restoring the stored ops gave another state).
    @Test func segmentWhoseSignedOpIsRefusedLeavesNothingBehind() throws {
        let circle = Fixtures.circle(1)
        let ann = OpAuthor(identity: Fixtures.identity(1), circle: circle)
        let bob = Fixtures.identity(2)
        let genesis = try Fixtures.genesis(by: ann)
        var replica = Replica(circle: circle)
        replica.insert(genesis)
        let before = try #require(replica.state(of: genesis.gameID)?.digest)
        // The reveal payloads exactly as in the input: cells 0..<3, 4 and 37..<70; then 0..<43, 44 and 77..<110.
        let first = Op(
            signing: bob, circle: circle, gameID: genesis.gameID, seq: 1, lamport: 2, previous: .none,
            wallClockMillis: 0x31 << 48 | 0x0103, payload: .reveal(CellRuns(validRuns: [0..<3, 4..<5, 37..<70])))
        let second = Op(
            signing: bob, circle: circle, gameID: genesis.gameID, seq: 2, lamport: 3, previous: first.hash,
            wallClockMillis: 0x20 << 48 | 0x6f6f, payload: .reveal(CellRuns(validRuns: [0..<43, 44..<45, 77..<110])))
        let segment = try #require(OpSegment(verifiedOps: [first.with(signature: nil), second]))
        let outcome = replica.insert(try OpSegment(decoding: segment.encoded))
        #expect(outcome.accepted.isEmpty)
        #expect(outcome.rejected.map(\.seq) == [1, 2])
        #expect(outcome.rejected.allSatisfy { $0.reason == .cellOutOfRange })
        #expect(replica.games[genesis.gameID]?.chainLength(of: bob.peerID) == 0)
        #expect(replica.state(of: genesis.gameID)?.digest == before)
        // What is held survives a restart unchanged.
        var restored = Replica(circle: circle)
        restored.restore(replica.games[genesis.gameID]?.everyOp ?? [])
        #expect(restored.state(of: genesis.gameID)?.digest == before)
        // The first op alone, signed, still goes in.
        #expect(replica.insert(first).accepted.map(\.hash) == [first.hash])
    }

    /// FuzzReplica input (base64)
    /// `AAEhCAABAwACAiAgICABAAMBAAEhCAABAwAqAQAgICBCb29sXWpqagACAmpqAgMA/w==`:
    /// a relayed op of this daemon's own author waits for a gap (seq 3, not
    /// chained to anything held); the local move then fills the gap (seq 2)
    /// and is applied, and the waiting op, which does not follow it, is
    /// refused by the same insert. The daemon read that refusal as its own
    /// move's and reported the move as failed although the replica held it.
    @Test func aLocalMoveIsNotRefusedForTheWaitingOpItUnblocks() throws {
        let circle = Fixtures.circle(1)
        let ann = OpAuthor(identity: Fixtures.identity(1), circle: circle)
        let bob = OpAuthor(identity: Fixtures.identity(2), circle: circle)
        let genesis = try Fixtures.genesis(by: ann)
        var replica = Replica(circle: circle)
        replica.insert(genesis)
        let game = try #require(replica.games[genesis.gameID])
        let first = try #require(try bob.peek(in: game, atMillis: 1))
        #expect(replica.insert(first).accepted.count == 1)
        let stray = Op(
            signing: bob.identity, circle: circle, gameID: genesis.gameID, seq: 3, lamport: 9,
            previous: OpHash(unchecked: [UInt8](repeating: 0x6A, count: 32)), wallClockMillis: 2, payload: .assisted)
        #expect(replica.insert(stray).waiting == 1)
        let now = try #require(replica.games[genesis.gameID])
        let board = try #require(now.state?.board)
        let covered = try #require((0..<81).first { !board.isRevealed($0) })
        let move = try #require(try bob.setMark(.flag, on: covered, in: now, atMillis: 3))
        #expect(move.seq == 2)
        let outcome = replica.insert(move)
        #expect(outcome.accepted.map(\.hash) == [move.hash])
        #expect(outcome.rejection(of: move) == nil)
        #expect(outcome.rejection(of: stray) == .brokenChain)
        #expect(outcome.rejected.count == 1)
        #expect(replica.games[genesis.gameID]?.pendingCount == 0)
        #expect(replica.state(of: genesis.gameID)?.board.mark(at: covered) == .flag)
    }
}
