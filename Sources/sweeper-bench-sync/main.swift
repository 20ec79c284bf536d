// sweeper-bench-sync: figures for SweeperSync (issues 3 and 9). Build in
// release; Scripts/bench-sync.sh runs it and compares with Yjs (pycrdt).
//
//   sweeper-bench-sync [--trace PATH]
//
// Prints, for people and as `result: KEY VALUE` lines for Scripts/bench.sh:
//
// - apply rate: 10,000 ops decoded, signature-verified and applied one by one;
// - catch-up CPU time of a 10,000-op game (one message of chain segments);
// - three recorded multi-player games (beginner by 2 players, expert by 3,
//   100×100 with 2,000 mines by 4), played to the end with the real engine
//   (reveals that flood, flags, chords): bytes as live pushes (one signed op
//   per message) and as catch-up chain segments, and the CPU time to decode,
//   verify and apply every push on a fresh replica (best of 3);
// - a scale table: catch-up CPU time and heap bytes held by the replica for
//   real games on 16×16, 100×100 and 500×500 boards cut at 50, 1,000,
//   10,000 and 100,000 ops, where a whole game on that board is that long
//   (and each whole game, for people);
// - the size of a flood over a nearly empty 500×500 board.
//
// With --trace, writes the recorded games' actions (the cells each changed,
// per player) and our byte counts as JSON, for the Yjs side.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SweeperCrypto
import SweeperGame
import SweeperSync

/// CPU time of this thread, in seconds.
func cpuSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func fail(_ message: String) -> Never {
    let line = Array("sweeper-bench-sync: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(1)
}

func format(_ x: Double, _ digits: Int = 1) -> String {
    var p = 1.0
    for _ in 0..<digits { p *= 10 }
    let r = (x * p).rounded() / p
    return "\(r)"
}

/// `x` as a plain decimal with `digits` decimals (never an exponent).
func decimal(_ x: Double, _ digits: Int = 3) -> String {
    var p = 1
    for _ in 0..<digits { p *= 10 }
    let scaled = Int((x * Double(p)).rounded())
    let sign = scaled < 0 ? "-" : ""
    let a = abs(scaled)
    guard digits > 0 else { return "\(sign)\(a)" }
    var fraction = String(a % p)
    while fraction.count < digits { fraction = "0" + fraction }
    return "\(sign)\(a / p).\(fraction)"
}

/// One machine-readable figure for Scripts/bench.sh.
func result(_ key: String, _ value: Int) { print("result: \(key) \(value)") }
func result(_ key: String, _ value: Double) { print("result: \(key) \(decimal(value))") }

/// Bytes in use by malloc, from glibc's malloc_info() report (the C API for
/// it, mallinfo2, is in <malloc.h>, which the Glibc module leaves out):
/// every arena's system bytes minus its free chunks, plus mmapped chunks
/// (big arrays), so chunk headers count and memory malloc keeps free does
/// not. 0 where there is no malloc_info.
func heapInUse() -> Int {
    #if canImport(Glibc)
    typealias MallocInfo = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_info") else { return 0 }
    let mallocInfo = unsafeBitCast(symbol, to: MallocInfo.self)
    var buffer: UnsafeMutablePointer<CChar>?
    var length = 0
    guard let stream = open_memstream(&buffer, &length) else { return 0 }
    _ = mallocInfo(0, stream)
    fclose(stream)
    guard let buffer else { return 0 }
    let xml = String(cString: buffer)
    free(buffer)
    // The totals over all arenas follow the last </heap>.
    let totals = xml.split(separator: "</heap>").last.map(String.init) ?? xml
    func figure(_ element: String) -> Int {
        guard let line = totals.split(separator: "\n").first(where: { $0.hasPrefix(element) }),
              let at = line.firstRange(of: "size=\"") else { return 0 }
        return Int(line[at.upperBound...].prefix { $0.isNumber }) ?? 0
    }
    return figure("<system type=\"current\"") - figure("<total type=\"fast\"") - figure("<total type=\"rest\"")
        + figure("<total type=\"mmap\"")
    #else
    0
    #endif
}

func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }

let circle = CircleKey()
let players = (0..<4).map { _ in OpAuthor(identity: SigningIdentity(), circle: circle) }
let startMillis: UInt64 = 1_795_000_000_000

// MARK: Playing real games

/// One action of a recorded game: who, and the cells it changed (cell → value:
/// 1 revealed, or 10 + mark for a mark).
struct TraceAction {
    let player: Int
    let changes: [(Int, Int)]
}

/// Cells a player may pick from, kept loosely: entries go stale as the board
/// changes and are dropped when a pick finds them stale.
final class Pool {
    private var cells: [Int] = []
    private var member: [Bool]

    init(cellCount: Int) { member = [Bool](repeating: false, count: cellCount) }

    func add(_ c: Int) {
        guard !member[c] else { return }
        member[c] = true
        cells.append(c)
    }

    /// A random cell for which `live` holds, dropping stale ones on the way.
    func pick(_ rng: inout BoardRandom, live: (Int) -> Bool) -> Int? {
        while !cells.isEmpty {
            let i = rng.below(cells.count)
            let c = cells[i]
            if live(c) { return c }
            cells[i] = cells[cells.count - 1]
            cells.removeLast()
            member[c] = false
        }
        return nil
    }
}

/// Plays a game with players who know where the mines are but move like
/// people, taking turns: mostly reveal next to what is open (a zero floods),
/// flag mines beside revealed cells, chord on numbers whose mines are all
/// flagged. Every move is an op signed by its player and inserted into one
/// replica, as the daemon does. The candidates are tracked incrementally
/// so that games of 100,000 ops on 500×500 boards take seconds; on boards of
/// up to 10,000 cells every op is made by the engine's own reveal and chord
/// and checked against the cells this player computed.
@MainActor final class Recorder {
    let authors: [OpAuthor]
    let layout: MineLayout
    let geometry: BoardGeometry
    let gameID: GameID
    private(set) var replica: Replica
    /// Every op in the order made, the genesis first.
    private(set) var ops: [Op] = []
    private(set) var trace: [TraceAction] = []
    private let recordTrace: Bool
    private let checkWithEngine: Bool
    private var rng: BoardRandom
    private var clock = startMillis
    private var turn = 0
    private var revealed: [Bool]
    private var flagged: [Bool]
    private var safeLeft: Int
    private var seen: [UInt32]
    private var stamp: UInt32 = 0
    private let safeFrontier: Pool
    private let mineFrontier: Pool
    private let chordable: Pool
    private let anySafe: Pool

    init(_ parameters: GameParameters, seed: UInt64, authors: [OpAuthor], recordTrace: Bool) {
        let board: GeneratedBoard
        do {
            board = try Generator.generate(parameters, seed: seed)
        } catch {
            fail("generator: \(error)")
        }
        let parameters = (try? GameParameters(width: parameters.width, height: parameters.height, mines: parameters.mines,
                                              start: parameters.geometry.cell(at: board.start), noGuess: parameters.noGuess)) ?? parameters
        let genesis: Op
        do {
            genesis = try authors[0].genesis(parameters: parameters, layout: board.layout, seed: seed, questionMarks: false,
                                             createdAtMillis: startMillis)
        } catch {
            fail("genesis: \(error)")
        }
        var replica = Replica(circle: circle)
        replica.insert(genesis)
        guard let state = replica.state(of: genesis.gameID) else { fail("genesis refused") }
        self.authors = authors
        self.layout = board.layout
        self.geometry = board.layout.geometry
        self.gameID = genesis.gameID
        self.replica = replica
        self.ops = [genesis]
        self.recordTrace = recordTrace
        let n = geometry.cellCount
        self.checkWithEngine = n <= 10_000
        self.rng = BoardRandom(seed: seed &* 7919 &+ 1)
        self.revealed = state.board.revealed
        self.flagged = [Bool](repeating: false, count: n)
        self.safeLeft = layout.safeCellCount - state.board.revealedSafeCount
        self.seen = [UInt32](repeating: 0, count: n)
        self.safeFrontier = Pool(cellCount: n)
        self.mineFrontier = Pool(cellCount: n)
        self.chordable = Pool(cellCount: n)
        self.anySafe = Pool(cellCount: n)
        for c in 0..<n {
            if revealed[c] {
                noteRevealed(c)
            } else if !layout.isMine(c) {
                anySafe.add(c)
            }
        }
    }

    var isOver: Bool { safeLeft == 0 }

    /// Plays until the game is won or holds `limit` ops.
    func play(upTo limit: Int = .max) {
        while ops.count < limit && step() {}
    }

    private func noteRevealed(_ c: Int) {
        geometry.forEachNeighbor(of: c) { nb in
            guard !revealed[nb] else { return }
            if layout.isMine(nb) {
                if !flagged[nb] { mineFrontier.add(nb) }
            } else {
                safeFrontier.add(nb)
            }
        }
        if layout.adjacentMines(c) > 0 && isChordable(c) { chordable.add(c) }
    }

    /// A revealed number whose mines are all flagged, with covered cells left around it.
    private func isChordable(_ c: Int) -> Bool {
        guard revealed[c] else { return false }
        var flags = 0
        var targets = 0
        geometry.forEachNeighbor(of: c) { nb in
            if flagged[nb] { flags += 1 } else if !revealed[nb] { targets += 1 }
        }
        return targets > 0 && flags == layout.adjacentMines(c)
    }

    /// The cells a reveal from `seeds` opens: each covered, unflagged seed, and
    /// a flood through zeros (the engine's rule).
    private func flood(from seeds: [Int]) -> [Int] {
        stamp += 1
        var out: [Int] = []
        var stack: [Int] = []
        for s in seeds where !revealed[s] && !flagged[s] && seen[s] != stamp {
            seen[s] = stamp
            out.append(s)
            stack.append(s)
        }
        while let c = stack.popLast() {
            guard !layout.isMine(c) && layout.adjacentMines(c) == 0 else { continue }
            geometry.forEachNeighbor(of: c) { nb in
                if !revealed[nb] && !flagged[nb] && seen[nb] != stamp {
                    seen[nb] = stamp
                    out.append(nb)
                    stack.append(nb)
                }
            }
        }
        return out.sorted()
    }

    private enum Move {
        case flag(Int)
        case chord(Int)
        case reveal(Int)
    }

    /// The op for `move` by `author`, made against the replica's current game.
    private func makeOp(_ move: Move, by author: OpAuthor, cells: [Int]) -> Op? {
        guard let game = replica.games[gameID] else { fail("game vanished") }
        let op: Op?
        switch move {
        case .flag(let m):
            op = try? author.setMark(.flag, on: m, in: game, atMillis: clock)
        case .chord(let c):
            op = checkWithEngine ? try? author.chord(c, in: game, atMillis: clock)
                : try? author.reveal(cells: cells, in: game, atMillis: clock)
        case .reveal(let c):
            op = checkWithEngine ? try? author.reveal(c, in: game, atMillis: clock)
                : try? author.reveal(cells: cells, in: game, atMillis: clock)
        }
        if checkWithEngine, let op, case .reveal(let runs) = op.payload, Array(runs) != cells {
            fail("the engine's move differs from the player's: \(move)")
        }
        return op
    }

    /// One move by the next player; `false` once the game is won.
    private func step() -> Bool {
        guard safeLeft > 0 else { return false }
        let p = turn % authors.count
        turn += 1
        clock += UInt64(300 + rng.below(4000))
        let roll = rng.below(10)
        var move: Move?
        if roll < 3, let m = mineFrontier.pick(&rng, live: { !self.flagged[$0] }) {
            move = .flag(m)
        } else if roll < 5, let c = chordable.pick(&rng, live: { self.isChordable($0) }) {
            move = .chord(c)
        }
        if move == nil {
            guard let c = safeFrontier.pick(&rng, live: { !self.revealed[$0] }) ?? anySafe.pick(&rng, live: { !self.revealed[$0] })
            else { fail("no safe cell left while the game goes on") }
            move = .reveal(c)
        }
        guard let move else { return false }
        var cells: [Int] = []
        switch move {
        case .flag(let m): cells = [m]
        case .chord(let c):
            var targets: [Int] = []
            geometry.forEachNeighbor(of: c) { nb in if !revealed[nb] && !flagged[nb] { targets.append(nb) } }
            cells = flood(from: targets)
        case .reveal(let c): cells = flood(from: [c])
        }
        guard let op = makeOp(move, by: authors[p], cells: cells) else { fail("no op for \(move)") }
        guard replica.insert(op).accepted.count == 1 else { fail("own op refused") }
        ops.append(op)
        if case .flag(let m) = move {
            flagged[m] = true
            geometry.forEachNeighbor(of: m) { nb in
                if revealed[nb] && isChordable(nb) { chordable.add(nb) }
            }
            if recordTrace { trace.append(TraceAction(player: p, changes: [(m, 10 + Int(Mark.flag.rawValue))])) }
        } else {
            for c in cells {
                if layout.isMine(c) { fail("a player revealed a mine") }
                revealed[c] = true
            }
            safeLeft -= cells.count
            for c in cells { noteRevealed(c) }
            if recordTrace { trace.append(TraceAction(player: p, changes: cells.map { ($0, 1) })) }
        }
        return true
    }

    /// Fails unless the replica's board is the one this player tracked.
    func check() {
        guard let board = replica.state(of: gameID)?.board else { fail("game vanished") }
        guard board.revealed == revealed, (0..<geometry.cellCount).allSatisfy({ (board.mark(at: $0) == .flag) == flagged[$0] })
        else { fail("the replica's board differs from the players'") }
        if isOver && board.status != .won { fail("game over but \(board.status)") }
    }
}

/// A game of `count` ops by three players on a 100×100 board: random reveals
/// and flag changes (the 10,000-op catch-up figure, as since issue 3).
@MainActor func longGame(count: Int) -> (Replica, GameID, [Op]) {
    guard let parameters = try? GameParameters(width: 100, height: 100, mines: 1500),
          let board = try? Generator.generate(parameters, seed: 5),
          let start = try? GameParameters(width: 100, height: 100, mines: 1500, start: parameters.geometry.cell(at: board.start)),
          let genesis = try? players[0].genesis(parameters: start, layout: board.layout, seed: 5, questionMarks: false,
                                                createdAtMillis: startMillis)
    else { fail("long game") }
    var rng = BoardRandom(seed: 2026)
    var clock = startMillis
    var replica = Replica(circle: circle)
    replica.insert(genesis)
    let game = genesis.gameID
    var ops: [Op] = [genesis]
    while ops.count < count {
        guard let current = replica.games[game], let state = current.state else { break }
        let author = players[rng.below(3)]
        let n = state.genesis.geometry.cellCount
        let cell = rng.below(n)
        clock += 500
        var op: Op?
        if rng.below(4) == 0 && !state.genesis.layout.isMine(cell) {
            op = try? author.reveal(cell, in: current, atMillis: clock)
        }
        if op == nil { op = try? author.cycleMark(cell, in: current, atMillis: clock) }
        if let op {
            replica.insert(op)
            ops.append(op)
        }
    }
    return (replica, game, ops)
}

/// One sync message carrying `ops` (a prefix of a game, in the order made) as
/// one chain segment per author: what a peer with nothing receives.
func catchUpMessage(_ ops: ArraySlice<Op>) -> [UInt8] {
    var chains: [PeerID: [Op]] = [:]
    var order: [PeerID] = []
    for op in ops {
        if chains[op.author] == nil { order.append(op.author) }
        chains[op.author, default: []].append(op)
    }
    let segments = order.compactMap { chains[$0].flatMap { OpSegment(verifiedOps: $0) } }
    return SyncMessage.ops(segments).encoded
}

/// Decodes `message` and inserts its segments into `replica`.
func applyCatchUp(_ message: [UInt8], into replica: inout Replica) {
    guard case .ops(let segments) = try? SyncMessage(decoding: message) else { fail("catch-up decode") }
    for s in segments { replica.insert(s) }
}

/// Catch-up CPU time of `message` into a fresh replica (ms, median of 3) and
/// the heap bytes the resulting replica holds (measured on a fourth, untimed
/// catch-up: in use after minus before, the decoded message freed).
@MainActor func measureCatchUp(_ message: [UInt8], game: GameID, ops count: Int) -> (Double, Int) {
    var times: [Double] = []
    for _ in 0..<3 {
        var r = Replica(circle: circle)
        let t = cpuSeconds()
        applyCatchUp(message, into: &r)
        times.append(cpuSeconds() - t)
        guard r.games[game]?.opCount == count, r.rejectionCounts.isEmpty else { fail("catch-up refused ops") }
    }
    let before = heapInUse()
    var held = Replica(circle: circle)
    applyCatchUp(message, into: &held)
    let bytes = heapInUse() - before
    withExtendedLifetime(held) {}
    return (median(times) * 1000, bytes)
}

// MARK: Arguments

var tracePath: String?
var arguments = CommandLine.arguments.dropFirst()
while let a = arguments.popFirst() {
    switch a {
    case "--trace": tracePath = arguments.popFirst()
    default: fail("unknown argument \(a); usage: sweeper-bench-sync [--trace PATH]")
    }
}

print("sweeper-bench-sync (one thread; CPU time)")

// MARK: Apply rate

let (longReplica, longID, longOps) = longGame(count: 10_000)
let stored = longOps.map(\.encoded)
var applyTimes: [Double] = []
for _ in 0..<3 {
    var fresh = Replica(circle: circle)
    let t0 = cpuSeconds()
    for bytes in stored {
        guard let op = try? Op(decoding: bytes) else { fail("decode") }
        fresh.insert(op)
    }
    applyTimes.append(cpuSeconds() - t0)
    guard fresh.state(of: longID)?.digest == longReplica.state(of: longID)?.digest else { fail("apply: digests differ") }
}
let applyBest = applyTimes.min() ?? 1
print("apply: \(stored.count) ops, each decoded, signature-verified and applied one by one: \(Int(Double(stored.count) / applyBest)) ops/s (best of 3: \(format(applyBest * 1000)) ms)")
result("sync.apply_rate_ops_per_s", Int(Double(stored.count) / applyBest))

// MARK: Catch-up

let longMessage = SyncMessage.ops(longReplica.segments(for: longID, after: VersionVector())).encoded
var catchUpTimes: [Double] = []
for _ in 0..<5 {
    var fresh = Replica(circle: circle)
    let t0 = cpuSeconds()
    applyCatchUp(longMessage, into: &fresh)
    catchUpTimes.append(cpuSeconds() - t0)
    guard fresh.state(of: longID)?.digest == longReplica.state(of: longID)?.digest,
          fresh.games[longID]?.opCount == longOps.count else { fail("catch-up: replica differs") }
}
print("catch-up: \(longOps.count)-op game (3 authors, 100×100, random reveals and mark changes) in one message of \(longMessage.count) bytes: decoded, hash chains + 3 signatures checked, applied in \(format(median(catchUpTimes) * 1000)) ms CPU (median of 5; goal < 100 ms)")
result("sync.catchup_10k_ms", median(catchUpTimes) * 1000)

// MARK: Recorded multi-player games

struct RecordedGame {
    let key: String
    let title: String
    let parameters: GameParameters
    let seed: UInt64
    let players: Int
}

guard let beginner = try? GameParameters(preset: .beginner), let expert = try? GameParameters(preset: .expert),
      let huge = try? GameParameters(width: 100, height: 100, mines: 2000) else { fail("parameters") }
let recordedGames = [
    RecordedGame(key: "beginner2", title: "beginner (9×9, 10 mines), 2 players", parameters: beginner, seed: 11, players: 2),
    RecordedGame(key: "expert3", title: "expert (30×16, 99 mines), 3 players", parameters: expert, seed: 77, players: 3),
    RecordedGame(key: "huge4", title: "100×100, 2,000 mines, 4 players", parameters: huge, seed: 100, players: 4),
]
var traceJSON = "{\"games\": [\n"
for (gi, spec) in recordedGames.enumerated() {
    let recorder = Recorder(spec.parameters, seed: spec.seed, authors: Array(players[0..<spec.players]), recordTrace: true)
    recorder.play()
    recorder.check()
    let replica = recorder.replica
    let gameID = recorder.gameID
    guard let state = replica.state(of: gameID), let genesis = recorder.ops.first else { fail("recorded game") }
    let actions = Array(recorder.ops.dropFirst())
    let trace = recorder.trace
    func push(_ op: Op) -> [UInt8] { SyncMessage.ops([OpSegment(verifiedOps: [op])].compactMap { $0 }).encoded }
    let pushes = actions.map(push)
    let pushBytes = pushes.map(\.count).reduce(0, +)
    let storedBytes = actions.map(\.encoded.count).reduce(0, +)
    // The actions only: every author's chain after the genesis (the creator's seq 1).
    let afterGenesis = VersionVector(heads: [players[0].identity.peerID: 1])
    let chainMessage = SyncMessage.ops(replica.segments(for: gameID, after: afterGenesis)).encoded
    let chainBytes = chainMessage.count
    // Every op signed, chained: the same segments with each op's own signature alongside (64 bytes each).
    let allSignedChainBytes = chainBytes + 64 * max(0, actions.count - spec.players)
    let reveals = actions.filter { $0.payload.kind == .reveal }.count
    let marks = actions.filter { $0.payload.kind == .mark }.count

    // Apply: a fresh replica that holds the genesis (the board, which Yjs has
    // no counterpart of) decodes, verifies and applies every push in order.
    func fresh() -> Replica {
        var r = Replica(circle: circle)
        r.insert(genesis)
        return r
    }
    var pushTimes: [Double] = []
    var chainTimes: [Double] = []
    for _ in 0..<3 {
        var r = fresh()
        let t0 = cpuSeconds()
        for message in pushes { applyCatchUp(message, into: &r) }
        pushTimes.append(cpuSeconds() - t0)
        guard r.state(of: gameID)?.digest == state.digest else { fail("\(spec.key): pushes gave another state") }
        var c = fresh()
        let t1 = cpuSeconds()
        applyCatchUp(chainMessage, into: &c)
        chainTimes.append(cpuSeconds() - t1)
        guard c.state(of: gameID)?.digest == state.digest else { fail("\(spec.key): segments gave another state") }
    }
    let pushApply = pushTimes.min() ?? 0
    let chainApply = chainTimes.min() ?? 0
    let changes = trace.map(\.changes.count).reduce(0, +)
    print("\(spec.key): \(spec.title): \(actions.count) actions (\(reveals) reveals and chords, \(marks) flags), \(state.status), \(changes) cell changes")
    print("  genesis (layout included) as sent: \(push(genesis).count) bytes (not in the totals below; Yjs has no board either)")
    print("  ours, pushed one op per message, each signed: \(pushBytes) bytes (\(format(Double(pushBytes) / Double(max(1, actions.count)))) per action)")
    print("  ours, stored one op per record, each signed: \(storedBytes) bytes")
    print("  ours, as chain segments (catch-up form, one signature per author): \(chainBytes) bytes")
    print("  ours, as chain segments with every op's signature kept: \(allSignedChainBytes) bytes")
    print("  ours, apply: every push decoded, verified and applied on a fresh replica: \(format(pushApply * 1000, 2)) ms CPU (best of 3); as one catch-up message: \(format(chainApply * 1000, 2)) ms")
    result("sync.\(spec.key).ops", recorder.ops.count)
    result("sync.\(spec.key).actions", actions.count)
    result("sync.\(spec.key).ours_push_bytes", pushBytes)
    result("sync.\(spec.key).ours_chain_bytes", chainBytes)
    result("sync.\(spec.key).ours_apply_ms", pushApply * 1000)

    traceJSON += "{\"key\": \"\(spec.key)\", \"title\": \"\(spec.title)\", \"players\": \(spec.players),\n"
    traceJSON += "\"ours\": {\"push\": \(pushBytes), \"stored\": \(storedBytes), \"chain\": \(chainBytes), \"chain_all_signed\": \(allSignedChainBytes), \"apply_ms\": \(decimal(pushApply * 1000))},\n"
    traceJSON += "\"actions\": [\n"
    for (i, a) in trace.enumerated() {
        let changes = a.changes.map { "[\($0.0),\($0.1)]" }.joined(separator: ",")
        traceJSON += "{\"player\": \(a.player), \"changes\": [\(changes)]}" + (i == trace.count - 1 ? "\n" : ",\n")
    }
    traceJSON += "]}" + (gi == recordedGames.count - 1 ? "\n" : ",\n")
}
traceJSON += "]}\n"

// MARK: Scale: catch-up and memory by board size and op count

let opCounts = [50, 1_000, 10_000, 100_000]
print("scale: real games by 3 players (as above), cut at N ops (the genesis included), sent as one catch-up message;")
print("  catch-up = decode + hash chains and 3 signatures checked + applied into a fresh replica, CPU, median of 3;")
print("  memory = heap bytes in use (glibc malloc_info: arenas minus free chunks, plus mmapped chunks) after minus before building that replica (decoded message freed, replica alive)")
for (w, h, mines) in [(16, 16, 40), (100, 100, 2_000), (500, 500, 50_000)] {
    guard let parameters = try? GameParameters(width: w, height: h, mines: mines) else { fail("\(w)×\(h)") }
    let t0 = cpuSeconds()
    let recorder = Recorder(parameters, seed: UInt64(w * 1000 + h), authors: Array(players[0..<3]), recordTrace: false)
    recorder.play(upTo: opCounts.last ?? 0)
    recorder.check()
    let ops = recorder.ops
    let made = cpuSeconds() - t0
    let whole = recorder.isOver ? "a whole game is \(ops.count) ops" : "played to \(ops.count) ops"
    print("  \(w)×\(h), \(mines) mines (\(whole), made in \(format(made, 1)) s):")
    for count in opCounts {
        guard count <= ops.count else {
            print("    \(count) ops: no room (a whole game there is \(ops.count) ops)")
            continue
        }
        let message = catchUpMessage(ops[0..<count])
        let (ms, bytes) = measureCatchUp(message, game: recorder.gameID, ops: count)
        print("    \(count) ops: message \(message.count) bytes; catch-up \(format(ms, 2)) ms; replica holds \(bytes) bytes (\(bytes / count) per op)")
        result("scale.\(w)x\(h).\(count).catchup_ms", ms)
        result("scale.\(w)x\(h).\(count).memory_bytes", bytes)
    }
    if recorder.isOver {
        let message = catchUpMessage(ops[...])
        let (ms, bytes) = measureCatchUp(message, game: recorder.gameID, ops: ops.count)
        print("    the whole game, \(ops.count) ops: message \(message.count) bytes; catch-up \(format(ms, 2)) ms; replica holds \(bytes) bytes")
    }
}

// MARK: Flood on a nearly empty 500×500 board

for mines in [50, 250] {
    guard let parameters = try? GameParameters(width: 500, height: 500, mines: mines) else { fail("500×500") }
    let recorder = Recorder(parameters, seed: UInt64(mines), authors: [players[1], players[2]], recordTrace: false)
    guard let game = recorder.replica.games[recorder.gameID], let floodState = game.state else { fail("flood game") }
    let covered = Board(layout: floodState.genesis.layout)
    let cells = covered.cellsUncovered(by: floodState.genesis.startIndex)
    // The same flood as a player's reveal op (as if the opening were not given).
    let runs = CellRuns(cells: cells)
    let genesisSize = game.ops.first.map { $0.encoded.count } ?? 0
    guard let op = try? players[2].reveal(cells: cells, in: game, atMillis: startMillis + 1000) else { fail("flood op") }
    let push = SyncMessage.ops([OpSegment(verifiedOps: [op])].compactMap { $0 }).encoded.count
    print("flood on 500×500 with \(mines) mines: \(cells.count) cells in \(runs.runs.count) runs: op \(op.encoded.count) bytes signed, \(push) bytes as a push message (goal < 2,048); genesis with layout \(genesisSize) bytes")
}

// MARK: Trace for the Yjs comparison

if let tracePath {
    guard let f = fopen(tracePath, "w") else { fail("cannot write \(tracePath)") }
    fputs(traceJSON, f)
    fclose(f)
}
