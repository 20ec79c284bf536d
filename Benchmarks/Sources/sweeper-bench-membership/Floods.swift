import SweeperCrypto
import SweeperGame
import SweeperMembership
import SweeperSync
import Synchronization

// What one hostile message costs the daemon's event loop, and what a flood
// of them leaves in memory: each handler below is what the daemon runs on
// its loop for that message (the sync session and replica, the membership
// insert), timed alone, its longest run over the flood.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Ops kept in memory for a replica to read back, as the store gives them.
final class MemoryArchive: OpArchive {
    struct Miss: Error {}

    private let chains = Mutex<[GameID: [PeerID: [Op]]]>([:])

    func keep(_ ops: [Op]) {
        chains.withLock { all in
            for op in ops { all[op.gameID, default: [:]][op.author, default: []].append(op) }
        }
    }

    func ops(of game: GameID, by author: PeerID, seqs: ClosedRange<UInt64>) throws -> [Op] {
        let chain = chains.withLock { $0[game]?[author] ?? [] }
        guard seqs.lowerBound >= 1, seqs.upperBound <= UInt64(chain.count) else { throw Miss() }
        return Array(chain[Int(seqs.lowerBound - 1)...Int(seqs.upperBound - 1)])
    }
}

/// The resident set size in megabytes (the second field of /proc/self/statm, in pages).
func residentMB() -> Double {
    guard let file = fopen("/proc/self/statm", "r") else { return 0 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    guard fgets(&line, Int32(line.count), file) != nil else { return 0 }
    let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let fields = text.split(separator: " ")
    guard fields.count >= 2, let pages = Int(fields[1]) else { return 0 }
    return Double(pages) * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
}

/// Times `body` once, in ms.
func timed(_ body: () -> Void) -> Double {
    let t0 = milliseconds()
    body()
    return milliseconds() - t0
}

/// The floods: each figure is printed and given as `result:` lines.
func measureFloods() {
    print("hostile messages, one handler run each (the longest of the flood), and memory they leave")
    let alice = identity(50_000), bob = identity(50_001), outsider = identity(50_002)
    let archive = MemoryArchive()
    var replica = Replica(circle: firstKey, archive: archive, recentOpsKept: 2)
    replica.admitAuthors([alice.peerID, bob.peerID])
    // 200 games of 100×100, each with 400 of Bob's signed moves, all asleep.
    var ids: [GameID] = []
    var heads: [GameID: Op] = [:]
    var outsiderOps: [Op] = []
    var bobNext: [Op] = []
    let bobAuthor = OpAuthor(identity: bob, circle: firstKey), outsiderAuthor = OpAuthor(identity: outsider, circle: firstKey)
    for seed in 1...200 {
        guard let parameters = try? GameParameters(width: 100, height: 100, mines: 1_000),
            let board = try? Generator.generate(parameters, seed: UInt64(seed)),
            let genesis = try? OpAuthor(identity: alice, circle: firstKey).genesis(
                parameters: parameters, layout: board.layout, seed: UInt64(seed), questionMarks: false, createdAtMillis: 1_790_000_000_000)
        else { continue }
        let id = genesis.gameID
        var ops = [genesis]
        replica.insert(genesis)
        let covered = (0..<parameters.geometry.cellCount).filter { !board.layout.isMine($0) }.dropFirst(200)
        for cell in covered.prefix(400) {
            guard let game = replica.games[id], let op = try? bobAuthor.setMark(.flag, on: cell, in: game, atMillis: 1_790_000_000_000) else { continue }
            replica.insert(op)
            ops.append(op)
        }
        if let game = replica.games[id], let op = try? outsiderAuthor.peek(in: game, atMillis: 1) { outsiderOps.append(op) }
        if let game = replica.games[id],
            let op = covered.dropFirst(400).lazy.compactMap({ try? bobAuthor.setMark(.flag, on: $0, in: game, atMillis: 1_790_000_000_001) }).first
        {
            bobNext.append(op)
        }
        archive.keep(ops)
        replica.noteEverythingStored()
        ids.append(id)
        heads[id] = ops.last
        replica.sleep(id)
    }
    let wake = timed { replica.wake(ids[0]) }
    replica.sleep(ids[0])
    print("  (waking one of these games, as before this release each named game was: \(ms(wake)))")
    print("result: floods.wake_one_ms \(wake)")

    /// A message handled as the daemon handles a peer's: a big one decoded
    /// and its signatures checked off the loop first, then on the loop
    /// within one message's budget of ops read back.
    func handled(_ message: SyncMessage, by session: inout SyncSession) -> Double {
        if message.encoded.count >= SyncMessage.offLoopBytes { message.checkSignatures() }
        replica.wakeBudget = Replica.wakeBudgetPerMessage
        defer { replica.wakeBudget = nil }
        return timed { _ = session.receive(message, replica: &replica) }
    }

    func report(_ key: String, _ what: String, _ t: Double, _ mb: Double? = nil) {
        print("  \(what): \(ms(t))" + (mb.map { ", memory +\(($0 * 10).rounded() / 10) MB" } ?? ""))
        print("result: floods.\(key)_ms \(t)")
        if let mb { print("result: floods.\(key)_mb \(mb)") }
    }

    // Head signatures naming every game: from a holder of the circle key no
    // admission names (forged), and from a member (valid, for chains signed already).
    var session = SyncSession()
    session.peer = outsider.peerID
    let forged = ids.map { HeadSignature(game: .new($0), author: bob.peerID, seq: heads[$0]?.seq ?? 1, signature: outsider.sign([1])) }
    report("heads_outsider", "a heads message naming 200 sleeping games, forged", handled(.heads(forged), by: &session))
    var member = SyncSession()
    member.peer = bob.peerID
    let valid = ids.compactMap { id in heads[id].flatMap { op in op.signature.map { HeadSignature(game: .new(id), author: nil, seq: op.seq, signature: $0) } } }
    report("heads_member", "the same, valid signatures of chains signed already", handled(.heads(valid), by: &member))
    // A describe request of the most games one names (256).
    report("describe", "describe 200 sleeping games", handled(.describe(ids), by: &member))
    // Ops of a non-member for every game, in one message.
    let segments = outsiderOps.compactMap { OpSegment(verifiedOps: [$0]) }
    report("ops_outsider", "a non-member's op for each of 200 sleeping games", handled(.ops(segments), by: &session))
    let awake = replica.games.count
    print("  games woken by all of the above: \(awake)")
    print("result: floods.woken \(awake)")
    // A member's valid next op in each game, in one message: games woken on
    // the loop while the message's budget lasts, the others left to wake off it.
    let bobOps = bobNext.compactMap { OpSegment(verifiedOps: [$0]) }
    report("ops_member", "a member's next op in each of 200 sleeping games", handled(.ops(bobOps), by: &member))
    let deferred = replica.takeDeferredWakes().count
    print("  of \(bobOps.count) games, woken on the loop: \(replica.games.count), left to wake off it: \(deferred)")
    print("result: floods.ops_member_sent \(bobOps.count)")
    print("result: floods.ops_member_woken \(replica.games.count)")
    print("result: floods.ops_member_deferred \(deferred)")
    for id in ids { replica.sleep(id) }

    // A summary of 1,000,000 made-up games in parts of 100,000.
    var summaryLongest = 0.0
    let before = residentMB()
    var peer = SyncSession()
    var vector = VersionVector()
    vector.advance(outsider.peerID, to: 7)
    for part in 0..<10 {
        var games: [GameID: VersionVector] = [:]
        for n in (part * 100_000)..<((part + 1) * 100_000) {
            var bytes = [UInt8](repeating: 0xAB, count: 16)
            withUnsafeBytes(of: UInt64(n).bigEndian) { bytes.replaceSubrange(0..<8, with: $0) }
            if let id = GameID(bytes: bytes) { games[id] = vector }
        }
        let message: SyncMessage = part == 9 ? .summary(games, wantsReply: true) : .summaryPart(games)
        summaryLongest = max(summaryLongest, handled(message, by: &peer))
    }
    report("summary", "a summary of 1,000,000 made-up games in 10 parts: longest part", summaryLongest, residentMB() - before)
    print("  games of it kept: \(peer.peerHolds.count)")

    // Membership records naming parents nobody has, 100 KB each, one per message.
    var membership = CircleMembership(firstKey: firstKey)
    _ = try? membership.record(.found(proof: firstKey.membershipProof(for: alice.peerID)), by: alice, atMillis: 1)
    var kept: [GameID: UInt64] = [:]
    for n in 0..<6_000 {
        var bytes = [UInt8](repeating: 0xCD, count: 16)
        bytes[0] = UInt8(n & 0xFF)
        bytes[1] = UInt8(n >> 8)
        if let id = GameID(bytes: bytes) { kept[id] = 1 }
    }
    let stranger = identity(50_003)
    let beforeRecords = residentMB()
    var recordLongest = 0.0
    for n in 0..<1_024 {
        let parent = MembershipRecord(
            signing: stranger, circle: circle, madeMillis: 1, seq: UInt64(n + 1), previous: nil, parents: [],
            change: .invite(key: stranger.peerID, expiresMillis: 1)
        ).hash
        let record = MembershipRecord(
            signing: stranger, circle: circle, madeMillis: 2, seq: 1, previous: nil, parents: [parent],
            change: .remove(subject: alice.peerID, through: UInt64(n), kept: kept))
        recordLongest = max(recordLongest, timed { membership.insert([record], arrivedMillis: 1_000) })
    }
    report(
        "records", "1,024 records of 100 KB naming parents nobody has, one per message: longest", recordLongest,
        residentMB() - beforeRecords)
    print("  waiting: \(membership.waitingCount) records, \(membership.waitingBytes / 1024) KiB")
}
