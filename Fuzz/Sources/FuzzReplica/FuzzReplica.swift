// Applying ops to a replica: ops that are validly signed by circle members
// (so they get past the signature and membership checks) but otherwise
// chosen by the fuzzer: any payload (cells off the board, any genesis),
// sequence numbers, Lamport times, wall clocks and chains, single or in
// segments, or unsigned as a live push from their author's link, then and
// there or later vouched for by their signature; interleaved with local
// moves (OpAuthor) against whatever state that made. What is accepted is
// written to an in-memory store when the input says, and the games may
// then be put to sleep: later ops, moves and queries wake them. Invariants:
// a game put to sleep reads back as it was; rebuilding from the accepted
// ops (as the daemon does at start, the ops no signature covers given as
// vouched) gives the same state.
import FuzzSupport
import SweeperCrypto
import SweeperGame
import Synchronization

@testable import SweeperConventions
@testable import SweeperSync

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReplica(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    var world = World()
    var steps = 0
    while !input.isAtEnd && steps < 64 {
        steps += 1
        world.step(&input)
    }
    world.flush()
    world.checkRestore()
    return 0
}

/// The replica's store: every op written, by game, author and seq.
final class MemoryStore: OpArchive {
    private let rows = Mutex<[String: Op]>([:])

    func write(_ ops: [Op]) {
        rows.withLock { for op in ops { $0["\(op.gameID) \(op.author) \(op.seq)"] = op } }
    }

    func ops(of game: GameID, by author: PeerID, seqs: ClosedRange<UInt64>) throws -> [Op] {
        try rows.withLock { rows in
            try seqs.map { seq in
                guard let op = rows["\(game) \(author) \(seq)"] else { throw OpArchiveMiss(game: game, author: author, seqs: seq...seq) }
                return op
            }
        }
    }
}

struct World {
    let store = MemoryStore()
    var replica: Replica
    var games: [GameID] = [Fixtures.genesis.gameID, Fixtures.privateGenesis.gameID, Fixtures.raceGenesis.gameID]
    var batch: [Op] = []
    /// Ops accepted or signed and not yet written.
    var unwritten: [Op] = []

    /// The fixture games, written and told stored; each chain keeps its 2
    /// newest ops in memory and reads the rest back from the store.
    init() {
        replica = Replica(circle: Fixtures.circle, reader: Fixtures.reader, archive: store, recentOpsKept: 2)
        let ops = Fixtures.replica.games.values.flatMap { (try? $0.allOps()) ?? [] }
        replica.restore(ops)
        store.write(ops)
        replica.noteEverythingStored()
    }

    mutating func step(_ input: inout FuzzInput) {
        let kind = input.byte()
        switch kind % 4 {
        case 0: remoteOp(&input)
        case 1: localMove(&input)
        case 2:
            flush()
            if kind & 0x40 != 0 { write() }
            if kind & 0x80 != 0 { sleep() }
        default: query(&input)
        }
    }

    /// Keeps what an insert accepted or signed, to write.
    mutating func keep(_ outcome: InsertOutcome) {
        unwritten += outcome.accepted + outcome.signed
    }

    /// Writes what was accepted, and tells the replica it is stored.
    mutating func write() {
        store.write(unwritten)
        replica.noteStored(unwritten)
        unwritten = []
    }

    /// Puts every game that may to sleep: each reads back as it was.
    mutating func sleep() {
        let before = replica.games.mapValues { $0.state?.digest }
        replica.sleepIdle(keepingAwake: 0)
        for (id, digest) in before where replica.sleeping[id] != nil {
            check(replica.awakened(id)?.state?.digest == digest, "a game put to sleep reads back as another")
        }
    }

    /// An op from another member, its fields chosen by the input.
    mutating func remoteOp(_ input: inout FuzzInput) {
        let who = Fixtures.players[Int(input.byte()) % Fixtures.players.count]
        let flags = input.byte()
        var reader = ByteReader(input.chunk())
        guard let payload = try? OpPayload.decode(from: &reader) else { return }
        let gameID: GameID
        if case .genesis(let g) = payload, flags & 1 == 0 {
            gameID = g.gameID(creator: who.peerID)
            games.append(gameID)
        } else {
            gameID = games[Int(input.byte()) % games.count]
        }
        let pendingInBatch = batch.last.map { $0.author == who.peerID && $0.gameID == gameID } ?? false
        // Made against the game as held, without waking it: the op does.
        let held = replica.awakened(gameID)
        let last = pendingInBatch ? batch.last : held?.lastOp(of: who.peerID)
        let next = (last?.seq ?? 0) &+ 1
        let seq: UInt64
        switch (flags >> 1) & 3 {
        case 0: seq = next
        case 1: seq = next &+ UInt64(input.byte())
        case 2: seq = max(1, UInt64(input.uint16()) << 48 | UInt64(input.uint16()) << 32 | UInt64(input.uint16()) << 16 | UInt64(input.uint16()))
        default: seq = 1
        }
        let lamport: UInt64
        if flags & 8 == 0 {
            lamport = max(held?.maxLamport ?? 0, last?.lamport ?? 0) &+ 1 | 1
        } else {
            lamport = max(1, UInt64(input.uint16()) << 48 | UInt64(input.uint16()) << 32 | UInt64(input.uint16()) << 16 | UInt64(input.uint16()))
        }
        let previous = flags & 16 == 0 && seq == next ? (last?.hash ?? .none) : OpHash(unchecked: [UInt8](repeating: input.byte(), count: 32))
        let wall = UInt64(input.uint16()) << 48 | UInt64(input.uint16())
        let made = Op(
            signing: who, circle: Fixtures.circle, gameID: gameID, seq: seq, lamport: lamport, previous: previous,
            wallClockMillis: wall, payload: payload)
        // Only what a peer can send: the op as the receiver decodes it.
        guard let op = try? Op(decoding: made.encoded) else { return }
        if flags & 64 != 0 {
            // A live push: unsigned, from the author's own link; its signature may follow.
            flush()
            keep(replica.insert(vouched: op.with(signature: nil)))
            if flags & 128 != 0, let signature = made.signature {
                keep(replica.attach(signature, to: ChainHead(game: gameID, author: who.peerID, seq: seq)))
            }
        } else if flags & 32 != 0 {
            // Part of a segment: only its last op keeps a signature.
            if let first = batch.first, first.author != op.author || first.gameID != op.gameID || op.seq != (batch.last?.seq ?? 0) + 1 {
                flush()
            }
            batch.append(op)
        } else {
            flush()
            keep(replica.insert(op))
        }
    }

    /// Sends the segment being gathered.
    mutating func flush() {
        guard !batch.isEmpty else { return }
        let ops = batch.enumerated().map { $0.offset == batch.count - 1 ? $0.element : $0.element.with(signature: nil) }
        batch = []
        // Only what a peer can send: the segment as the receiver decodes it.
        if let segment = OpSegment(verifiedOps: ops), let decoded = try? OpSegment(decoding: segment.encoded) {
            keep(replica.insert(decoded))
        }
    }

    /// A move by this daemon's player, as the control socket asks for one.
    mutating func localMove(_ input: inout FuzzInput) {
        flush()
        let author = Fixtures.authors[Int(input.byte()) % Fixtures.authors.count]
        // A player's move wakes its game, as the daemon's engine does.
        let id = games[Int(input.byte()) % games.count]
        replica.wake(id)
        guard let game = replica.games[id] else { return }
        let kind = input.byte()
        let cell = Int(Int16(bitPattern: input.uint16()))
        let now = UInt64(input.uint16()) << 32
        let op: Op?
        do {
            switch kind % 6 {
            case 0: op = try author.reveal(cell, in: game, atMillis: now)
            case 1: op = try author.chord(cell, in: game, atMillis: now)
            case 2: op = try author.cycleMark(cell, in: game, atMillis: now)
            case 3: op = try author.setMark(Mark(rawValue: kind / 6 % 3) ?? .flag, on: cell, in: game, atMillis: now)
            case 4 where kind & 0xC0 == 0xC0: op = try author.resign(in: game, atMillis: now)
            case 4: op = try (kind & 0x40 == 0 ? author.peek(in: game, atMillis: now) : author.archive(kind & 0x80 == 0, in: game, atMillis: now))
            default: op = try author.reveal(cells: [cell, cell + 1, cell + 9], in: game, atMillis: now)
            }
        } catch {
            return
        }
        guard let op else { return }
        let outcome = replica.insert(op)
        keep(outcome)
        // Ops of the same author waiting for this one may be refused now; this one must not be.
        check(outcome.rejection(of: op) == nil, "a local move was refused: \(outcome.rejected.map(\.reason))")
        check(outcome.accepted.contains { $0.hash == op.hash }, "a local move was not applied")
    }

    /// What the control socket and the sync sessions read from the replica.
    mutating func query(_ input: inout FuzzInput) {
        flush()
        let id = games[Int(input.byte()) % games.count]
        replica.wake(id)
        guard let game = replica.games[id] else { return }
        var vector = VersionVector()
        for author in game.authors { vector.advance(author, to: UInt64(input.byte())) }
        for segment in game.segments(after: vector) { _ = segment.encoded }
        _ = game.vector.lag(against: vector)
        guard let state = game.state else { return }
        _ = state.digest
        _ = state.scores
        _ = state.endMillis
        _ = state.trippedBy
        let cell = Int(input.uint16())
        _ = state.firstRevealer(of: cell)
        _ = state.firstRevealStamp(of: cell)
        _ = state.board.progress
        _ = Solver.hint(for: state.board)
    }

    /// Rebuilding from the accepted ops (the daemon's start) gives the same state.
    func checkRestore() {
        var all: [Op] = []
        var vouched: [Op] = []
        let held = replica.games.merging(replica.sleeping.keys.compactMap { id in replica.awakened(id).map { (id, $0) } }) { a, _ in a }
        check(held.count == replica.games.count + replica.sleeping.count, "a sleeping game cannot be read back")
        for game in held.values {
            for op in (try? game.allOps()) ?? [] {
                if game.isVouchedOnly(op) { vouched.append(op) } else { all.append(op) }
            }
        }
        var fresh = Replica(circle: Fixtures.circle, reader: Fixtures.reader)
        fresh.restore(all.reversed(), vouched: vouched.reversed())
        for (id, game) in held {
            guard let state = game.state else { continue }
            check(fresh.state(of: id)?.digest == state.digest, "restoring \(id) from its ops gives another state")
        }
    }
}

@_cdecl("FuzzReplica_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    writeSeedsIfAsked {
        // Payload encodings as the real encoder writes them, wrapped in remote-op steps.
        func payload(_ p: OpPayload) -> [UInt8] {
            var w = ByteWriter()
            p.encode(into: &w)
            return w.bytes
        }
        func remote(_ who: UInt8, _ flags: UInt8, _ p: OpPayload, tail: [UInt8] = []) -> [UInt8] {
            [0, who, flags] + chunk(payload(p)) + tail
        }
        guard case .genesis(let g) = Fixtures.genesis.payload else { return [] }
        let reveal = OpPayload.reveal(CellRuns(cells: [0, 1, 2, 30, 31, 80]))
        // A sealed move of bob's in the private game (game 1 of the list).
        let sealed =
            Fixtures.replica.games[Fixtures.privateGenesis.gameID].flatMap {
                try? Fixtures.authors[1].setMark(.flag, on: 0, in: $0, atMillis: 1_700_000_002_000)?.payload
            } ?? .assisted
        return [
            remote(1, 1, sealed, tail: [1])
                + remote(
                    0, 1, .privatePlayers([SealedKey(player: Fixtures.players[2].peerID, sealed: [UInt8](repeating: 7, count: GameKey.sealedByteCount))]),
                    tail: [1]) + [3, 1, 0, 0],
            remote(0, 1, .players([Fixtures.players[2].peerID]), tail: [0]) + remote(2, 1, .archive(true), tail: [0]) + [3, 0, 1, 2],
            remote(1, 0, reveal, tail: [0]) + remote(2, 0, .mark(cell: 5, mark: .flag), tail: [0]) + [3, 0, 1, 2],
            remote(0, 0, .genesis(g)) + [1, 1, 1, 0, 40, 0, 0, 1] + [3, 1, 7, 7, 7],
            remote(1, 32, reveal, tail: [0]) + remote(1, 32, .assisted, tail: [0]) + remote(1, 32, .mark(cell: 3, mark: .question), tail: [0]) + [2],
            remote(2, 8, reveal, tail: [0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
            // Hints from two players, a seeded op from one who did not create the game, then from its creator.
            remote(1, 0, .hint(cell: 12), tail: [0]) + remote(2, 0, .hint(cell: 13), tail: [0]) + remote(2, 0, .seeded, tail: [0])
                + remote(0, 0, .seeded, tail: [0]) + [3, 0, 1, 2],
            // Live pushes: a flood with an exception, a mark, then a flood signed at once.
            remote(1, 64, .flood(Flood(cell: 40, chord: false, exceptions: [31, 49]) ?? Flood(cell: 0, chord: false, exceptions: [])!), tail: [0])
                + remote(1, 64, .mark(cell: 7, mark: .flag), tail: [0])
                + remote(1, 192, .flood(Flood(cell: 10, chord: true, exceptions: [0, 81]) ?? Flood(cell: 0, chord: false, exceptions: [])!), tail: [0]) + [
                    3, 0, 1, 2,
                ],
            [1, 0, 0, 0, 10, 0, 0, 1, 1, 1, 2, 11, 0, 0, 2, 1, 2, 3, 12, 0, 0, 3, 3, 0, 0, 40, 0, 1, 4, 0, 5, 0, 20, 0, 0, 9],
            // The race (game 2): a resign from cat, who does not race, and from ann; bob's and ann's moves on their own boards.
            remote(2, 0, .resign, tail: [2]) + remote(0, 0, .resign, tail: [2]) + remote(1, 0, reveal, tail: [2])
                + [1, 0, 2, 0, 0, 40, 0, 1] + [1, 1, 2, 0xC4, 0, 0, 0, 2] + [3, 2, 1, 2],
            // Written and put to sleep (step 0xC2), then woken by a remote op, a local move and a query
            // (a remote op's tail: its game, then its wall clock).
            remote(1, 0, reveal, tail: [0, 0, 0, 0x20, 0]) + [0xC2] + remote(2, 0, .mark(cell: 5, mark: .flag), tail: [0, 0, 0, 0x20, 0]) + [0xC2]
                + [1, 0, 0, 0, 10, 0, 0, 1] + [0xC2] + [3, 0, 1, 2] + [0xC2] + remote(1, 32, .assisted, tail: [0, 0, 0, 0x20, 0]) + [2],
            // A live push held unsigned keeps its game awake; its signature lets it sleep.
            remote(1, 64, .mark(cell: 7, mark: .flag), tail: [0, 0, 0, 0x20, 0]) + [0xC2]
                + remote(1, 192, .mark(cell: 8, mark: .flag), tail: [0, 0, 0, 0x20, 0]) + [0xC2] + [3, 0, 1, 2],
        ]
    }
    return runFuzzer(argc, argv, fuzzReplica)
}
