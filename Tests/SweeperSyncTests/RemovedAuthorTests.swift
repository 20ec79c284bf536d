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
        let kept = UInt64(world.replicas[0].games[world.gameID]?.chainLength(of: removed) ?? 0)
        // It goes on playing on its own replica (it may not know yet).
        for _ in 0..<30 { world.step() }
        let made = UInt64(world.replicas[3].games[world.gameID]?.chainLength(of: removed) ?? 0)
        // Every replica gets every op in a different order; some learn of
        // the removal before the ops, some after. Two keep their older ops
        // on a disk, as the daemon keeps them in its store, and read them
        // back to derive the board again.
        let disks = (0..<4).map { _ in Simulation.SimulatedDisk() }
        var replicas = (0..<4).map { i in
            i < 2 ? Replica(circle: world.circle) : Replica(circle: world.circle, archive: disks[i], recentOpsKept: 1)
        }
        let ops = world.allOps.filter { $0.signature != nil }
        for i in replicas.indices {
            let early = i % 2 == 0
            if early { replicas[i].remove(removed, kept: [world.gameID: kept]) }
            for op in ops.shuffled(seed: seed &* 31 &+ UInt64(i)) {
                let outcome = replicas[i].insert(op)
                disks[i].keep(outcome, in: &replicas[i])
            }
            // Segments too, as a catch-up would send them.
            for segment in world.replicas[3].segments(for: world.gameID, after: VersionVector()) {
                let outcome = replicas[i].insert(segment)
                disks[i].keep(outcome, in: &replicas[i])
            }
            if !early {
                let read = disks[i].opsReadBack
                let dropped = replicas[i].remove(removed, kept: [world.gameID: kept])
                if made > kept {
                    #expect(dropped[world.gameID]?.count == Int(made - kept))
                    if i >= 2 {
                        #expect(disks[i].opsReadBack > read, "the ops that left memory were read back")
                        // The cut holds the kept ops in memory until told the store has them.
                        let held = replicas[i].games[world.gameID]?.opsInMemory ?? 0
                        replicas[i].noteStored(removed, in: world.gameID, through: kept)
                        if kept > 2 { #expect((replicas[i].games[world.gameID]?.opsInMemory ?? 0) < held) }
                    }
                }
                // Offered again (by a peer that has not heard of the removal), they are refused.
                for op in ops.shuffled(seed: seed &+ UInt64(i)) { replicas[i].insert(op) }
            }
            #expect(replicas[i].archiveFaults == 0)
        }
        let digest = replicas[0].state(of: world.gameID)?.digest
        for r in replicas {
            #expect(r.state(of: world.gameID)?.digest == digest)
            #expect(UInt64(r.games[world.gameID]?.chainLength(of: removed) ?? 0) == kept)
            if made > kept { #expect((r.rejectionCounts[.removedAuthor] ?? 0) > 0) }
        }
        // The same game without the removed device's later ops, built from scratch, is the same board.
        var reference = Replica(circle: world.circle)
        reference.remove(removed, kept: [world.gameID: kept])
        for op in ops where !(op.author == removed && op.seq > kept) { reference.insert(op) }
        #expect(reference.state(of: world.gameID)?.digest == digest)
    }

    @Test func aRemovalWhoseOpsCannotBeReadBackLeavesTheGameWhole() throws {
        var world = try OpWorld(seed: 9, authorCount: 3, width: 12, height: 12, mines: 20)
        for _ in 0..<60 { world.step() }
        let removed = world.authors[2].identity.peerID
        var (replica, disk) = Simulation.SimulatedDisk.replica(
            of: world.allOps.filter { $0.signature != nil }, circle: world.circle, keepingRecent: 1)
        let held = replica.games[world.gameID]?.chainLength(of: removed) ?? 0
        try #require(held > 2)
        let before = try #require(replica.state(of: world.gameID)?.digest)
        // The disk lost what the replica let go of.
        disk.removeAll()
        let dropped = replica.remove(removed, kept: [world.gameID: 1])
        #expect(dropped.isEmpty)
        #expect(replica.archiveFaults == 1)
        #expect(replica.state(of: world.gameID)?.digest == before)
        #expect(replica.games[world.gameID]?.chainLength(of: removed) == held)
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
