// sweeper-bench-sync: figures for SweeperSync. Build in
// release; Scripts/bench-sync.sh runs it and compares with Yjs (pycrdt).
//
//   sweeper-bench-sync [--trace PATH] [--write-store DIR GAMES OPS]
//
// Prints, for people and as `result: KEY VALUE` lines for Scripts/bench.sh:
//
// - apply rate: 10,000 ops decoded, signature-verified and applied one by one;
// - catch-up CPU time of a 10,000-op game, as a link of protocol 15 carries
//   it (chain segments in the link's compact form) to a device that holds
//   nothing of it;
// - three recorded multi-player games (beginner by 2 players, expert by 3,
//   100×100 with 2,000 mines by 4), played to the end with the real engine
//   (reveals that flood, flags, chords): bytes as live pushes (each player's
//   own ops over its link to the game's creator, or the creator's to the
//   second player, up since before the game, unsigned, the chain heads signed when the
//   player pauses for SyncSession.headPause by the recorded clock, every
//   32 ops and at the game's end, as the daemon sends them), as one signed
//   op per message (the form before live pushes, and still sent to peers
//   before version 8) and as the creator's daemon catches up a device of
//   the circle that holds the genesis (chain segments in the link's compact
//   form, and in an ops message as before version 15), and the CPU time to
//   decode, rebuild or verify and apply every message on a fresh replica
//   (best of 3);
// - a scale table: catch-up CPU time and heap bytes held by the replica for
//   real games on 16×16, 100×100 and 500×500 boards cut at 50, 1,000,
//   10,000 and 100,000 ops, where a whole game on that board is that long
//   (and each whole game, for people): as the daemon holds it, its ops in a
//   SQLite store and the older ones let go of, and with every op in memory;
//   then asleep, and the wall time to wake it from the store;
// - the size of a flood over a nearly empty 500×500 board.
//
// With --trace, writes the recorded games' actions (the cells each changed,
// per player) and our byte counts as JSON, for the Yjs side.

import SweeperCrypto
import SweeperGame
import SweeperSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: Arguments

var tracePath: String?
/// With `--profile-catch-up N`: only the 10,000-op catch-up, N times, for a profiler.
var profileCatchUp: Int?
var profileWake: Int?
var arguments = CommandLine.arguments.dropFirst()
while let a = arguments.popFirst() {
    switch a {
    case "--trace": tracePath = arguments.popFirst()
    case "--profile-catch-up": profileCatchUp = arguments.popFirst().flatMap { Int($0) }
    case "--profile-wake": profileWake = arguments.popFirst().flatMap { Int($0) }
    case "--write-store":
        guard let directory = arguments.popFirst(), let games = arguments.popFirst().flatMap({ Int($0) }),
            let ops = arguments.popFirst().flatMap({ Int($0) }), games > 0, ops > 0
        else { fail("--write-store takes a directory, a number of games and of ops (both 1 or more)") }
        writeStore(directory: directory, games: games, ops: ops)
        exit(0)
    default: fail("unknown argument \(a); usage: sweeper-bench-sync [--trace PATH] [--profile-catch-up N] [--profile-wake N] [--write-store DIR GAMES OPS]")
    }
}

if let rounds = profileCatchUp {
    let (replica, _, ops) = longGame(count: 10_000)
    let catchUp = linkCatchUp(from: replica, creator: ops[0].author, device: bystander.identity.peerID, holding: [])
    let t0 = cpuSeconds()
    for _ in 0..<rounds {
        var fresh = Replica(circle: circle)
        applyLinkCatchUp(catchUp.messages, session: catchUp.session, into: &fresh)
    }
    print("catch-up: \(format((cpuSeconds() - t0) * 1000 / Double(max(1, rounds)))) ms a round, \(rounds) rounds")
    exit(0)
}

if let rounds = profileWake {
    guard let parameters = try? GameParameters(width: 500, height: 500, mines: 50_000) else { fail("500×500") }
    let recorder = Recorder(parameters, seed: 500_500, authors: Array(players[0..<3]), recordTrace: false)
    recorder.play(upTo: 100_000)
    let stored = storedReplicaBytes(catchUpMessage(recorder.ops[...]), game: recorder.gameID, wakes: rounds)
    print(
        "wake of \(recorder.ops.count) ops: \(format(stored.wakeMs)) ms from a frozen board of \(stored.boardBytes) bytes, \(format(stored.replayMs)) ms replayed (medians of \(rounds))"
    )
    exit(0)
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
print(
    "apply: \(stored.count) ops, each decoded, signature-verified and applied one by one: \(Int(Double(stored.count) / applyBest)) ops/s (best of 3: \(format(applyBest * 1000)) ms)"
)
result("sync.apply_rate_ops_per_s", Int(Double(stored.count) / applyBest))

// MARK: Catch-up

// As a link of protocol 15 carries it to a device that holds nothing of the game.
let longCatchUp = linkCatchUp(from: longReplica, creator: longOps[0].author, device: bystander.identity.peerID, holding: [])
let longBytes = longCatchUp.messages.map(\.count).reduce(0, +)
var catchUpTimes: [Double] = []
for _ in 0..<5 {
    var fresh = Replica(circle: circle)
    let t0 = cpuSeconds()
    applyLinkCatchUp(longCatchUp.messages, session: longCatchUp.session, into: &fresh)
    catchUpTimes.append(cpuSeconds() - t0)
    guard fresh.state(of: longID)?.digest == longReplica.state(of: longID)?.digest,
        fresh.games[longID]?.opCount == longOps.count
    else { fail("catch-up: replica differs") }
}
print(
    "catch-up: \(longOps.count)-op game (3 authors, 100×100, random reveals and mark changes) in \(longCatchUp.messages.count) chains message(s) of \(longBytes) bytes, as a link of version 15 carries it: decoded, rebuilt, hash chains + 3 signatures checked, applied in \(format(median(catchUpTimes) * 1000)) ms CPU (median of 5; goal < 20 ms)"
)
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
    let huge = try? GameParameters(width: 100, height: 100, mines: 2000)
else { fail("parameters") }
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
    let live = livePushes(genesis: genesis, actions: actions, authors: Array(players[0..<spec.players]))
    let liveBytes = live.messages.map(\.bytes.count).reduce(0, +)
    let storedBytes = actions.map(\.encoded.count).reduce(0, +)
    // The actions only: every author's chain after the genesis (the creator's seq 1).
    let afterGenesis = VersionVector(heads: [players[0].identity.peerID: 1])
    let segmentMessage = SyncMessage.ops(replica.segments(for: gameID, after: afterGenesis)).encoded
    // As a link of protocol 15 carries it, to a device that is not among the players.
    let catchUp = linkCatchUp(from: replica, creator: genesis.author, device: bystander.identity.peerID, holding: [genesis])
    guard catchUp.messages.allSatisfy({ $0.count > 1 && $0[1] == 8 }) else { fail("\(spec.key): catch-up not in the compact form") }
    let chainBytes = catchUp.messages.map(\.count).reduce(0, +)
    // Every op signed, chained: the same segments with each op's own signature alongside (64 bytes each).
    let allSignedChainBytes = segmentMessage.count + 64 * max(0, actions.count - spec.players)
    let reveals = actions.filter { $0.payload.kind == .reveal || $0.payload.kind == .flood }.count
    let marks = actions.filter { $0.payload.kind == .mark }.count

    // Apply: a fresh replica that holds the genesis (the board, which Yjs has
    // no counterpart of) decodes, verifies and applies every push in order.
    func fresh() -> Replica {
        var r = Replica(circle: circle)
        r.insert(genesis)
        return r
    }
    var pushTimes: [Double] = []
    var liveTimes: [Double] = []
    var chainTimes: [Double] = []
    for _ in 0..<3 {
        var l = fresh()
        var sessions = live.receivers
        let tl = cpuSeconds()
        for m in live.messages {
            guard let message = try? SyncMessage(decoding: m.bytes), var session = sessions.removeValue(forKey: m.author) else { fail("live decode") }
            let step = session.receive(message, replica: &l)
            sessions[m.author] = session
            if step.violation != nil || !step.outcome.rejected.isEmpty { fail("\(spec.key): live push refused") }
        }
        liveTimes.append(cpuSeconds() - tl)
        guard l.state(of: gameID)?.digest == state.digest, l.games[gameID]?.unsignedHeads.isEmpty == true else {
            fail("\(spec.key): live pushes gave another state, or left ops unsigned")
        }
        var r = fresh()
        let t0 = cpuSeconds()
        for message in pushes { applyCatchUp(message, into: &r) }
        pushTimes.append(cpuSeconds() - t0)
        guard r.state(of: gameID)?.digest == state.digest else { fail("\(spec.key): pushes gave another state") }
        var c = fresh()
        let t1 = cpuSeconds()
        applyLinkCatchUp(catchUp.messages, session: catchUp.session, into: &c)
        chainTimes.append(cpuSeconds() - t1)
        guard c.state(of: gameID)?.digest == state.digest else { fail("\(spec.key): segments gave another state") }
    }
    let pushApply = pushTimes.min() ?? 0
    let liveApply = liveTimes.min() ?? 0
    let chainApply = chainTimes.min() ?? 0
    let changes = trace.map(\.changes.count).reduce(0, +)
    print("\(spec.key): \(spec.title): \(actions.count) actions (\(reveals) reveals and chords, \(marks) flags), \(state.status), \(changes) cell changes")
    print("  genesis (layout included) as sent: \(push(genesis).count) bytes (not in the totals below; Yjs has no board either)")
    print(
        "  ours, live pushes: \(liveBytes) bytes (\(format(Double(liveBytes) / Double(max(1, actions.count)))) per action), in \(live.messages.count) messages, with \(live.inlineHeads) heads signed in a push and \(live.pausedHeads) in heads messages after a pause of \(SyncSession.headPause) or the game's end"
    )
    print(
        "  ours, pushed one op per message, each signed (before live pushes): \(pushBytes) bytes (\(format(Double(pushBytes) / Double(max(1, actions.count)))) per action)"
    )
    print("  ours, stored one op per record, each signed: \(storedBytes) bytes")
    print(
        "  ours, catch-up as a link of version 15 carries it (chain segments in the link's compact form, one signature per author) from the creator to a device that holds the genesis: \(chainBytes) bytes, after the two first summaries (\(catchUp.summaryBytes) bytes)"
    )
    print("  ours, as chain segments in an ops message (before version 15): \(segmentMessage.count) bytes")
    print("  ours, as chain segments with every op's signature kept: \(allSignedChainBytes) bytes")
    print(
        "  ours, apply: every live push and heads message decoded, rebuilt, applied and its heads verified on a fresh replica: \(format(liveApply * 1000, 2)) ms CPU (\(format(liveApply * 1e6 / Double(max(1, actions.count)), 1)) µs a move; best of 3); every signed push decoded, verified and applied: \(format(pushApply * 1000, 2)) ms (\(format(pushApply * 1e6 / Double(max(1, actions.count)), 1)) µs a move); as one catch-up message: \(format(chainApply * 1000, 2)) ms"
    )
    result("sync.\(spec.key).ops", recorder.ops.count)
    result("sync.\(spec.key).actions", actions.count)
    result("sync.\(spec.key).ours_live_bytes", liveBytes)
    result("sync.\(spec.key).ours_live_heads", live.inlineHeads + live.pausedHeads)
    result("sync.\(spec.key).ours_live_apply_ms", liveApply * 1000)
    result("sync.\(spec.key).ours_push_bytes", pushBytes)
    result("sync.\(spec.key).ours_chain_bytes", chainBytes)
    result("sync.\(spec.key).ours_segments_bytes", segmentMessage.count)
    result("sync.\(spec.key).summary_bytes", catchUp.summaryBytes)
    result("sync.\(spec.key).ours_apply_ms", pushApply * 1000)

    traceJSON += "{\"key\": \"\(spec.key)\", \"title\": \"\(spec.title)\", \"players\": \(spec.players),\n"
    traceJSON +=
        "\"ours\": {\"live\": \(liveBytes), \"push\": \(pushBytes), \"stored\": \(storedBytes), \"chain\": \(chainBytes), \"chain_all_signed\": \(allSignedChainBytes), \"apply_ms\": \(decimal(pushApply * 1000))},\n"
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
print(
    "  memory = heap bytes in use (glibc malloc_info: arenas minus free chunks, plus mmapped chunks) after minus before building that replica (decoded message freed, replica alive),"
)
print("  as the daemon holds it (ops written to a SQLite store, older ones let go of: with the replica minus after it is freed), and with every op in memory")
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
        let (ms, allHeld, stored) = measureCatchUp(message, game: recorder.gameID, ops: count)
        print(
            "    \(count) ops: message \(message.count) bytes; catch-up \(format(ms, 2)) ms; replica holds \(stored.bytes) bytes (\(stored.bytes / count) per op), \(allHeld) with every op in memory; asleep \(stored.asleepBytes) bytes, woken in \(format(stored.wakeMs, 2)) ms (\(format(stored.replayMs, 2)) ms replayed; frozen board \(stored.boardBytes) bytes)"
        )
        result("scale.\(w)x\(h).\(count).catchup_ms", ms)
        result("scale.\(w)x\(h).\(count).memory_bytes", stored.bytes)
        result("scale.\(w)x\(h).\(count).all_held_bytes", allHeld)
        result("scale.\(w)x\(h).\(count).asleep_bytes", stored.asleepBytes)
        result("scale.\(w)x\(h).\(count).wake_ms", stored.wakeMs)
        result("scale.\(w)x\(h).\(count).replay_ms", stored.replayMs)
        result("scale.\(w)x\(h).\(count).board_bytes", stored.boardBytes)
    }
    if recorder.isOver {
        let message = catchUpMessage(ops[...])
        let (ms, _, stored) = measureCatchUp(message, game: recorder.gameID, ops: ops.count)
        print("    the whole game, \(ops.count) ops: message \(message.count) bytes; catch-up \(format(ms, 2)) ms; replica holds \(stored.bytes) bytes")
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
    let genesisSize = game.genesisOp.map { $0.encoded.count } ?? 0
    guard let op = try? players[2].reveal(cells: cells, in: game, atMillis: startMillis + 1000) else { fail("flood op") }
    let push = SyncMessage.ops([OpSegment(verifiedOps: [op])].compactMap { $0 }).encoded.count
    print(
        "flood on 500×500 with \(mines) mines: \(cells.count) cells in \(runs.runs.count) runs: op \(op.encoded.count) bytes signed, \(push) bytes as a push message (goal < 2,048); genesis with layout \(genesisSize) bytes"
    )
}

// MARK: The largest flood of a 500×500 board with 10% mines

do {
    guard let parameters = try? GameParameters(width: 500, height: 500, mines: 25_000) else { fail("500×500 10%") }
    let recorder = Recorder(parameters, seed: 31, authors: [players[1], players[2]], recordTrace: false)
    guard let game = recorder.replica.games[recorder.gameID], let floodState = game.state else { fail("flood game") }
    // The covered cell with no adjacent mine whose reveal opens the most cells.
    let layout = floodState.genesis.layout
    var best = (cell: -1, count: 0)
    var seen = [Bool](repeating: false, count: layout.geometry.cellCount)
    for c in 0..<layout.geometry.cellCount where !seen[c] && !floodState.board.isRevealed(c) && !layout.isMine(c) && layout.adjacentMines(c) == 0 {
        let region = floodState.board.cellsUncovered(by: c)
        for r in region { seen[r] = true }
        if region.count > best.count { best = (c, region.count) }
    }
    guard best.cell >= 0, let op = try? players[2].reveal(best.cell, in: game, atMillis: startMillis + 1000),
        let runsOp = try? players[2].reveal(cells: floodState.board.cellsUncovered(by: best.cell), in: game, atMillis: startMillis + 1000)
    else { fail("flood op") }
    guard case .flood(let flood) = op.payload else { fail("the reveal is not a flood op") }
    let payloadBytes = op.payload.encoded.count
    let signedPush = SyncMessage.ops([OpSegment(verifiedOps: [op])].compactMap { $0 }).encoded.count
    let runsPush = SyncMessage.ops([OpSegment(verifiedOps: [runsOp])].compactMap { $0 }).encoded.count
    print(
        "largest flood on 500×500 with 25,000 mines (10%): \(best.count) cells; as a flood op (the cell and \(flood.exceptions.count) exceptions): payload \(payloadBytes) bytes, op \(op.encoded.count) bytes signed, \(signedPush) bytes as a signed push (goal: op under 200 bytes); as cell runs (before flood ops): op \(runsOp.encoded.count) bytes, \(runsPush) bytes as a push"
    )
    result("sync.flood10.cells", best.count)
    result("sync.flood10.op_bytes", op.encoded.count)
    result("sync.flood10.push_bytes", signedPush)
    result("sync.flood10.runs_push_bytes", runsPush)
}

// MARK: Trace for the Yjs comparison

if let tracePath {
    guard let f = fopen(tracePath, "w") else { fail("cannot write \(tracePath)") }
    fputs(traceJSON, f)
    fclose(f)
}
