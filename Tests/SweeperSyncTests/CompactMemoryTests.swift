import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// The compact forms a game's memory takes: ops that leave memory for the
/// archive (known by 8 bytes of their hash, read back when those match),
/// and the board's per-cell state.
@Suite struct CompactMemoryTests {
    let circle = Fixtures.circle(4)

    /// A game by Alice with `moves` flag ops of Bob's, every op signed.
    func bobsFlags(_ moves: Int) throws -> (genesis: Op, ops: [Op]) {
        try Fixtures.flagRun(in: circle, moves: moves)
    }

    @Test func anOpThatLeftMemoryIsKnownByItsPrefixAsTheSameOrAConflict() throws {
        let (genesis, ops) = try bobsFlags(20)
        var (replica, disk) = Simulation.SimulatedDisk.replica(of: [genesis] + ops, circle: circle, keepingRecent: 2)
        let game = try #require(replica.games[genesis.gameID])
        let bob = ops[0].author
        // Bob's first 18 ops left memory (his newest two stay), and the genesis is Alice's only one.
        #expect(game.opsInMemory == 3)
        #expect(game.chainLength(of: bob) == 20)

        // Sent again, an op that left memory has its hash prefix: it is read
        // back, found the same, and is a duplicate.
        let before = disk.opsReadBack
        #expect(replica.insert(ops[4]).duplicates == 1)
        #expect(disk.opsReadBack == before + 1)
        // Another op of Bob's at that place, signed by him, has another
        // prefix: a conflict, told without a read.
        let forge = Forge(circle: circle)
        let other = forge.op(
            Fixtures.identity(2), game: genesis.gameID, seq: 5, lamport: 6, previous: ops[3].hash, payload: .assisted)
        #expect(replica.insert(other).rejection(of: other) == .conflictingOp)
        #expect(replica.games[genesis.gameID]?.equivocators == [bob])
        #expect(disk.opsReadBack == before + 1)
        let read = disk.opsReadBack

        // What needs the ops reads them back: a catch-up from nothing, with the same board.
        var fresh = Replica(circle: circle)
        for segment in replica.segments(for: genesis.gameID, after: VersionVector()) { fresh.insert(segment) }
        #expect(disk.opsReadBack > read)
        #expect(fresh.games[genesis.gameID]?.opCount == 21)
        #expect(fresh.state(of: genesis.gameID)?.digest == replica.state(of: genesis.gameID)?.digest)
        #expect(try replica.games[genesis.gameID]?.allOps().map(\.hash) == ([genesis] + ops).map(\.hash))
    }

    @Test func anArchiveThatGivesBackAnotherOpIsNotBelieved() throws {
        let (genesis, ops) = try bobsFlags(10)
        let (replica, disk) = Simulation.SimulatedDisk.replica(of: [genesis] + ops, circle: circle, keepingRecent: 1)
        // The disk now holds another op where Bob's third was.
        let forged = Forge(circle: circle).op(
            Fixtures.identity(2), game: genesis.gameID, seq: 3, lamport: 4, previous: ops[1].hash, payload: .assisted)
        disk["\(genesis.gameID) \(ops[0].author) 3"] = (forged, false)
        let game = try #require(replica.games[genesis.gameID])
        #expect(throws: OpArchiveMiss.self) { try game.allOps() }
        #expect(game.op(author: ops[0].author, seq: 3) == nil)
        #expect(game.op(author: ops[0].author, seq: 2)?.hash == ops[1].hash)
    }

    @Test func aChunkedArrayKeepsItsElementsAcrossChunks() {
        var array = ChunkedArray<Int>()
        let n = ChunkedArray<Int>.chunkSize * 2 + 17
        for i in 0..<n { array.append(i * 3) }
        #expect(array.count == n)
        #expect((0..<n).allSatisfy { array[$0] == $0 * 3 })
        array[ChunkedArray<Int>.chunkSize] = -1
        #expect(array[ChunkedArray<Int>.chunkSize] == -1)
        let kept = ChunkedArray<Int>.chunkSize + 1
        array.removeAll(after: kept)
        #expect(array.count == kept)
        array.append(7)
        #expect(array[kept] == 7 && array[kept - 2] == (kept - 2) * 3)
        array.removeAll(after: 0)
        #expect(array.count == 0)
        array.append(1)
        #expect(array.count == 1 && array[0] == 1)
    }

    @Test(arguments: [0, 1, 2])
    func cellEntriesAnswerAsADictionaryDoesWhetherSparseOrDense(seed: UInt64) {
        let cells = 400
        var entries = CellEntries(cellCount: cells)
        var reference: [Int32: UInt32] = [:]
        var rng = BoardRandom(seed: seed)
        // Past 150 of the 400 cells, the entries turn dense; some are taken away on the way.
        for step in 0..<600 {
            let cell = Int32(rng.below(cells))
            let value: UInt32? = step % 7 == 3 ? nil : UInt32(rng.below(1_000))
            entries[cell] = value
            reference[cell] = value
            if step % 50 == 0 || step == 599 {
                #expect((0..<Int32(cells)).allSatisfy { entries[$0] == reference[$0] })
                var seen: [Int32: UInt32] = [:]
                entries.forEach { seen[$0] = $1 }
                #expect(seen == reference)
            }
        }
        #expect(reference.count * 8 > cells * 3, "the entries went dense")
    }
}
