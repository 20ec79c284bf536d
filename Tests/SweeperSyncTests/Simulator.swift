import Foundation
import SweeperCrypto
import SweeperGame
import Synchronization

@testable import SweeperSync

/// A deterministic simulated network of daemons running the real
/// ``SyncSession`` and ``Replica`` code. Everything random comes from one
/// seed, so a failing seed replays exactly.
///
/// Peers are joined by a connected random graph (a ring plus chords); each
/// link carries encoded ``SyncMessage`` bytes through a queue that loses,
/// duplicates, delays and so reorders them; partitions cut the graph into
/// groups for a while and heal; peers restart from their stored ops; a few
/// players make moves concurrently; forgers inject bad ops. On two thirds
/// of the seeds (half of them private games) the creator chooses the players: one of the movers starts as a
/// spectator and is added halfway, a member outside the list forges moves,
/// and players archive and restore the game.
///
/// Links between peers speak the live form (own ops pushed unsigned, chain
/// heads signed now and then) except on a quarter of them, which send
/// signed segments only. A link is a stream, as TCP is: what the live form
/// carries is never lost, duplicated or reordered within a link's life;
/// where the network would lose it (loss, a partition) the link breaks
/// instead, and comes back with fresh sessions on both ends, as the
/// daemon's links do. On such links the summaries travel in the stream too
/// (the live form names games by their places in the first): in order,
/// never duplicated, and lost only with the link.
struct Simulation {
    struct Config {
        var peers = 16
        var players = 4
        var activeTicks = 40
        var moveChance = 4  // in 10, per tick, that some player moves
        var lossPercent = 10
        var duplicatePercent = 5
        var maxDelay = 6
        var tickEvery = 8  // anti-entropy summary period, in ticks
        var forgeries = 5
        var partitionPercent = 5  // per tick, chance a partition starts
        var restartPercent = 4  // per tick, chance a peer restarts
        /// Each chain's newest ops a replica keeps in memory; the rest it
        /// reads back from its disk (few, so that games of a few dozen
        /// moves already do).
        var recentOpsKept = 2
        /// Every this many ticks, one peer (each in turn) puts to sleep
        /// every game that may sleep, as the daemon does with games nobody
        /// uses; what comes for the game next wakes it. 0: never.
        var sleepEvery = 3
        /// Of the moves pushed before they are kept (to peers of protocol
        /// 18), the share whose author stops before its commit: the move
        /// is gone with it, and the peers that took it must let it go.
        var lostBeforeKeptPercent = 20
    }

    struct Peer {
        let author: OpAuthor
        var replica: Replica
        var sessions: [Int: SyncSession] = [:]
        /// What the store holds: each op, and whether it was kept without a
        /// signature as its author's link brought it (see `Replica.insert(vouched:)`).
        /// The replica reads back from it the ops it let go of.
        let disk: SimulatedDisk
    }

    /// A peer's store: each op by game, author and seq, and whether it was
    /// kept vouched only; the replica's archive, as the daemon's store is.
    final class SimulatedDisk: OpArchive {
        private let rows = Mutex<[String: (op: Op, vouched: Bool)]>([:])
        private let readBack = Mutex(0)

        /// How many ops the replica read back from here.
        var opsReadBack: Int { readBack.withLock { $0 } }

        subscript(key: String) -> (op: Op, vouched: Bool)? {
            get { rows.withLock { $0[key] } }
            set { rows.withLock { $0[key] = newValue } }
        }

        var values: [(op: Op, vouched: Bool)] { rows.withLock { Array($0.values) } }

        func removeAll() { rows.withLock { $0 = [:] } }

        private let boards = Mutex<[GameID: [UInt8]]>([:])

        /// Keeps `board` as `game`'s frozen board (`nil` drops it), as the
        /// daemon's store keeps it beside a snapshot.
        func keepBoard(_ board: [UInt8]?, of game: GameID) { boards.withLock { $0[game] = board } }

        func frozenBoard(of game: GameID, circle: CircleKey) -> [UInt8]? { boards.withLock { $0[game] } }

        func ops(of game: GameID, by author: PeerID, seqs: ClosedRange<UInt64>) throws -> [Op] {
            readBack.withLock { $0 += seqs.count }
            return try seqs.map { seq in
                guard let row = self["\(game) \(author) \(seq)"] else { throw OpArchiveMiss(game: game, author: author, seqs: seq...seq) }
                // From the bytes, as a store reads them.
                return try Op(decoding: row.op.encoded)
            }
        }
    }

    struct Envelope {
        let deliverAt: Int
        let order: Int
        let from: Int
        let to: Int
        let bytes: [UInt8]
        /// The life of the link it was sent on: a message of a broken link's earlier life is dropped.
        let epoch: Int
        /// Whether it is of the live form (which a link never loses).
        let live: Bool
        /// For a forged head signature: whether it must break its link. It
        /// counts as forged when delivered (a link broken first loses it).
        var forgedHead: Bool? = nil
    }

    let seed: UInt64
    let config: Config
    var rng: BoardRandom
    let circle: CircleKey
    var peers: [Peer] = []
    var links: Set<[Int]> = []
    var queue: [Envelope] = []
    var now = 0
    var sent = 0
    var group: [Int]? = nil
    var partitionEnds = 0
    var gameID: GameID?
    var validOps: [Op] = []
    var injected: [OpRejection: Int] = [:]
    /// Each link's life, counted up when it breaks and comes back.
    var epochs: [[Int]: Int] = [:]
    /// Per direction, when its last message of the live form is delivered (they keep their order).
    var liveDue: [[Int]: Int] = [:]
    /// Links that broke and come back once no partition cuts them.
    var broken: Set<[Int]> = []
    /// Violations (a head signature that is not its author's) forged, and the links they broke.
    var violationsForged = 0
    var violationsSeen = 0
    /// Ops sent as live pushes, and head signatures sent apart from them.
    var liveOps = 0
    var headSignatures = 0
    var chainSegments = 0
    var rejected: [OpRejection: Int] = [:]
    var restarts = 0
    var sleeps = 0
    var wakes = 0
    var partitions = 0
    var forgerCount: UInt64 = 0
    /// Set while healing: nothing is lost, duplicated or delayed.
    var lossless = false
    /// Whether the creator chose the players (two thirds of the seeds).
    var restricted: Bool { seed % 3 != 0 }
    /// Whether the game is private besides (a third of the seeds): the
    /// members who do not play relay it unread.
    var isPrivate: Bool { seed % 3 == 2 }
    /// Whether the creator and peers 1 and 2 race instead, each on a board
    /// of its own (a ninth of the seeds, among those whose players are
    /// chosen and open): nobody joins a race, so peer 3 only ever watches.
    var isRace: Bool { seed % 9 == 4 }
    /// Whether the game is its creator's board of the day (a ninth of the
    /// seeds, among the open games): its daily op follows the genesis, as
    /// the daemon makes it, and only the creator moves.
    var isDaily: Bool { seed % 9 == 3 }
    /// Valid ops refused as `notPlayer` where the creator's op adding their
    /// author had not arrived yet (anti-entropy brings them again).
    var refusedBeforeTheirAdd = 0
    /// The (author, seq) of every valid op.
    var validKeys: Set<String> = []
    /// Per peer, the move it pushed and is keeping (its commit under way:
    /// its loop takes nothing else until it is done or the peer stops).
    var keeping: [Int: Keeping] = [:]
    /// Moves lost with their authors before their commit, and ops held
    /// unsigned that gave way on the peers that had taken them.
    var lostBeforeKept = 0
    var gaveWay = 0
    /// Live pushes sent before their op was kept that carried a signature (never).
    var signedBeforeKept = 0
    /// The (author, seq) of every move lost before it was kept, and the true
    /// heads refused where a receiver held such a move.
    var lostKeys: [(author: PeerID, seq: UInt64)] = []
    var staleRefused = 0
    /// Peers that held a move when it was lost before it was kept.
    var lostButTaken = 0
    /// Forged heads of a peer's own chain that dropped the ops it held unsigned instead of breaking the link.
    var forgedHeadsGivenWay = 0

    init(seed: UInt64, config: Config = Config()) {
        self.seed = seed
        self.config = config
        rng = BoardRandom(seed: seed)
        circle = Fixtures.circle(seed)
        for i in 0..<config.peers {
            let author = OpAuthor(identity: Fixtures.identity(UInt64(i) + 1, salt: UInt8(truncatingIfNeeded: seed)), circle: circle)
            let disk = SimulatedDisk()
            peers.append(
                Peer(
                    author: author, replica: Replica(circle: circle, reader: author.identity, archive: disk, recentOpsKept: config.recentOpsKept), disk: disk))
        }
        // A ring plus random chords: connected, a few hops across.
        for i in 0..<config.peers { links.insert([i, (i + 1) % config.peers].sorted()) }
        for _ in 0..<(config.peers / 4) {
            let a = rng.below(config.peers)
            let b = rng.below(config.peers)
            if a != b { links.insert([a, b].sorted()) }
        }
        for link in links.sorted(by: { $0.lexicographicallyPrecedes($1) }) { connect(link[0], link[1]) }
    }

    func neighbours(of p: Int) -> [Int] { peers[p].sessions.keys.sorted() }

    /// Whether a link sends signed segments only (a peer before the live form).
    func isLegacy(_ a: Int, _ b: Int) -> Bool { (UInt64(a + b) &+ seed) % 4 == 0 }

    /// Whether a link of the live form carries segments in the compact form
    /// too (peers of protocol 15), or as ops messages (8 to 14).
    func takesChains(_ a: Int, _ b: Int) -> Bool { !isLegacy(a, b) && (UInt64(a * b) &+ seed) % 3 != 0 }

    /// Brings a link up (again): fresh sessions on both ends, each starting
    /// with its summary and asking for the signatures it lacks.
    mutating func connect(_ a: Int, _ b: Int) {
        let link = [a, b].sorted()
        epochs[link, default: 0] += 1
        broken.remove(link)
        for (x, y) in [(a, b), (b, a)] {
            var session = SyncSession()
            session.peer = peers[y].author.identity.peerID
            if !isLegacy(a, b) { session.liveAuthor = peers[x].author.identity.peerID }
            session.peerTakesChains = takesChains(a, b)
            session.provisional = isProvisional(a, b)
            var first = session.start(replica: peers[x].replica)
            if !isLegacy(a, b) { first += session.askForSignatures(replica: peers[x].replica) }
            peers[x].sessions[y] = session
            for m in first { send(m, from: x, to: y) }
        }
    }

    /// Breaks a link: what is in flight on it is lost, and it comes back
    /// with fresh sessions once no partition cuts it.
    mutating func breakLink(_ a: Int, _ b: Int) {
        let link = [a, b].sorted()
        epochs[link, default: 0] += 1
        broken.insert(link)
    }

    /// Brings back the broken links no partition cuts.
    mutating func reconnect() {
        for link in broken.sorted(by: { $0.lexicographicallyPrecedes($1) }) where !cut(link[0], link[1]) {
            connect(link[0], link[1])
        }
    }

    static func isLiveForm(_ message: SyncMessage) -> Bool {
        switch message {
        case .live, .heads, .unsigned: true
        case .summary, .summaryPart, .ops, .chains, .interest, .describe, .descriptions: false
        }
    }

    static func isSummary(_ message: SyncMessage) -> Bool {
        switch message {
        case .summary, .summaryPart: true
        default: false
        }
    }

    // MARK: Network

    func cut(_ a: Int, _ b: Int) -> Bool { group.map { $0[a] != $0[b] } ?? false }

    mutating func send(_ message: SyncMessage, from: Int, to: Int, forgedHead: Bool? = nil) {
        let link = [from, to].sorted()
        guard !broken.contains(link) else { return }
        // Summaries on a link of the live form travel in its stream too (the
        // live form names games by their places in the first): never lost
        // (a stream delivers them, late), and cut only with the link.
        let summaryInStream = !isLegacy(from, to) && Self.isSummary(message)
        let live = Self.isLiveForm(message) || summaryInStream
        // A chains message names games and authors by what came before it in
        // the stream, so it travels in order too; but its sender may drop it
        // (a catch-up, while the send buffer is full), and the link goes on.
        let chains = if case .chains = message { true } else { false }
        // A forgery is what its sender means to say: the network does not lose it.
        let reliable = lossless || forgedHead != nil
        let lost = !reliable && rng.below(100) < config.lossPercent
        if cut(from, to) || (lost && !summaryInStream) {
            // A stream does not lose a message and go on: the link breaks.
            if live { breakLink(from, to) }
            return
        }
        let copies = !live && !chains && !reliable && rng.below(100) < config.duplicatePercent ? 2 : 1
        switch message {
        case .live(let ops): liveOps += ops.count
        case .heads(let heads): headSignatures += heads.count
        case .chains(let segments): chainSegments += segments.count
        default: break
        }
        let bytes = message.encoded
        var at = now + 1 + (reliable ? 0 : rng.below(config.maxDelay))
        if live || chains {
            at = max(at, liveDue[[from, to]] ?? 0)
            liveDue[[from, to]] = at
        }
        for _ in 0..<copies {
            sent += 1
            queue.append(
                Envelope(
                    deliverAt: at, order: sent, from: from, to: to, bytes: bytes, epoch: epochs[link] ?? 0, live: live || chains,
                    forgedHead: forgedHead))
        }
    }

    mutating func deliverDue() {
        while true {
            let due = queue.indices.filter { queue[$0].deliverAt <= now }
            guard !due.isEmpty else { return }
            let batch = due.map { queue[$0] }.sorted { ($0.deliverAt, $0.order) < ($1.deliverAt, $1.order) }
            queue.removeAll { $0.deliverAt <= now }
            for e in batch where e.epoch == epochs[[e.from, e.to].sorted()] {
                if keeping[e.to] != nil {
                    // Its loop is in a commit: the message waits, in order.
                    queue.append(
                        Envelope(
                            deliverAt: now + 1, order: e.order, from: e.from, to: e.to, bytes: e.bytes, epoch: e.epoch, live: e.live,
                            forgedHead: e.forgedHead))
                    continue
                }
                if cut(e.from, e.to) {
                    // Lost on the way: a stream breaks instead.
                    if e.live { breakLink(e.from, e.to) }
                    continue
                }
                if let violation = e.forgedHead {
                    switch effect(of: e) {
                    case .nothing: break
                    case .givesWay: forgedHeadsGivenWay += 1
                    case .refused:
                        injected[.badSignature, default: 0] += 1
                        if violation { violationsForged += 1 }
                    }
                }
                deliver(e.bytes, from: e.from, to: e.to, forged: e.forgedHead != nil)
            }
        }
    }

    mutating func deliver(_ bytes: [UInt8], from: Int, to: Int, forged: Bool = false) {
        // Taken out and put back, so that the session is not copied.
        guard var session = peers[to].sessions.removeValue(forKey: from) else { return }
        defer { peers[to].sessions[from] = session }
        let message: SyncMessage
        do {
            message = try SyncMessage(decoding: bytes)
        } catch {
            peers[to].replica.countMalformed()
            rejected[.malformed, default: 0] += 1
            return
        }
        let wasAsleep = gameID.map { peers[to].replica.sleeping[$0] != nil } ?? false
        let step = session.receive(message, replica: &peers[to].replica)
        if wasAsleep, let gameID, peers[to].replica.games[gameID] != nil { wakes += 1 }
        // A valid op refused before its author's add came, and the valid ops
        // after it in its chain, which then cannot follow on (anti-entropy
        // brings them all again).
        let cutChains = Set(step.outcome.rejected.filter { $0.reason == .notPlayer && validKeys.contains("\($0.author) \($0.seq)") }.map(\.author))
        for r in step.outcome.rejected {
            if (r.reason == .notPlayer || r.reason == .brokenChain) && cutChains.contains(r.author) && validKeys.contains("\(r.author) \(r.seq)") {
                refusedBeforeTheirAdd += 1
            } else if r.reason == .notPlayer, !forged,
                lostKeys.contains(where: { $0.author == r.author && $0.seq == r.seq })
                    || keeping.values.contains(where: { $0.op.author == r.author && $0.op.seq == r.seq })
            {
                // A move pushed before it was kept (and kept later, or lost), refused before its author's add came, as a valid one is.
                refusedBeforeTheirAdd += 1
            } else if r.reason == .badSignature, !forged, lostKeys.contains(where: { $0.author == r.author && $0.seq <= r.seq }) {
                // A true head or segment, handed on by a third peer, of the
                // chain its author made on from a move it lost, which this
                // receiver holds (the compact form rebuilds it from that):
                // refused until the author's own word lets the lost one go.
                staleRefused += 1
            } else {
                rejected[r.reason, default: 0] += 1
                if ProcessInfo.processInfo.environment["SWEEPER_SIM_TRACE"] != nil { print("t\(now) \(from)->\(to): rejected \(r)") }
            }
        }
        gaveWay += step.outcome.replaced.count
        if trace {
            for op in step.outcome.replaced { print("t\(now) \(from)->\(to): gave way \(op.author) seq \(op.seq)") }
        }
        store(step.outcome, at: to)
        if let violation = step.violation {
            if ProcessInfo.processInfo.environment["SWEEPER_SIM_TRACE"] != nil { print("t\(now) \(from)->\(to): \(violation)") }
            // The daemon drops a peer that does what no honest peer does.
            violationsSeen += 1
            breakLink(from, to)
            return
        }
        var replies = step.replies
        // Ops that came live and unsigned, which a neighbour out of their
        // author's reach needs: half the time the receiver asks for their
        // signature at once (as the daemon does for a peer that is not
        // linked to the author), else it waits for the author's pause.
        let unsigned = step.outcome.accepted.filter {
            $0.signature == nil && peers[to].replica.games[$0.gameID]?.isUnsigned(author: $0.author, seq: $0.seq) == true
        }
        if let newest = unsigned.max(by: { $0.seq < $1.seq }), !isLegacy(from, to), rng.below(2) == 0 {
            replies.append(.unsigned([ChainHead(game: newest.gameID, author: newest.author, seq: newest.seq)]))
        }
        for m in replies { send(m, from: to, to: from) }
        relay(step.outcome.accepted + step.outcome.signed, at: to, except: from)
    }

    static func key(_ op: Op) -> String { "\(op.gameID) \(op.author) \(op.seq)" }

    /// Keeps what an insert accepted or signed on peer `p`'s disk, as the daemon's store does.
    mutating func store(_ outcome: InsertOutcome, at p: Int) {
        for op in outcome.replaced { peers[p].disk[Self.key(op)] = nil }
        for op in outcome.accepted {
            let vouched = op.signature == nil && peers[p].replica.games[op.gameID]?.isUnsigned(author: op.author, seq: op.seq) == true
            peers[p].disk[Self.key(op)] = (op, vouched)
        }
        for op in outcome.signed {
            peers[p].disk[Self.key(op)] = (op, false)
            for seq in stride(from: op.seq, to: 0, by: -1) {
                guard let held = peers[p].replica.games[op.gameID]?.op(author: op.author, seq: seq),
                    peers[p].disk[Self.key(held)]?.vouched == true
                else { break }
                peers[p].disk[Self.key(held)] = (held, false)
            }
        }
        peers[p].replica.noteStored(outcome.accepted + outcome.signed)
    }

    /// Hands newly accepted ops to every session of peer `p` (but `except`).
    mutating func relay(_ ops: [Op], at p: Int, except: Int?) {
        guard !ops.isEmpty else { return }
        for n in neighbours(of: p) where n != except {
            guard var session = peers[p].sessions.removeValue(forKey: n) else { continue }
            let out = session.push(ops, replica: peers[p].replica) + session.signDueHeads(replica: peers[p].replica)
            peers[p].sessions[n] = session
            for m in out { send(m, from: p, to: n) }
        }
    }

    mutating func antiEntropy() {
        reconnect()
        for p in peers.indices where keeping[p] == nil {
            for n in neighbours(of: p) {
                guard var session = peers[p].sessions.removeValue(forKey: n) else { continue }
                // A pause: the heads of the ops pushed live are signed, and signatures lacked are asked for.
                var out = session.tick(replica: peers[p].replica)
                if !isLegacy(p, n) { out += session.signHeads(replica: peers[p].replica) + session.askForSignatures(replica: peers[p].replica) }
                peers[p].sessions[n] = session
                for m in out { send(m, from: p, to: n) }
            }
        }
    }

    // MARK: Events

    mutating func createGame() throws {
        // Restricted: peers 1 and 2 play with the creator; peer 3 moves once added.
        let players: Set<PeerID>? = restricted ? Set(peers[1...2].map(\.author.identity.peerID)) : nil
        let op: Op
        if isPrivate, let players {
            let (p, l) = try Fixtures.layout(width: 8, height: 8, mines: 9, seed: seed)
            op = try peers[0].author.privateGenesis(
                parameters: p, layout: l, seed: seed, questionMarks: seed % 4 == 0, createdAtMillis: 1_790_000_000_000 + seed, players: players)
        } else {
            op = try Fixtures.genesis(
                by: peers[0].author, width: 8, height: 8, mines: 9, seed: seed, questionMarks: seed % 4 == 0, players: players, race: isRace)
        }
        gameID = op.gameID
        guard isDaily else {
            local(op, at: 0)
            return
        }
        // A board of the day: its daily op follows the genesis at once, and both go out together, as the daemon sends them.
        let outcome = peers[0].replica.insert(op)
        store(outcome, at: 0)
        noteValid(op)
        guard let game = peers[0].replica.games[op.gameID],
            let daily = try peers[0].author.daily(20_000 + Int(seed % 3), in: game, atMillis: 1_790_000_000_000 + seed)
        else { return }
        let next = peers[0].replica.insert(daily)
        store(next, at: 0)
        noteValid(daily)
        relay(outcome.accepted + next.accepted, at: 0, except: nil)
    }

    mutating func local(_ op: Op, at p: Int) {
        let outcome = peers[p].replica.insert(op)
        store(outcome, at: p)
        noteValid(op)
        relay(outcome.accepted, at: p, except: nil)
    }

    mutating func noteValid(_ op: Op) {
        validOps.append(op)
        validKeys.insert("\(op.author) \(op.seq)")
    }

    mutating func move() {
        guard let gameID else { return }
        let p = rng.below(config.players)
        guard keeping[p] == nil else { return }
        // A player's move wakes its game, as the daemon's engine does.
        if peers[p].replica.sleeping[gameID] != nil, peers[p].replica.wake(gameID) { wakes += 1 }
        // In a race, the mover's own board.
        guard let game = peers[p].replica.games[gameID], let whole = game.state else { return }
        let state = whole.shown(to: peers[p].author.identity.peerID)
        guard state.status == .playing else { return }
        let n = state.genesis.geometry.cellCount
        let covered = (0..<n).filter { !state.board.isRevealed($0) }
        guard !covered.isEmpty else { return }
        let author = peers[p].author
        let clock = 1_790_000_000_000 + UInt64(now) * 250
        var op: Op?
        switch rng.below(10) {
        case 0..<5:
            // Mostly safe guesses, sometimes a mine, as players make.
            let safe = covered.filter { !state.genesis.layout.isMine($0) && state.board.mark(at: $0) != .flag }
            let pool = rng.below(12) == 0 || safe.isEmpty ? covered : safe
            op = try? author.reveal(pool[rng.below(pool.count)], in: game, atMillis: clock)
        case 5, 6:
            let numbers = (0..<n).filter { state.board.isRevealed($0) && state.genesis.layout.adjacentMines($0) > 0 }
            if !numbers.isEmpty { op = try? author.chord(numbers[rng.below(numbers.count)], in: game, atMillis: clock) }
        case 7 where rng.below(4) == 0:
            op = try? author.peek(in: game, atMillis: clock)
        case 8 where rng.below(4) == 0:
            op = try? author.archive(!state.isArchived, in: game, atMillis: clock)
        case 9 where isDaily && rng.below(4) == 0:
            // A second daily op of the creator's changes nothing (the first counts); another player makes none.
            op = try? author.daily(20_000 + rng.below(3), in: game, atMillis: clock)
        case 9 where isRace && rng.below(2) == 0:
            // A racer gives up its board.
            op = try? author.resign(in: game, atMillis: clock)
        default:
            op = try? author.cycleMark(covered[rng.below(covered.count)], in: game, atMillis: clock)
        }
        if let op { beginKeeping(op, at: p) }
    }

    /// The creator lets peer 3 (a spectator so far) move.
    mutating func addSpectator() {
        guard let gameID, config.peers > 3 else { return }
        // Its loop makes the op once a commit under way is done.
        kept(at: 0)
        if peers[0].replica.sleeping[gameID] != nil, peers[0].replica.wake(gameID) { wakes += 1 }
        guard let game = peers[0].replica.games[gameID] else { return }
        let clock = 1_790_000_000_000 + UInt64(now) * 250
        if let op = try? peers[0].author.addPlayers([peers[3].author.identity.peerID], in: game, atMillis: clock) { local(op, at: 0) }
    }

    mutating func restart(_ p: Int) throws {
        restarts += 1
        // A move it was keeping never reached its disk: gone with it.
        if let lost = keeping.removeValue(forKey: p) {
            lostBeforeKept += 1
            lostKeys.append((lost.op.author, lost.op.seq))
            // Peers that took it before it was lost, which must let it go.
            lostButTaken +=
                peers.indices.filter { i in
                    i != p && peers[i].replica.awakened(lost.op.gameID)?.op(author: lost.op.author, seq: lost.op.seq)?.hash == lost.op.hash
                }.count
        }
        var replica = Replica(circle: circle, reader: peers[p].author.identity, archive: peers[p].disk, recentOpsKept: config.recentOpsKept)
        // From the bytes, as a store reads them.
        let stored = try peers[p].disk.values.map { (op: try Op(decoding: $0.op.encoded), vouched: $0.vouched) }
        let outcome = replica.restore(stored.filter { !$0.vouched }.map(\.op), vouched: stored.filter(\.vouched).map(\.op))
        for r in outcome.rejected { rejected[r.reason, default: 0] += 1 }
        replica.noteEverythingStored()
        peers[p].replica = replica
        let held = replica.games.values.flatMap(\.everyOp)
        peers[p].disk.removeAll()
        for op in held {
            peers[p].disk[Self.key(op)] = (op, op.signature == nil && replica.games[op.gameID]?.isUnsigned(author: op.author, seq: op.seq) == true)
        }
        // Its connections drop and come back: fresh sessions on both ends.
        for n in neighbours(of: p) { connect(p, n) }
    }

    mutating func startPartition() {
        partitions += 1
        let groups = 2 + rng.below(2)
        group = (0..<config.peers).map { _ in rng.below(groups) }
        partitionEnds = now + 5 + rng.below(20)
    }

    /// Sends one forged op (or garbage) to a peer that knows the game, over
    /// one of its links, and records what it should be refused as.
    mutating func forge() {
        guard let gameID else { return }
        let targets = peers.indices.filter { peers[$0].replica.state(of: gameID) != nil && !peers[$0].sessions.isEmpty }
        guard !targets.isEmpty else { return }
        let to = targets[rng.below(targets.count)]
        let via = neighbours(of: to)[rng.below(neighbours(of: to).count)]
        forgerCount += 1
        let rogue = Fixtures.identity(100_000 + forgerCount, salt: UInt8(truncatingIfNeeded: seed))
        let forge = Forge(circle: circle)
        let member = peers[rng.below(config.peers)].author.identity.peerID
        let cells = CellRuns(cells: [rng.below(64)])
        var kind = rng.below(restricted ? 9 : 7)
        if !restricted && kind == 6 && !(isDaily && peers[to].replica.state(of: gameID)?.isDaily == true) { kind = 8 }
        let op: Op
        let reason: OpRejection
        switch kind {
        case 6 where !restricted:
            // A member of the circle moves in another's board of the day (which the target knows is one).
            op = forge.op(rogue, game: gameID, seq: 1, lamport: 3, previous: .none, payload: .reveal(cells))
            reason = .dailyOfAnother
        case 6:
            // A member of the circle outside the chosen players moves.
            op = forge.op(rogue, game: gameID, seq: 1, lamport: 3, previous: .none, payload: .reveal(cells))
            reason = .notPlayer
        case 7:
            // A member who is not the creator adds itself.
            op = forge.op(rogue, game: gameID, seq: 1, lamport: 3, previous: .none, payload: .players([rogue.peerID]))
            reason = .notPlayer
        case 0:
            // A member's op with a signature that is not the member's.
            let real = forge.op(rogue, game: gameID, seq: 1_000 + forgerCount, lamport: 5, previous: .none, payload: .reveal(cells), author: member)
            op = real
            reason = .badSignature
        case 1:
            // A proper op whose signature was damaged on the way.
            let honest = forge.op(rogue, game: gameID, seq: 1, lamport: 3, previous: .none, payload: .reveal(cells))
            var sig = honest.signature?.bytes ?? []
            if !sig.isEmpty { sig[rng.below(sig.count)] ^= 0x10 }
            op = honest.with(signature: Signature(bytes: sig))
            reason = .badSignature
        case 2:
            op = forge.op(rogue, game: gameID, seq: 1, lamport: 3, previous: .none, payload: .reveal(cells), proofCircle: Fixtures.circle(seed &+ 1))
            reason = .notMember
        case 3:
            op = forge.op(rogue, game: gameID, seq: 1, lamport: 3, previous: OpHash(unchecked: Blake2b.hash([UInt8(kind)])), payload: .reveal(cells))
            reason = .brokenChain
        case 4:
            op = forge.op(rogue, game: gameID, seq: 1, lamport: 3, previous: .none, payload: .reveal(CellRuns(cells: [64 + rng.below(1000)])))
            // Nobody may send a private game a plain op: that is seen before its cells.
            reason = isPrivate ? .notPlayer : .cellOutOfRange
        case 8:
            // A head signature that is not the author's, for an op the peer
            // holds, sent by a neighbour in its link's stream (naming the
            // game as its session does): refused. Sent by the author itself,
            // of its own chain, it is what no honest peer sends, and the
            // link breaks; sent by another peer it may be the head of a
            // fork its author made, and the link stays.
            // Half the time a mover's head of its own chain, to a neighbour that holds its ops.
            let pairs = (0..<config.players).flatMap { m in
                neighbours(of: m).filter { n in
                    !isLegacy(m, n) && peers[n].replica.games[gameID]?.everyOp.contains { $0.author == peers[m].author.identity.peerID } == true
                }.map { (m, $0) }
            }
            let ownChain = !pairs.isEmpty && rng.below(2) == 0
            let (via, to) = ownChain ? pairs[rng.below(pairs.count)] : (via, to)
            let ops = peers[to].replica.games[gameID]?.everyOp ?? []
            let held = ownChain ? ops.last { $0.author == peers[via].author.identity.peerID } : ops.last
            guard let held, !isLegacy(via, to), var session = peers[via].sessions.removeValue(forKey: to) else { return }
            let fake = Signature(bytes: (0..<64).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
            let head = fake.flatMap { session.head(of: ChainHead(game: gameID, author: held.author, seq: held.seq), signature: $0) }
            peers[via].sessions[to] = session
            guard let head else { return }
            send(.heads([head]), from: via, to: to, forgedHead: held.author == peers[via].author.identity.peerID)
            return
        default:
            var garbage = SyncMessage.ops([]).encoded
            garbage += (0..<(1 + rng.below(40))).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            injected[.malformed, default: 0] += 1
            deliver(garbage, from: via, to: to)
            return
        }
        injected[reason, default: 0] += 1
        guard let segment = OpSegment(verifiedOps: [op]) else { return }
        deliver(SyncMessage.ops([segment]).encoded, from: via, to: to, forged: true)
    }

    // MARK: Run

    /// What a run found; `problems` is empty when every check held.
    struct Report {
        var problems: [String] = []
        var ops = 0
        var messages = 0
        var restarts = 0
        var partitions = 0
        var healTicks = 0
        /// Moves of a device the creator added halfway (games with chosen players).
        var addedPlayerMoves = 0
        /// Of those, the moves in private games (sealed, and unread by the members who do not play).
        var addedPlayerSealedMoves = 0
        /// Games the creator said were a board of the day (each counted once, on every peer that reads it).
        var dailyGames = 0
        /// Races in which at least two racers moved on their own boards.
        var racesRun = 0
        /// Racers who gave up, over those races.
        var racersResigned = 0
        /// Ops sent as live pushes, and head signatures sent apart from them.
        var liveOps = 0
        var headSignatures = 0
        /// Segments sent in the link's compact form.
        var chainSegments = 0
        /// Ops replicas let go of and read back from their disks (catch-ups, signatures checked, restarts).
        var opsReadBack = 0
        /// Games put to sleep, and sleeping games woken by a move or a message.
        var sleeps = 0
        var wakes = 0
        /// Moves pushed before they were kept and lost with their authors,
        /// and ops held unsigned that gave way on the peers that took them.
        var lostBeforeKept = 0
        var gaveWay = 0
        /// Peers that held such a move when it was lost.
        var lostButTaken = 0
    }

    mutating func run() throws -> Report {
        try createGame()
        var forgeriesLeft = config.forgeries
        for _ in 0..<config.activeTicks {
            now += 1
            if group != nil && now >= partitionEnds { group = nil }
            if group == nil && rng.below(100) < config.partitionPercent { startPartition() }
            if rng.below(100) < config.restartPercent { try restart(rng.below(config.peers)) }
            if config.sleepEvery > 0 && now % config.sleepEvery == 0, keeping[(now / config.sleepEvery) % config.peers] == nil {
                sleeps += peers[(now / config.sleepEvery) % config.peers].replica.sleepIdle(keepingAwake: 0)
            }
            if rng.below(10) < config.moveChance { move() }
            if restricted && now == config.activeTicks / 3 { addSpectator() }
            if forgeriesLeft > 0 && rng.below(config.activeTicks / max(1, config.forgeries)) == 0 {
                forge()
                forgeriesLeft -= 1
            }
            if now % config.tickEvery == 0 { antiEntropy() }
            deliverDue()
            try endKeeping()
        }
        // The commits under way end (or their authors stop) before healing.
        now += config.maxDelay + 2
        deliverDue()
        try endKeeping()
        // Heal: no partitions, no loss; anti-entropy until quiet.
        group = nil
        lossless = true
        var report = Report()
        let reference = try referenceReplica()
        var healTicks = 0
        while healTicks < 40 {
            healTicks += 1
            now += 1
            if healTicks % 4 == 1 { antiEntropy() }
            deliverDue()
            if queue.isEmpty && converged(to: reference) { break }
        }
        report.healTicks = healTicks
        report.ops = validOps.count
        report.messages = sent
        report.restarts = restarts
        report.partitions = partitions
        report.liveOps = liveOps
        report.headSignatures = headSignatures
        report.chainSegments = chainSegments
        report.opsReadBack = peers.reduce(0) { $0 + $1.disk.opsReadBack }
        report.sleeps = sleeps
        report.wakes = wakes
        report.lostBeforeKept = lostBeforeKept
        report.gaveWay = gaveWay
        report.lostButTaken = lostButTaken
        if restricted, config.peers > 3 {
            let added = peers[3].author.identity.peerID
            report.addedPlayerMoves = validOps.filter { $0.author == added }.count
            if isPrivate { report.addedPlayerSealedMoves = report.addedPlayerMoves }
        }
        report.problems = check(against: reference)
        if let gameID, reference.state(of: gameID)?.dailyDay != nil { report.dailyGames = 1 }
        if let gameID, let race = reference.state(of: gameID), race.isRace {
            let moved = Set(validOps.filter { $0.seq > 1 || $0.author != race.creator }.map(\.author))
            if moved.intersection(race.racers).count >= 2 { report.racesRun = 1 }
            report.racersResigned = race.racers.filter { race.lane(of: $0)?.gaveUpMillis != nil }.count
        }
        return report
    }

    /// The replica of every valid op, read as the creator reads it.
    func referenceReplica() throws -> Replica {
        var r = Replica(circle: circle, reader: peers[0].author.identity)
        r.restore(validOps)
        return r
    }

    /// Whether peer `i` reads the game in the end: every peer, but in a
    /// private game only its players (the creator, peers 1 and 2, and 3 added).
    func reads(_ i: Int) -> Bool { !isPrivate || i <= 3 }

    func converged(to reference: Replica) -> Bool {
        guard let gameID, let digest = reference.state(of: gameID)?.digest else { return false }
        return peers.indices.allSatisfy { i in
            peers[i].replica.summary == reference.summary && state(of: gameID, at: i)?.digest == (reads(i) ? digest : nil)
        }
    }

    /// Peer `i`'s state of `game`: a sleeping game's rebuilt from its disk
    /// (and left asleep), as a listing reads it.
    func state(of game: GameID, at i: Int) -> GameState? {
        peers[i].replica.awakened(game)?.state
    }

    func check(against reference: Replica) -> [String] {
        var problems: [String] = []
        guard let gameID, let digest = reference.state(of: gameID)?.digest else { return ["no reference state"] }
        if reference.games[gameID]?.opCount != validOps.count {
            problems.append("reference holds \(reference.games[gameID]?.opCount ?? 0) of \(validOps.count) valid ops")
        }
        for (i, p) in peers.enumerated() {
            if p.replica.summary != reference.summary { problems.append("peer \(i) lacks ops: \(p.replica.games[gameID]?.opCount ?? 0) of \(validOps.count)") }
            if state(of: gameID, at: i)?.digest != (reads(i) ? digest : nil) {
                problems.append(reads(i) ? "peer \(i) has a different digest" : "peer \(i) reads a private game it does not play")
            }
        }
        if isRace {
            let expected = Set(peers[0...2].map(\.author.identity.peerID))
            if reference.state(of: gameID)?.players != expected { problems.append("the racers are not the creator and peers 1 and 2") }
            if validOps.contains(where: { $0.author == peers[3].author.identity.peerID }) { problems.append("peer 3 moved in a race it does not run") }
        } else if restricted {
            let expected = Set(peers[0...3].map(\.author.identity.peerID))
            if reference.state(of: gameID)?.players != expected { problems.append("the players are not the creator, peers 1 and 2, and peer 3 added") }
        }
        for (i, p) in peers.enumerated() where !(p.replica.games[gameID]?.equivocators.isEmpty ?? true) {
            problems.append("peer \(i) holds a player for one who signed two moves at one place")
        }
        if signedBeforeKept > 0 { problems.append("\(signedBeforeKept) live pushes carried a signature before their op was kept") }
        if violationsSeen != violationsForged { problems.append("\(violationsSeen) links broken for violations, \(violationsForged) forged") }
        for reason in OpRejection.allCases where (rejected[reason] ?? 0) != (injected[reason] ?? 0) {
            problems.append("\(reason): \(rejected[reason] ?? 0) rejected, \(injected[reason] ?? 0) forged")
        }
        return problems
    }
}
