import SweeperCrypto
import SweeperGame

@testable import SweeperSync

/// A fixture that could not be made (a bug in the test, not a finding).
struct FixtureError: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// Reproducible identities, circle and boards for tests.
enum Fixtures {
    /// An identity derived from a number (same number, same key).
    static func identity(_ n: UInt64, salt: UInt8 = 0) -> SigningIdentity {
        var seed = [UInt8](repeating: salt, count: 32)
        for i in 0..<8 { seed[i] = UInt8(truncatingIfNeeded: n >> (8 * UInt64(i))) }
        // A 32-byte seed is always accepted.
        return (try? SigningIdentity(seed: seed)) ?? SigningIdentity()
    }

    /// A circle key derived from a number.
    static func circle(_ n: UInt64) -> CircleKey {
        var bytes = [UInt8](repeating: 0xC1, count: 32)
        for i in 0..<8 { bytes[i] = UInt8(truncatingIfNeeded: n >> (8 * UInt64(i))) }
        return (try? CircleKey(bytes: bytes)) ?? CircleKey()
    }

    /// A layout with `mines` mines placed by `BoardRandom(seed:)`, keeping the
    /// start cell and its neighbours clear.
    static func layout(width: Int, height: Int, mines: Int, seed: UInt64) throws -> (GameParameters, MineLayout) {
        let parameters = try GameParameters(width: width, height: height, mines: mines)
        let g = parameters.geometry
        let start = g.index(of: parameters.start)
        var rng = BoardRandom(seed: seed)
        var candidates = (0..<g.cellCount).filter { !g.isWithinOne($0, start) }
        var chosen: [Int] = []
        for _ in 0..<mines {
            let k = rng.below(candidates.count)
            chosen.append(candidates[k])
            candidates.swapAt(k, candidates.count - 1)
            candidates.removeLast()
        }
        return (parameters, try MineLayout(geometry: g, mineIndices: chosen))
    }

    /// A genesis op for a fresh small game.
    static func genesis(
        by author: OpAuthor, width: Int = 9, height: Int = 9, mines: Int = 10, seed: UInt64 = 1,
        questionMarks: Bool = true, players: Set<PeerID>? = nil, race: Bool = false
    ) throws -> Op {
        let (p, l) = try layout(width: width, height: height, mines: mines, seed: seed)
        return try author.genesis(
            parameters: p, layout: l, seed: seed, questionMarks: questionMarks, createdAtMillis: 1_790_000_000_000 + seed,
            players: players, race: race)
    }

    /// A game by identity 1 in `circle` with `moves` flag ops of identity
    /// 2's (a flag set and taken away again on one covered cell), every op
    /// signed.
    static func flagRun(in circle: CircleKey, seed: UInt64 = 1, moves: Int) throws -> (genesis: Op, ops: [Op]) {
        let genesis = try genesis(by: OpAuthor(identity: identity(1), circle: circle), seed: seed)
        var source = Replica(circle: circle)
        source.insert(genesis)
        guard let state = source.state(of: genesis.gameID),
            let cell = (0..<state.genesis.geometry.cellCount).first(where: { !state.board.isRevealed($0) })
        else { throw FixtureError("the fixture game has no covered cell") }
        let forge = Forge(circle: circle)
        var ops: [Op] = []
        var previous = OpHash.none
        for i in 0..<moves {
            let op = forge.op(
                identity(2), game: genesis.gameID, seq: UInt64(i + 1), lamport: UInt64(i + 2), previous: previous,
                payload: .mark(cell: cell, mark: i % 2 == 0 ? .flag : .none))
            ops.append(op)
            previous = op.hash
        }
        return (genesis, ops)
    }
}

/// A small deterministic world: authors playing one game on their own
/// replicas, sometimes merging, so their ops are concurrent.
struct OpWorld {
    var rng: BoardRandom
    let circle: CircleKey
    var authors: [OpAuthor]
    var replicas: [Replica]
    let gameID: GameID
    var allOps: [Op] = []
    var clock: UInt64 = 1_790_000_000_000

    init(seed: UInt64, authorCount: Int = 3, width: Int = 8, height: Int = 8, mines: Int = 10) throws {
        rng = BoardRandom(seed: seed)
        circle = Fixtures.circle(seed % 7)
        authors = (0..<authorCount).map { OpAuthor(identity: Fixtures.identity(UInt64($0) + 1), circle: Fixtures.circle(seed % 7)) }
        replicas = Array(repeating: Replica(circle: circle), count: authorCount)
        let genesis = try Fixtures.genesis(by: authors[0], width: width, height: height, mines: mines, seed: seed)
        gameID = genesis.gameID
        allOps.append(genesis)
        for i in replicas.indices { replicas[i].insert(genesis) }
    }

    /// One random action by a random author against its own view, or a merge.
    mutating func step() {
        let who = rng.below(authors.count)
        clock += UInt64(rng.below(5000))
        if rng.below(6) == 0 {
            let from = rng.below(authors.count)
            for op in replicas[from].games[gameID]?.everyOp ?? [] where op.signature != nil { replicas[who].insert(op) }
            return
        }
        guard let game = replicas[who].games[gameID], let state = game.state else { return }
        let n = state.genesis.geometry.cellCount
        let cell = rng.below(n)
        let author = authors[who]
        let op: Op?
        switch rng.below(10) {
        case 0..<5: op = try? author.reveal(cell, in: game, atMillis: clock)
        case 5..<7: op = try? author.chord(cell, in: game, atMillis: clock)
        case 7: op = try? author.peek(in: game, atMillis: clock)
        default: op = try? author.setMark(Mark.allCases[rng.below(3)], on: cell, in: game, atMillis: clock)
        }
        if let op {
            replicas[who].insert(op)
            allOps.append(op)
        }
    }

    static func make(seed: UInt64, steps: Int) throws -> OpWorld {
        var world = try OpWorld(seed: seed)
        for _ in 0..<steps { world.step() }
        return world
    }
}

extension Array {
    /// A deterministic shuffle.
    func shuffled(seed: UInt64) -> [Element] {
        var rng = BoardRandom(seed: seed)
        var copy = self
        if copy.count > 1 {
            for i in stride(from: copy.count - 1, to: 0, by: -1) { copy.swapAt(i, rng.below(i + 1)) }
        }
        return copy
    }
}

extension GameReplica {
    /// Every accepted op (these replicas have no archive: every op is in memory).
    var everyOp: [Op] { (try? allOps()) ?? [] }
}

extension Simulation.SimulatedDisk {
    /// A replica of `circle` over a new disk, every one of `ops` inserted
    /// and kept on the disk in turn, each chain's newest `recent` ops in memory.
    static func replica(of ops: [Op], circle: CircleKey, keepingRecent recent: Int) -> (Replica, Simulation.SimulatedDisk) {
        let disk = Simulation.SimulatedDisk()
        var replica = Replica(circle: circle, archive: disk, recentOpsKept: recent)
        for op in ops {
            let outcome = replica.insert(op)
            disk.keep(outcome, in: &replica)
        }
        return (replica, disk)
    }

    /// Keeps what an insert accepted or signed, and tells `replica` it is
    /// stored (as the daemon does once its write is done).
    func keep(_ outcome: InsertOutcome, in replica: inout Replica) {
        for op in outcome.accepted + outcome.signed { self["\(op.gameID) \(op.author) \(op.seq)"] = (op, false) }
        replica.noteStored(outcome.accepted + outcome.signed)
    }
}
