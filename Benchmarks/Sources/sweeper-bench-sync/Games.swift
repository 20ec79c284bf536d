// The games the sync benchmark measures: real multi-player games played to
// the end with the engine, a long game of random moves, and catch-up
// messages made of them.

import FoundationEssentials
import SweeperCrypto
import SweeperDaemon
import SweeperGame
import SweeperStore
import SweeperSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let circle = CircleKey()
let players = (0..<4).map { _ in OpAuthor(identity: SigningIdentity(), circle: circle) }
/// A device of the circle that plays in none of the recorded games: it catches up on them.
let bystander = OpAuthor(identity: SigningIdentity(), circle: circle)
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
        let parameters =
            (try? GameParameters(
                width: parameters.width, height: parameters.height, mines: parameters.mines,
                start: parameters.geometry.cell(at: board.start), noGuess: parameters.noGuess)) ?? parameters
        let genesis: Op
        do {
            genesis = try authors[0].genesis(
                parameters: parameters, layout: board.layout, seed: seed, questionMarks: false,
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
            op =
                checkWithEngine
                ? try? author.chord(c, in: game, atMillis: clock)
                : try? author.reveal(cells: cells, in: game, atMillis: clock)
        case .reveal(let c):
            op =
                checkWithEngine
                ? try? author.reveal(c, in: game, atMillis: clock)
                : try? author.reveal(cells: cells, in: game, atMillis: clock)
        }
        if checkWithEngine, let op {
            var opened: [Int] = []
            switch op.payload {
            case .reveal(let runs): opened = Array(runs)
            case .flood(let flood): opened = flood.cells(in: layout).filter { !revealed[$0] }
            default: break
            }
            if !opened.isEmpty && opened != cells { fail("the engine's move differs from the player's: \(move)") }
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
/// and flag changes (the 10,000-op catch-up figure).
@MainActor func longGame(count: Int) -> (Replica, GameID, [Op]) {
    guard let parameters = try? GameParameters(width: 100, height: 100, mines: 1500),
        let board = try? Generator.generate(parameters, seed: 5),
        let start = try? GameParameters(width: 100, height: 100, mines: 1500, start: parameters.geometry.cell(at: board.start)),
        let genesis = try? players[0].genesis(
            parameters: start, layout: board.layout, seed: 5, questionMarks: false,
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

/// A catch-up as a link of protocol 15 carries it: a device that holds
/// `held` of a game (its genesis, or nothing) links to the daemon of its
/// creator, which holds the whole game (`replica`); each sends its first
/// summary, and the creator's answers the device's. Returns that answer
/// (chains messages: each author's ops after what the device holds, one
/// signature per author), the device's session as it stands to read it,
/// and the bytes of the two summaries before it.
@MainActor func linkCatchUp(from replica: Replica, creator: PeerID, device: PeerID, holding held: [Op])
    -> (messages: [[UInt8]], session: SyncSession, summaryBytes: Int)
{
    var creatorSide = SyncSession(), deviceSide = SyncSession()
    creatorSide.liveAuthor = creator
    creatorSide.peer = device
    creatorSide.peerTakesChains = true
    deviceSide.liveAuthor = device
    deviceSide.peer = creator
    deviceSide.peerTakesChains = true
    var creatorReplica = replica
    var deviceReplica = Replica(circle: circle)
    for op in held where deviceReplica.insert(op).accepted.count != 1 { fail("held op refused") }
    let creatorSummary = creatorSide.start(replica: creatorReplica)
    let deviceSummary = deviceSide.start(replica: deviceReplica)
    for m in creatorSummary { _ = deviceSide.receive(m, replica: &deviceReplica) }
    var answer: [[UInt8]] = []
    for m in deviceSummary {
        for reply in creatorSide.receive(m, replica: &creatorReplica).replies {
            switch reply {
            case .chains, .ops: answer.append(reply.encoded)
            default: break
            }
        }
    }
    let summaryBytes = (creatorSummary + deviceSummary).map(\.encoded.count).reduce(0, +)
    return (answer, deviceSide, summaryBytes)
}

/// Takes a catch-up made by ``linkCatchUp(from:creator:device:holding:)``
/// into `replica` (which holds what the device held) through a copy of
/// the device's session, as the device's daemon takes it.
func applyLinkCatchUp(_ messages: [[UInt8]], session: SyncSession, into replica: inout Replica) {
    var session = session
    for m in messages {
        guard let message = try? SyncMessage(decoding: m) else { fail("catch-up decode") }
        let step = session.receive(message, replica: &replica)
        if step.violation != nil || !step.outcome.rejected.isEmpty { fail("catch-up refused") }
    }
}

/// Decodes `message` and inserts its segments into `replica`.
func applyCatchUp(_ message: [UInt8], into replica: inout Replica) {
    guard case .ops(let segments) = try? SyncMessage(decoding: message) else { fail("catch-up decode") }
    for s in segments { replica.insert(s) }
}

/// Catch-up CPU time of `message` into a fresh replica (ms, median of 3) and
/// the heap bytes the resulting replica holds with every op in memory
/// (measured on a fourth, untimed catch-up: in use after minus before, the
/// decoded message freed), and as the daemon holds it (`stored`).
@MainActor func measureCatchUp(_ message: [UInt8], game: GameID, ops count: Int) -> (ms: Double, allHeld: Int, stored: StoredReplica) {
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
    return (median(times) * 1000, bytes, storedReplicaBytes(message, game: game))
}

/// A game as the daemon holds it: its heap bytes awake and asleep, and
/// the time to wake it from the store.
struct StoredReplica {
    /// Heap bytes with the game awake, its older ops let go of.
    var bytes: Int
    /// Heap bytes with the game asleep (see `Replica.sleep`).
    var asleepBytes: Int
    /// Milliseconds to wake it as the daemon does (its frozen board and each
    /// chain's newest ops read back from SQLite, when it is long enough
    /// to have a board), wall clock, median of the wakes asked for (3 in
    /// the report).
    var wakeMs: Double
    /// The same wake without a frozen board: every op read back and replayed.
    var replayMs: Double
    /// The frozen board's bytes (0 when the game is too short for one).
    var boardBytes: Int
}

/// Wall-clock seconds.
func wallSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// The heap bytes a daemon's replica of the game in `message` holds: its
/// ops written to a SQLite store as the daemon writes them, the replica
/// told so, and its older ops let go of (read back from the store when
/// asked for); then asleep, and the time to wake it. Measured as heap in
/// use with the replica minus after it is freed, the store still open:
/// SQLite's page cache, which every game shares, is not counted.
@MainActor func storedReplicaBytes(_ message: [UInt8], game: GameID, wakes rounds: Int = 3) -> StoredReplica {
    let directory = "/tmp/sweeper-bench-store-\(getpid())-\(game.description.prefix(8))"
    defer { _ = try? FileManager.default.removeItem(atPath: directory) }
    guard let store = try? Store(directory: directory) else { fail("bench store") }
    defer { store.close() }
    let archive = StoredOps(store: store)
    // The game as the daemon holds it after its write: built in a function
    // of its own, so that nothing else keeps its ops (or its layout) alive.
    func stored(writing: Bool) -> Replica {
        var held = Replica(circle: circle, archive: archive)
        applyCatchUp(message, into: &held)
        guard let ops = try? held.games[game]?.allOps() else { fail("bench store read") }
        if writing, (try? store.append(ops.map { StoredOps.row($0) }, durability: .deferred)) == nil { fail("bench store write") }
        held.noteStored(ops)
        return held
    }
    var held = stored(writing: true)
    let with = heapInUse()
    held = Replica(circle: circle)
    let bytes = with - heapInUse()
    // Asleep, measured before any wake reads the store.
    held = stored(writing: false)
    guard held.sleep(game) else { fail("the stored game did not sleep") }
    let sleeping = heapInUse()
    held = Replica(circle: circle)
    let asleepBytes = sleeping - heapInUse()
    held = stored(writing: false)
    let count = held.games[game]?.opCount
    let digest = held.state(of: game)?.digest
    // As the daemon puts a game to sleep: its snapshot written, with its frozen board when it is long.
    let board = held.games[game]?.frozenBoard()
    guard let form = held.sleepingForm(of: game) else { fail("the stored game may not sleep") }
    func keep(board: [UInt8]?) {
        let row = StoredSnapshot(
            gameID: game.description, circle: Data(circle.tag.utf8), readers: Data(), opCount: form.opCount, bytes: Data(form.snapshot),
            board: board.map { Data($0) })
        guard (try? store.saveSnapshots([row])) == 1 else { fail("the snapshot was not kept") }
    }
    keep(board: board)
    func wakes() -> Double {
        var times: [Double] = []
        for _ in 0..<rounds {
            guard held.sleep(game) else { fail("the stored game did not sleep") }
            let t = wallSeconds()
            guard held.wake(game), held.games[game]?.opCount == count, held.state(of: game)?.digest == digest else {
                fail("the game did not wake whole")
            }
            times.append(wallSeconds() - t)
        }
        return median(times) * 1000
    }
    let wakeMs = wakes()
    keep(board: nil)
    let replayMs = wakes()
    return StoredReplica(bytes: bytes, asleepBytes: asleepBytes, wakeMs: wakeMs, replayMs: replayMs, boardBytes: board?.count ?? 0)
}

/// One message of the live form, as a player's daemon sends it to a peer.
struct LiveMessage {
    let author: PeerID
    let bytes: [UInt8]
}

/// The two ends of a link between `author` and `peer` that came up before
/// the game began (each sent the other its summary, which lists no game),
/// after the creator's genesis went over it live, naming the game.
@MainActor func linkedBeforeTheGame(genesis: Op, author: PeerID, peer: PeerID) -> (authorSide: SyncSession, peerSide: SyncSession) {
    var sides = [SyncSession(), SyncSession()]
    var replicas = [Replica(circle: circle), Replica(circle: circle)]
    for (i, (me, other)) in [(author, peer), (peer, author)].enumerated() {
        sides[i].liveAuthor = me
        sides[i].peer = other
    }
    for i in 0..<2 {
        for m in sides[i].start(replica: replicas[i]) { _ = sides[1 - i].receive(m, replica: &replicas[1 - i]) }
    }
    let creator = genesis.author == author ? 0 : 1
    guard replicas[creator].insert(genesis).accepted.count == 1 else { fail("genesis refused") }
    for m in sides[creator].push([genesis], replica: replicas[creator]) {
        let step = sides[1 - creator].receive(m, replica: &replicas[1 - creator])
        guard step.violation == nil, step.outcome.accepted.count == 1 else { fail("live genesis refused") }
    }
    return (sides[0], sides[1])
}

/// The peer each player's daemon pushes to in the recorded games: the
/// game's creator, and the creator's the second player.
func recordedPeer(of author: PeerID, among authors: [OpAuthor], creator: PeerID) -> PeerID {
    author == creator ? authors[1].identity.peerID : creator
}

/// A recorded game's moves as each player's daemon pushes them to one peer
/// (``recordedPeer(of:among:creator:)``, linked before the game began) that
/// holds every other player's moves: its own ops live, unsigned, each when
/// made; the heads signed in a push every ``SyncSession/headInterval`` ops
/// and with the op that ends the game, and in a heads message when the
/// player pauses (its next move is ``SyncSession/headPause`` or more after
/// the one before, by the recorded clock) and after its last move. Returns
/// too the peers' ends of the links, to take the messages.
@MainActor func livePushes(genesis: Op, actions: [Op], authors: [OpAuthor])
    -> (messages: [LiveMessage], inlineHeads: Int, pausedHeads: Int, receivers: [PeerID: SyncSession])
{
    var world = Replica(circle: circle)
    world.insert(genesis)
    var sessions: [PeerID: SyncSession] = [:]
    var receivers: [PeerID: SyncSession] = [:]
    for a in authors {
        let me = a.identity.peerID
        let link = linkedBeforeTheGame(genesis: genesis, author: me, peer: recordedPeer(of: me, among: authors, creator: genesis.author))
        sessions[me] = link.authorSide
        receivers[me] = link.peerSide
    }
    let pause = UInt64(SyncSession.headPause.components.seconds) * 1000
    var lastMove: [PeerID: UInt64] = [:]
    var messages: [LiveMessage] = []
    var inline = 0
    var paused = 0
    func heads(_ author: PeerID) {
        guard var session = sessions.removeValue(forKey: author) else { return }
        for m in session.signHeads(replica: world) {
            if case .heads(let h) = m { paused += h.count }
            messages.append(LiveMessage(author: author, bytes: m.encoded))
        }
        sessions[author] = session
    }
    for op in actions {
        let author = op.author
        if let last = lastMove[author], op.wallClockMillis - last >= pause { heads(author) }
        guard world.insert(op).accepted.count == 1, var session = sessions.removeValue(forKey: author) else { fail("live: op refused") }
        for m in session.push([op], replica: world) {
            if case .live(let ops) = m { inline += ops.filter { $0.signature != nil }.count }
            messages.append(LiveMessage(author: author, bytes: m.encoded))
        }
        sessions[author] = session
        lastMove[author] = op.wallClockMillis
    }
    for a in authors { heads(a.identity.peerID) }
    return (messages, inline, paused, receivers)
}
