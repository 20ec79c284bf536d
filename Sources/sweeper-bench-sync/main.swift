// sweeper-bench-sync: figures for SweeperSync (issue 3). Build in release;
// Scripts/bench-sync.sh runs it and compares with Yjs (pycrdt).
//
//   sweeper-bench-sync [--trace PATH]
//
// Prints: apply rate (ops/s, signature verified per op, one core), catch-up
// CPU time for a 10,000-op game, bytes of a recorded three-player expert
// game in our encodings, and the size of a flood over a nearly empty
// 500×500 board. With --trace, writes the expert game's actions (the cells
// each changed) as JSON for the Yjs comparison.

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

let circle = CircleKey()
let players = (0..<3).map { _ in OpAuthor(identity: SigningIdentity(), circle: circle) }
var rng = BoardRandom(seed: 2026)
var clock: UInt64 = 1_795_000_000_000

@MainActor func newGame(_ parameters: GameParameters, seed: UInt64, by author: OpAuthor) -> (Replica, GameID) {
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
        genesis = try author.genesis(parameters: parameters, layout: board.layout, seed: seed, questionMarks: false, createdAtMillis: clock)
    } catch {
        fail("genesis: \(error)")
    }
    var replica = Replica(circle: circle)
    replica.insert(genesis)
    return (replica, genesis.gameID)
}

/// One action of the recorded game: who, and the cells it changed (cell → value:
/// 1 revealed, or 10 + mark for a mark).
struct TraceAction {
    let player: Int
    let changes: [(Int, Int)]
}

/// Plays a game to its end with three players who know where the mines are
/// but move like people: mostly reveal next to what is open, flag mines
/// beside numbers, chord when the flags are right. Returns the ops in the
/// order made and the trace.
@MainActor func playExpertGame() -> (Replica, GameID, [Op], [TraceAction]) {
    guard let parameters = try? GameParameters(preset: .expert) else { fail("expert parameters") }
    var (replica, game) = newGame(parameters, seed: 77, by: players[0])
    var ops: [Op] = replica.games[game]?.ops ?? []
    var trace: [TraceAction] = []
    var guardCount = 0
    while let state = replica.state(of: game), state.status == .playing, guardCount < 100_000 {
        guardCount += 1
        let p = rng.below(players.count)
        let author = players[p]
        let board = state.board
        let layout = state.genesis.layout
        let g = state.genesis.geometry
        let n = g.cellCount
        clock += UInt64(300 + rng.below(4000))
        guard let current = replica.games[game] else { break }
        var op: Op?
        let roll = rng.below(10)
        if roll < 3 {
            // Flag a mine next to a revealed number.
            let candidates = (0..<n).filter { c in
                layout.isMine(c) && !board.isRevealed(c) && board.mark(at: c) != .flag
                    && g.neighbors(of: c).contains { board.isRevealed($0) }
            }
            if !candidates.isEmpty {
                op = try? author.setMark(.flag, on: candidates[rng.below(candidates.count)], in: current, atMillis: clock)
            }
        } else if roll < 5 {
            // Chord on a number whose mines are all flagged.
            let candidates = (0..<n).filter { c in
                board.isRevealed(c) && layout.adjacentMines(c) > 0 && !board.cellsChorded(by: c).isEmpty
                    && g.neighbors(of: c).allSatisfy { !layout.isMine($0) || board.mark(at: $0) == .flag }
            }
            if !candidates.isEmpty { op = try? author.chord(candidates[rng.below(candidates.count)], in: current, atMillis: clock) }
        }
        if op == nil {
            let safe = (0..<n).filter { !layout.isMine($0) && !board.isRevealed($0) && board.mark(at: $0) != .flag }
            let frontier = safe.filter { c in g.neighbors(of: c).contains { board.isRevealed($0) } }
            let pool = frontier.isEmpty ? safe : frontier
            guard !pool.isEmpty else { break }
            op = try? author.reveal(pool[rng.below(pool.count)], in: current, atMillis: clock)
        }
        guard let made = op else { continue }
        let before = state
        replica.insert(made)
        ops.append(made)
        guard let after = replica.state(of: game) else { break }
        var changes: [(Int, Int)] = []
        for c in 0..<n {
            if after.board.isRevealed(c) != before.board.isRevealed(c) {
                changes.append((c, 1))
            } else if after.board.mark(at: c) != before.board.mark(at: c) {
                changes.append((c, 10 + Int(after.board.mark(at: c).rawValue)))
            }
        }
        trace.append(TraceAction(player: p, changes: changes))
    }
    return (replica, game, ops, trace)
}

/// A game of `count` ops by three players on a 100×100 board: reveals and flag changes.
@MainActor func longGame(count: Int) -> (Replica, GameID, [Op]) {
    guard let parameters = try? GameParameters(width: 100, height: 100, mines: 1500) else { fail("parameters") }
    var (replica, game) = newGame(parameters, seed: 5, by: players[0])
    var ops: [Op] = replica.games[game]?.ops ?? []
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

// MARK: Apply rate

var tracePath: String?
var arguments = CommandLine.arguments.dropFirst()
while let a = arguments.popFirst() {
    switch a {
    case "--trace": tracePath = arguments.popFirst()
    default: fail("unknown argument \(a); usage: sweeper-bench-sync [--trace PATH]")
    }
}

print("sweeper-bench-sync (one thread; CPU time)")
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

// MARK: Catch-up

let catchUpMessage = SyncMessage.ops(longReplica.segments(for: longID, after: VersionVector())).encoded
var catchUpTimes: [Double] = []
for _ in 0..<5 {
    var fresh = Replica(circle: circle)
    let t0 = cpuSeconds()
    guard case .ops(let segments) = try? SyncMessage(decoding: catchUpMessage) else { fail("catch-up decode") }
    for s in segments { fresh.insert(s) }
    catchUpTimes.append(cpuSeconds() - t0)
    guard fresh.state(of: longID)?.digest == longReplica.state(of: longID)?.digest,
          fresh.games[longID]?.opCount == longOps.count else { fail("catch-up: replica differs") }
}
catchUpTimes.sort()
print("catch-up: \(longOps.count)-op game (3 authors, 100×100) in one message of \(catchUpMessage.count) bytes: decoded, hash chains + 3 signatures checked, applied in \(format(catchUpTimes[catchUpTimes.count / 2] * 1000)) ms CPU (median of 5; goal < 100 ms)")

// MARK: Bytes of a recorded expert game

let (expertReplica, expertID, expertOps, trace) = playExpertGame()
guard let expertState = expertReplica.state(of: expertID) else { fail("expert game") }
let genesisBytes = expertOps.first.map { SyncMessage.ops([OpSegment(verifiedOps: [$0])].compactMap { $0 }).encoded.count } ?? 0
let actions = Array(expertOps.dropFirst())
let pushBytes = actions.map { op in SyncMessage.ops([OpSegment(verifiedOps: [op])].compactMap { $0 }).encoded.count }.reduce(0, +)
let storedBytes = actions.map(\.encoded.count).reduce(0, +)
// The actions only: every author's chain after the genesis (the creator's seq 1).
let afterGenesis = VersionVector(heads: [players[0].identity.peerID: 1])
let chainBytes = SyncMessage.ops(expertReplica.segments(for: expertID, after: afterGenesis)).encoded.count
// Every op signed, chained: the same segments with each op's own signature alongside (64 bytes each).
let allSignedChainBytes = chainBytes + 64 * max(0, actions.count - players.count)
let revealOps = actions.filter { $0.payload.kind == .reveal }.count
let markOps = actions.filter { $0.payload.kind == .mark }.count
print("expert game (30×16, 99 mines, 3 players): \(actions.count) actions (\(revealOps) reveals and chords, \(markOps) marks), \(expertState.status), \(trace.map(\.changes.count).reduce(0, +)) cell changes")
print("  genesis (layout included) as sent: \(genesisBytes) bytes (not in the totals below; Yjs has no board either)")
print("  ours, pushed one op per message, each signed: \(pushBytes) bytes (\(format(Double(pushBytes) / Double(max(1, actions.count)))) per action)")
print("  ours, stored one op per record, each signed: \(storedBytes) bytes")
print("  ours, as chain segments (catch-up form, one signature per author): \(chainBytes) bytes")
print("  ours, as chain segments with every op's signature kept: \(allSignedChainBytes) bytes")

// MARK: Flood on a nearly empty 500×500 board

for mines in [50, 250] {
    guard let parameters = try? GameParameters(width: 500, height: 500, mines: mines) else { fail("500×500") }
    let (floodReplica, floodID) = newGame(parameters, seed: UInt64(mines), by: players[1])
    guard let floodState = floodReplica.state(of: floodID) else { fail("flood game") }
    let covered = Board(layout: floodState.genesis.layout)
    let start = floodState.genesis.startIndex
    let cells = covered.cellsUncovered(by: start)
    // The same flood as a player's reveal op (as if the opening were not given).
    guard let game = floodReplica.games[floodID] else { fail("flood game") }
    let runs = CellRuns(cells: cells)
    let genesisSize = game.ops.first.map { $0.encoded.count } ?? 0
    guard let op = try? players[2].reveal(cells: cells, in: game, atMillis: clock) else { fail("flood op") }
    let push = SyncMessage.ops([OpSegment(verifiedOps: [op])].compactMap { $0 }).encoded.count
    print("flood on 500×500 with \(mines) mines: \(cells.count) cells in \(runs.runs.count) runs: op \(op.encoded.count) bytes signed, \(push) bytes as a push message (goal < 2,048); genesis with layout \(genesisSize) bytes")
}

// MARK: Trace for the Yjs comparison

if let tracePath {
    var json = "{\"ours\": {\"push\": \(pushBytes), \"stored\": \(storedBytes), \"chain\": \(chainBytes), \"chain_all_signed\": \(allSignedChainBytes)},\n\"actions\": [\n"
    for (i, a) in trace.enumerated() {
        let changes = a.changes.map { "[\($0.0),\($0.1)]" }.joined(separator: ",")
        json += "{\"player\": \(a.player), \"changes\": [\(changes)]}" + (i == trace.count - 1 ? "\n" : ",\n")
    }
    json += "]}\n"
    guard let f = fopen(tracePath, "w") else { fail("cannot write \(tracePath)") }
    fputs(json, f)
    fclose(f)
}
