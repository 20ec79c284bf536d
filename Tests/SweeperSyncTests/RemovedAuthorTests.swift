import SweeperCrypto
import SweeperGame
import Testing
@testable import SweeperSync

/// A removed device's ops after what the removal kept are refused by every
/// replica, dropped by those that had them, and the replicas converge.
@Suite struct RemovedAuthorTests {
    @Test(arguments: 0..<60)
    func everyReplicaDropsAndRefusesTheOpsAfterTheCut(seed: UInt64) throws {
        var world = try OpWorld(seed: seed, authorCount: 4, width: 12, height: 12, mines: 20)
        for _ in 0..<80 { world.step() }
        // Author 3 is removed by a member whose view is replica 0's.
        let removed = world.authors[3].identity.peerID
        let kept = UInt64(world.replicas[0].games[world.gameID]?.chains[removed]?.count ?? 0)
        // It goes on playing on its own replica (it may not know yet).
        for _ in 0..<30 { world.step() }
        let made = UInt64(world.replicas[3].games[world.gameID]?.chains[removed]?.count ?? 0)
        // Every replica gets every op in a different order; some learn of
        // the removal before the ops, some after.
        var replicas = (0..<4).map { _ in Replica(circle: world.circle) }
        let ops = world.allOps.filter { $0.signature != nil }
        for i in replicas.indices {
            let early = i % 2 == 0
            if early { replicas[i].remove(removed, kept: [world.gameID: kept]) }
            for op in ops.shuffled(seed: seed &* 31 &+ UInt64(i)) { replicas[i].insert(op) }
            // Segments too, as a catch-up would send them.
            for segment in world.replicas[3].segments(for: world.gameID, after: VersionVector()) { replicas[i].insert(segment) }
            if !early {
                let dropped = replicas[i].remove(removed, kept: [world.gameID: kept])
                if made > kept { #expect(dropped[world.gameID]?.count == Int(made - kept)) }
                // Offered again (by a peer that has not heard of the removal), they are refused.
                for op in ops.shuffled(seed: seed &+ UInt64(i)) { replicas[i].insert(op) }
            }
        }
        let digest = replicas[0].state(of: world.gameID)?.digest
        for r in replicas {
            #expect(r.state(of: world.gameID)?.digest == digest)
            #expect(UInt64(r.games[world.gameID]?.chains[removed]?.count ?? 0) == kept)
            if made > kept { #expect((r.rejectionCounts[.removedAuthor] ?? 0) > 0) }
        }
        // The same game without the removed device's later ops, built from scratch, is the same board.
        var reference = Replica(circle: world.circle)
        reference.remove(removed, kept: [world.gameID: kept])
        for op in ops where !(op.author == removed && op.seq > kept) { reference.insert(op) }
        #expect(reference.state(of: world.gameID)?.digest == digest)
    }

    @Test func aRemovedCreatorsGameWithNothingKeptIsGone() throws {
        var world = try OpWorld(seed: 5)
        for _ in 0..<20 { world.step() }
        var replica = world.replicas[1]
        let creator = world.authors[0].identity.peerID
        replica.remove(creator, kept: [:])
        #expect(replica.state(of: world.gameID) == nil)
        #expect(replica.insert(world.allOps[0]).rejection(of: world.allOps[0]) == .removedAuthor)
    }
}
