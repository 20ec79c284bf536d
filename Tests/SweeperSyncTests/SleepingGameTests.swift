import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// Games nobody uses let go of memory (see `Replica.sleep`): only what
/// sync and listings read stays, and anything that reads more wakes the
/// game, rebuilt from the store as it was.
@Suite struct SleepingGameTests {
    /// `value`, evaluated outside `#expect` (which cannot call a mutating method).
    static func succeeded(_ value: Bool) -> Bool { value }

    let circle = Fixtures.circle(5)
    /// The flagging player of `Fixtures.flagRun` (identity 1 creates the game).
    let bob = Fixtures.identity(2)

    /// A game by Alice with `moves` flag ops of Bob's, every op signed.
    func game(seed: UInt64 = 1, moves: Int) throws -> (genesis: Op, ops: [Op]) {
        try Fixtures.flagRun(in: circle, seed: seed, moves: moves)
    }

    @Test func aSleepingGameKeepsItsVectorAndWakesAsItWas() throws {
        let (genesis, ops) = try game(moves: 12)
        let id = genesis.gameID
        var (replica, disk) = Simulation.SimulatedDisk.replica(of: [genesis] + ops.dropLast(), circle: circle, keepingRecent: 2)
        let awake = try #require(replica.games[id])
        let summary = replica.summary, authors = replica.heldAuthors

        #expect(Self.succeeded(replica.sleep(id)))
        #expect(replica.games[id] == nil && replica.sleeping[id] != nil)
        #expect(replica.state(of: id) == nil)
        // What sync and listings read stays.
        #expect(replica.summary == summary && replica.heldAuthors == authors)
        #expect(replica.isKnown(id) && replica.knownGames == [id])
        #expect(replica.overview(of: id) == GameOverview(awake))
        #expect(replica.sleeping[id]?.opCount == awake.opCount)

        // Read without waking: the same game, and it stays asleep.
        let read = disk.opsReadBack
        let rebuilt = try #require(replica.awakened(id))
        #expect(disk.opsReadBack == read + awake.opCount)
        #expect(rebuilt.state?.digest == awake.state?.digest && rebuilt.vector == awake.vector)
        #expect(rebuilt.revealers == awake.revealers && rebuilt.opsInMemory <= awake.opsInMemory)
        #expect(replica.sleeping[id] != nil)

        // Bob's next move wakes it, and goes in as it would have.
        let outcome = replica.insert(ops.last!)
        #expect(outcome.accepted.map(\.hash) == [ops.last!.hash])
        #expect(replica.sleeping[id] == nil)
        var never = Replica(circle: circle)
        for op in [genesis] + ops { never.insert(op) }
        #expect(replica.state(of: id)?.digest == never.state(of: id)?.digest)
        #expect(replica.summary == never.summary)
    }

    @Test func aGameWithAnythingOnlyInMemoryStaysAwake() throws {
        let (genesis, ops) = try game(moves: 7)
        let id = genesis.gameID
        // No archive: nothing to wake it from.
        var plain = Replica(circle: circle)
        for op in [genesis] + ops { plain.insert(op) }
        #expect(!plain.sleep(id) && plain.games[id] != nil)

        // An op not stored yet.
        var (replica, disk) = Simulation.SimulatedDisk.replica(of: [genesis] + ops.prefix(4), circle: circle, keepingRecent: 2)
        replica.insert(ops[4])
        #expect(!replica.sleep(id) && replica.games[id] != nil)
        var written = InsertOutcome()
        written.accepted = [ops[4]]
        disk.keep(written, in: &replica)
        #expect(Self.succeeded(replica.sleep(id)))
        #expect(replica.wake(id) && replica.games[id] != nil)

        // An op waiting for the one before it.
        replica.insert(ops[6])
        #expect(replica.games[id]?.pendingCount == 1)
        #expect(!replica.sleep(id) && replica.games[id] != nil)

    }

    @Test func aGameWithAnUnsignedHeadSleepsAndWakesWithItUnsigned() throws {
        let (genesis, ops) = try game(moves: 4)
        let id = genesis.gameID
        // An op held without its signature (a live push from its author's link), stored so.
        var (live, disk) = Simulation.SimulatedDisk.replica(of: [genesis] + ops.prefix(2), circle: circle, keepingRecent: 2)
        let unsigned = ops[2].with(signature: nil)
        let outcome = live.insert(vouched: unsigned)
        #expect(outcome.accepted.count == 1)
        let heads = live.unsignedHeads
        #expect(heads == [ChainHead(game: id, author: bob.peerID, seq: 3)])
        #expect(!Self.succeeded(live.sleep(id)) && live.games[id] != nil)
        disk.keep(outcome, in: &live)
        #expect(Self.succeeded(live.sleep(id)))
        // Asleep, it still asks for the signature it lacks.
        #expect(live.unsignedHeads == heads)
        let rebuilt = try #require(live.awakened(id))
        #expect(rebuilt.isUnsigned(author: bob.peerID, seq: 3) && rebuilt.isVouchedOnly(unsigned))
        // Its head signature wakes it and vouches for the op.
        let signed = live.attach(ops[2].signature!, to: ChainHead(game: id, author: bob.peerID, seq: 3))
        #expect(signed.signed.map(\.hash) == [ops[2].hash])
        #expect(live.games[id] != nil && live.unsignedHeads.isEmpty)
        // Not until the store holds the signature: woken before, it would lack it.
        #expect(!Self.succeeded(live.sleep(id)) && live.games[id] != nil)
        disk.keep(signed, in: &live)
        #expect(Self.succeeded(live.sleep(id)))
        #expect(live.awakened(id)?.isUnsigned(author: bob.peerID, seq: 3) == false)
        // A forged head signature for it is refused, asleep as awake.
        let forged = Forge(circle: circle).op(
            Fixtures.identity(3), game: id, seq: 4, lamport: 9, previous: ops[2].hash, payload: .assisted)
        #expect(live.attach(forged.signature!, to: ChainHead(game: id, author: bob.peerID, seq: 3)).rejected.first?.reason == .badSignature)
    }

    @Test func aGameThatCannotBeReadBackStaysAsleepAndRefusesItsOps() throws {
        let (genesis, ops) = try game(moves: 4)
        let id = genesis.gameID
        var (replica, disk) = Simulation.SimulatedDisk.replica(of: [genesis] + ops.dropLast(), circle: circle, keepingRecent: 2)
        #expect(Self.succeeded(replica.sleep(id)))
        disk.removeAll()
        let outcome = replica.insert(ops.last!)
        #expect(outcome.rejection(of: ops.last!) == .storageFault)
        #expect(replica.rejectionCounts[.storageFault] == 1 && replica.archiveFaults == 1)
        #expect(replica.sleeping[id] != nil && replica.games[id] == nil)
        #expect(!replica.wake(id) && replica.awakened(id) == nil)
        // No new game was begun beside it.
        #expect(replica.summary.count == 1)
    }

    @Test func aPeerCatchingUpReadsASleepingGameOnlyWhenItLacksSome() throws {
        let (genesis, ops) = try game(moves: 9)
        let id = genesis.gameID
        var (replica, disk) = Simulation.SimulatedDisk.replica(of: [genesis] + ops, circle: circle, keepingRecent: 2)
        let digest = replica.state(of: id)?.digest
        let vector = try #require(replica.games[id]?.vector)
        #expect(Self.succeeded(replica.sleep(id)))
        let read = disk.opsReadBack
        #expect(replica.segments(for: id, after: vector).isEmpty)
        #expect(disk.opsReadBack == read)

        var fresh = Replica(circle: circle)
        for segment in replica.segments(for: id, after: VersionVector()) { fresh.insert(segment) }
        #expect(disk.opsReadBack > read)
        #expect(fresh.state(of: id)?.digest == digest)
        #expect(replica.sleeping[id] != nil)

        // A session answering a summary reads it the same way.
        var session = SyncSession()
        let step = session.receive(.summary([:], wantsReply: false), replica: &replica)
        let sent = step.replies.flatMap { message -> [OpSegment] in
            if case .ops(let segments) = message { return segments }
            return []
        }
        #expect(sent.reduce(0) { $0 + $1.ops.count } == 10)
        #expect(replica.sleeping[id] != nil)
    }

    @Test func removingAnAuthorWakesItsSleepingGamesAndCutsThem() throws {
        let (genesis, ops) = try game(moves: 8)
        let id = genesis.gameID
        var (asleep, _) = Simulation.SimulatedDisk.replica(of: [genesis] + ops, circle: circle, keepingRecent: 2)
        var (awake, _) = Simulation.SimulatedDisk.replica(of: [genesis] + ops, circle: circle, keepingRecent: 2)
        #expect(Self.succeeded(asleep.sleep(id)))
        let droppedAsleep = asleep.remove(bob.peerID, kept: [id: 3])
        let droppedAwake = awake.remove(bob.peerID, kept: [id: 3])
        #expect(droppedAsleep[id]?.map(\.hash) == droppedAwake[id]?.map(\.hash))
        #expect(droppedAsleep[id]?.count == 5)
        #expect(asleep.state(of: id)?.digest == awake.state(of: id)?.digest)
        #expect(asleep.summary == awake.summary)
        // A game whose ops of the removed device all stay sleeps on.
        let (other, _) = try game(seed: 2, moves: 0)
        var (quiet, _) = Simulation.SimulatedDisk.replica(of: [other], circle: circle, keepingRecent: 2)
        #expect(Self.succeeded(quiet.sleep(other.gameID)))
        quiet.remove(bob.peerID, kept: [:])
        #expect(quiet.sleeping[other.gameID] != nil)
    }

    @Test func onlyTheMostRecentlyUsedGamesStayAwake() throws {
        let disk = Simulation.SimulatedDisk()
        var replica = Replica(circle: circle, archive: disk, recentOpsKept: 2)
        var ids: [GameID] = []
        for seed in 1...5 {
            let (genesis, _) = try game(seed: UInt64(seed), moves: 0)
            disk.keep(replica.insert(genesis), in: &replica)
            ids.append(genesis.gameID)
        }
        replica.use(ids[3])
        replica.use(ids[0])
        #expect(replica.sleepIdle(keepingAwake: 2) == 3)
        #expect(Set(replica.games.keys) == [ids[0], ids[3]])
        #expect(replica.summary.count == 5)
        // Used again, a sleeping game wakes and counts as the newest.
        #expect(Self.succeeded(replica.wake(ids[1])))
        #expect(replica.sleepIdle(keepingAwake: 2) == 1)
        #expect(Set(replica.games.keys) == [ids[0], ids[1]])
        // Forgotten asleep, it is gone.
        #expect(Self.succeeded(replica.forget(ids[2])))
        #expect(replica.summary.count == 4 && replica.sleeping[ids[2]] == nil)
    }
}
