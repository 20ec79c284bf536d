import SweeperConventions
import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// Frozen boards (see `GameReplica.frozenBoard`): a game written down
/// whole comes back as the same game, goes on as it would have, and a
/// wake takes it instead of replaying the ops only when it matches.
@Suite struct FrozenBoardTests {
    /// `value`, evaluated outside `#expect` (which cannot call a mutating method).
    static func succeeded(_ value: Bool) -> Bool { value }

    /// `game` frozen and thawed over `disk`.
    func thaw(_ game: GameReplica, disk: Simulation.SimulatedDisk) throws -> GameReplica {
        let bytes = try #require(game.frozenBoard(minimumOps: 1))
        return try #require(GameReplica.thawed(bytes, game: game.gameID, readers: [], archive: disk, recentOpsKept: 4))
    }

    /// Whether `a` and `b` hold the same game, as far as anything reads it.
    func same(_ a: GameReplica, _ b: GameReplica) -> Bool {
        a.state?.digest == b.state?.digest && a.vector == b.vector && a.unsignedHeads == b.unsignedHeads && a.revealers == b.revealers
            && a.maxLamport == b.maxLamport && GameOverview(a) == GameOverview(b) && a.genesisOp?.hash == b.genesisOp?.hash
            && a.frozenBoard(minimumOps: 1) == b.frozenBoard(minimumOps: 1)
    }

    @Test(arguments: 1...12 as ClosedRange<UInt64>)
    func aThawedGameIsTheGameAndGoesOnAsItWould(seed: UInt64) throws {
        var world = try OpWorld(seed: seed, authorCount: 3, width: 16, height: 16, mines: 30)
        for _ in 0..<160 { world.step() }
        let cut = world.allOps.count * 2 / 3
        var (replica, disk) = Simulation.SimulatedDisk.replica(of: Array(world.allOps[..<cut]), circle: world.circle, keepingRecent: 4)
        let id = world.gameID
        let game = try #require(replica.games[id])
        try #require(game.maySleep && game.pendingCount == 0)
        let thawed = try thaw(game, disk: disk)
        #expect(same(game, thawed))
        #expect(thawed.opsInMemory <= game.opCount)

        // The rest of the ops go into both: the same game again, op by op.
        var other = Replica(circle: world.circle, archive: disk, recentOpsKept: 4)
        other.games[id] = thawed
        for op in world.allOps[cut...] {
            let a = replica.insert(op), b = other.insert(op)
            disk.keep(a, in: &replica)
            other.noteStored(b.accepted + b.signed)
            #expect(a.accepted.map(\.hash) == b.accepted.map(\.hash) && a.rejected.count == b.rejected.count)
        }
        let after = try #require(replica.games[id]), otherAfter = try #require(other.games[id])
        #expect(same(after, otherAfter))
    }

    @Test func aRaceThawsWithEveryRacersBoard() throws {
        let circle = Fixtures.circle(3)
        let ann = OpAuthor(identity: Fixtures.identity(1), circle: circle), bob = OpAuthor(identity: Fixtures.identity(2), circle: circle)
        let genesis = try Fixtures.genesis(by: ann, width: 12, height: 12, mines: 20, seed: 4, players: [bob.identity.peerID], race: true)
        var (replica, disk) = Simulation.SimulatedDisk.replica(of: [genesis], circle: circle, keepingRecent: 2)
        let id = genesis.gameID
        var clock: UInt64 = 1_790_000_001_000
        var rng = BoardRandom(seed: 9)
        for i in 0..<60 {
            let author = i % 2 == 0 ? ann : bob
            let game = try #require(replica.games[id])
            clock += 500
            let cell = rng.below(144)
            let op = i % 5 == 4 ? try? author.setMark(.flag, on: cell, in: game, atMillis: clock) : try? author.reveal(cell, in: game, atMillis: clock)
            if let op { disk.keep(replica.insert(op), in: &replica) }
        }
        let game = try #require(replica.games[id])
        if let bobs = try? bob.resign(in: game, atMillis: clock + 1) { disk.keep(replica.insert(bobs), in: &replica) }
        let raced = try #require(replica.games[id])
        #expect(raced.state?.isRace == true)
        let thawed = try thaw(raced, disk: disk)
        #expect(same(raced, thawed))
        #expect(thawed.state?.lane(of: bob.identity.peerID)?.board.progress == raced.state?.lane(of: bob.identity.peerID)?.board.progress)
        #expect(thawed.state?.status == raced.state?.status && thawed.state?.raceWinner == raced.state?.raceWinner)
    }

    /// A long game of Bob's flags asleep over `disk`, its frozen board
    /// kept there as the daemon keeps it when the game goes to sleep.
    func longGameAsleep(moves: Int) throws -> (replica: Replica, disk: Simulation.SimulatedDisk, id: GameID, ops: [Op]) {
        let circle = Fixtures.circle(5)
        let (genesis, ops) = try Fixtures.flagRun(in: circle, moves: moves)
        var (replica, disk) = Simulation.SimulatedDisk.replica(of: [genesis] + ops, circle: circle, keepingRecent: 8)
        let id = genesis.gameID
        let board = replica.games[id]?.frozenBoard()
        #expect(board != nil, "a game of \(moves + 1) ops is long enough for a frozen board")
        disk.keepBoard(board, of: id)
        #expect(Self.succeeded(replica.sleep(id)))
        return (replica, disk, id, [genesis] + ops)
    }

    @Test func aWakeReadsTheFrozenBoardAndTheNewestOpsOnly() throws {
        let moves = GameReplica.frozenBoardMinimumOps + 200
        var (replica, disk, id, ops) = try longGameAsleep(moves: moves)
        var replayed = Replica(circle: Fixtures.circle(5))
        for op in ops { replayed.insert(op) }

        // With the board: the genesis and each chain's newest ops (8 kept, up to its newest signed op).
        let read = disk.opsReadBack
        #expect(Self.succeeded(replica.wake(id)))
        #expect(disk.opsReadBack - read <= 2 * 9, "read back \(disk.opsReadBack - read) ops")
        #expect(replica.state(of: id)?.digest == replayed.state(of: id)?.digest)
        #expect(replica.summary == replayed.summary)

        // Without it, the same wake reads every op back.
        #expect(Self.succeeded(replica.sleep(id)))
        disk.keepBoard(nil, of: id)
        let before = disk.opsReadBack
        #expect(Self.succeeded(replica.wake(id)))
        #expect(disk.opsReadBack - before == ops.count)
        #expect(replica.state(of: id)?.digest == replayed.state(of: id)?.digest)
    }

    @Test func aBoardThatDoesNotMatchIsReplayedInstead() throws {
        let moves = GameReplica.frozenBoardMinimumOps
        var (replica, disk, id, ops) = try longGameAsleep(moves: moves)
        let board = try #require(disk.frozenBoard(of: id, circle: replica.circle))
        var replayed = Replica(circle: Fixtures.circle(5))
        for op in ops { replayed.insert(op) }

        // A board of fewer ops than the game holds (one op came since), one
        // damaged in its state, one cut short, one of another format.
        var (shorter, shorterDisk) = Simulation.SimulatedDisk.replica(of: Array(ops.dropLast()), circle: replica.circle, keepingRecent: 8)
        let stale = try #require(shorter.games[id]?.frozenBoard(minimumOps: 1))
        _ = shorterDisk
        _ = shorter.sleep(id)
        var otherGame = board
        otherGame[1] ^= 0x5A
        // The newest op's hash prefix (8 bytes, little-endian) changed: the op read back is not the one named.
        let prefix = OpChain.HashPrefix(ops.last!.hash).value
        let prefixBytes = (0..<8).map { UInt8(truncatingIfNeeded: prefix >> (8 * UInt64($0))) }
        let at = try #require((0...(board.count - 8)).first { Array(board[$0..<$0 + 8]) == prefixBytes })
        var otherOp = board
        otherOp[at] ^= 1
        var format = board
        format[0] = GameReplica.frozenBoardFormat + 1
        for bad in [stale, otherGame, otherOp, Array(board.dropLast(5)), format] {
            disk.keepBoard(bad, of: id)
            let before = disk.opsReadBack
            #expect(Self.succeeded(replica.wake(id)))
            #expect(disk.opsReadBack - before >= ops.count, "replayed")
            #expect(replica.state(of: id)?.digest == replayed.state(of: id)?.digest)
            #expect(Self.succeeded(replica.sleep(id)))
        }
    }

    @Test func aGameThatMayNotSleepOrIsShortHasNoFrozenBoard() throws {
        let circle = Fixtures.circle(5)
        let (genesis, ops) = try Fixtures.flagRun(in: circle, moves: 40)
        var (replica, disk) = Simulation.SimulatedDisk.replica(of: [genesis] + ops.dropLast(), circle: circle, keepingRecent: 4)
        let id = genesis.gameID
        #expect(replica.games[id]?.frozenBoard() == nil, "41 ops replay in no time")
        #expect(replica.games[id]?.frozenBoard(minimumOps: 1) != nil)
        // An op not stored yet: the game may not sleep, and is not written down.
        replica.insert(ops.last!)
        #expect(replica.games[id]?.frozenBoard(minimumOps: 1) == nil)
        _ = disk
    }
}
