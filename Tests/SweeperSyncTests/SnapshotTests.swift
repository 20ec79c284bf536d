import SweeperConventions
import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// A sleeping game written down for the next start (``SleepingGame/snapshot``):
/// read back into another replica it is the same sleeping game, it wakes
/// as the game it was, and bytes it did not write are refused.
@Suite struct SnapshotTests {
    let circle = Fixtures.circle(5)
    /// `value`, evaluated outside `#expect` (which cannot call a mutating method).
    static func succeeded(_ value: Bool) -> Bool { value }

    /// What a sleeping game holds, compared field by field.
    static func same(_ a: SleepingGame, _ b: SleepingGame) -> Bool {
        a.vector == b.vector && a.overview == b.overview && a.equivocators == b.equivocators && a.unsignedHeads == b.unsignedHeads
            && a.privateHeader?.creator == b.privateHeader?.creator && a.privateHeader?.players == b.privateHeader?.players
    }

    @Test func aSleepingGameReadBackIsTheSameAndWakesAsItWas() throws {
        let (genesis, ops) = try Fixtures.flagRun(in: circle, seed: 3, moves: 6)
        let id = genesis.gameID
        var (replica, disk) = Simulation.SimulatedDisk.replica(of: [genesis] + ops.prefix(5), circle: circle, keepingRecent: 2)
        // An unsigned head (a live push stored so) and an equivocator, both kept.
        let outcome = replica.insert(vouched: ops[5].with(signature: nil))
        disk.keep(outcome, in: &replica)
        replica.noteEquivocator(Fixtures.identity(7).peerID, in: id)
        let awake = try #require(replica.games[id])
        #expect(Self.succeeded(replica.sleep(id)))
        let asleep = try #require(replica.sleeping[id])
        #expect(!asleep.unsignedHeads.isEmpty && !asleep.equivocators.isEmpty && asleep.overview != nil)

        let read = try SleepingGame(snapshot: asleep.snapshot)
        #expect(Self.same(read, asleep))
        // Another replica over the same store holds it without reading an op, then wakes it.
        var next = Replica(circle: circle, archive: disk, recentOpsKept: 2)
        let before = disk.opsReadBack
        #expect(Self.succeeded(next.holdAsleep(id, read)))
        #expect(disk.opsReadBack == before, "holding a snapshot read ops")
        #expect(next.overview(of: id) == GameOverview(awake) && next.summary == replica.summary)
        #expect(!Self.succeeded(next.holdAsleep(id, read)), "a game held already was replaced")
        #expect(Self.succeeded(next.wake(id)))
        #expect(disk.opsReadBack > before)
        #expect(next.state(of: id)?.digest == awake.state?.digest && next.games[id]?.vector == awake.vector)
        #expect(next.games[id]?.equivocators == awake.equivocators)
    }

    @Test func aPrivateGameKeepsItsPlayersButNotItsKey() throws {
        let creator = Fixtures.identity(1), player = Fixtures.identity(2)
        let (p, l) = try Fixtures.layout(width: 9, height: 9, mines: 10, seed: 5)
        let g = try OpAuthor(identity: creator, circle: circle).privateGenesis(
            parameters: p, layout: l, seed: 5, questionMarks: false, createdAtMillis: 1_790_000_001_000, players: [player.peerID])
        for reader in [player, Fixtures.identity(3)] {
            let disk = Simulation.SimulatedDisk()
            var replica = Replica(circle: circle, reader: reader, archive: disk)
            disk.keep(replica.insert(g), in: &replica)
            #expect(Self.succeeded(replica.sleep(g.gameID)))
            let asleep = try #require(replica.sleeping[g.gameID])
            let read = try SleepingGame(snapshot: asleep.snapshot)
            #expect(Self.same(read, asleep) && read.privateHeader?.players == [creator.peerID, player.peerID])
            #expect(read.privateHeader?.key == nil)
            // The player reads it (an overview); the member who does not play keeps it unread.
            #expect((read.overview != nil) == (reader.peerID == player.peerID))
        }
    }

    @Test func bytesThisBuildDidNotWriteAreRefused() throws {
        let (genesis, ops) = try Fixtures.flagRun(in: circle, seed: 4, moves: 3)
        var (replica, _) = Simulation.SimulatedDisk.replica(of: [genesis] + ops, circle: circle, keepingRecent: 2)
        #expect(Self.succeeded(replica.sleep(genesis.gameID)))
        let bytes = try #require(replica.sleeping[genesis.gameID]).snapshot
        // Every cut short, another format, trailing bytes.
        for n in 0..<bytes.count { #expect(throws: ByteDecodingError.self) { try SleepingGame(snapshot: Array(bytes.prefix(n))) } }
        var other = bytes
        other[0] = SleepingGame.snapshotFormat + 1
        #expect(throws: ByteDecodingError.self) { try SleepingGame(snapshot: other) }
        #expect(throws: ByteDecodingError.self) { try SleepingGame(snapshot: bytes + [0]) }
    }
}
