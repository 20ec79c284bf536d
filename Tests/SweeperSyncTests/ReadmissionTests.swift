import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// A removed device that an admin admits again plays again: its removal's
/// cut stays in the games it listed, and its new ops are taken everywhere.
@Suite struct ReadmissionTests {
    let circle = Fixtures.circle(6)
    let bob = Fixtures.identity(2)

    /// Bob's next op in `game` after his op `after`, a flag on `cell`.
    func next(after previous: Op, cell: Int) -> Op {
        Forge(circle: circle).op(
            bob, game: previous.gameID, seq: previous.seq + 1, lamport: previous.lamport + 100, previous: previous.hash,
            payload: .mark(cell: cell, mark: .flag))
    }

    @Test func aDeviceAdmittedAgainMovesAgainAfterWhatItsRemovalKept() throws {
        let (genesis, ops) = try Fixtures.flagRun(in: circle, moves: 8)
        let id = genesis.gameID
        var replica = Replica(circle: circle)
        replica.insert(genesis)
        for op in ops { replica.insert(op) }
        #expect(replica.remove(bob.peerID, kept: [id: 3])[id]?.count == 5)
        let move = next(after: ops[2], cell: 0)
        let refused = replica.insert(move)
        #expect(refused.rejected.map(\.reason) == [.removedAuthor], "the attempt must happen while removed")
        replica.readmit(bob.peerID, kept: [id: 3])
        let taken = replica.insert(move)
        #expect(taken.rejected.isEmpty && replica.games[id]?.chainLength(of: bob.peerID) == 4)
        #expect(replica.removed[bob.peerID] == nil)
    }

    /// A replica that never applied the removal (it got the removal and the
    /// admission again together) cuts the listed games once, as the
    /// removal would have, and leaves the others alone.
    @Test func aReplicaThatMissedTheRemovalCutsOnlyTheListedGames() throws {
        let (genesis, ops) = try Fixtures.flagRun(in: circle, moves: 8)
        let (other, otherOps) = try Fixtures.flagRun(in: circle, seed: 2, moves: 4)
        var replica = Replica(circle: circle)
        for op in [genesis] + ops + [other] + otherOps { replica.insert(op) }
        let dropped = replica.readmit(bob.peerID, kept: [genesis.gameID: 3])
        #expect(dropped[genesis.gameID]?.map(\.seq) == [4, 5, 6, 7, 8])
        #expect(dropped[other.gameID] == nil)
        #expect(replica.games[genesis.gameID]?.chainLength(of: bob.peerID) == 3)
        #expect(replica.games[other.gameID]?.chainLength(of: bob.peerID) == 4)
        // The same again changes nothing.
        #expect(replica.readmit(bob.peerID, kept: [genesis.gameID: 3]).isEmpty)
    }
}
