import SweeperCrypto
import SweeperSync

/// What one author's ops may fill on this device in a day, counted as
/// they are taken from peers: ``opsPerDay`` ops or ``bytesPerDay`` bytes
/// as stored. A game's own limit (``GameReplica/opQuota``) bounds one
/// game; this bounds a member in bad faith who fills many (one put 959 MB
/// into another's database in 24 s before it). A family's play is far
/// below it: a player's hands make a few thousand ops on a busy day, and a
/// device back after a month away takes that month's ops in one day.
/// Past it, the author's new ops are refused until its day is over
/// (``Replica/overDailyQuota``), never relayed, and a later sync brings
/// them; `circle` says so. This device's own players are never counted.
struct AuthorQuota: Sendable {
    /// The most ops of one author taken in a day.
    static let opsPerDay = 250_000
    /// The most bytes (as stored) of one author's ops taken in a day.
    static let bytesPerDay = 64 << 20
    /// A day, in seconds of the steady clock.
    static let day = 86_400.0

    struct Use: Sendable {
        /// When its day began (the first op counted in it).
        var since: Double
        var ops = 0
        var bytes = 0
    }

    private(set) var used: [PeerID: Use] = [:]
    /// This quota's limits: ``opsPerDay`` and ``bytesPerDay`` unless told.
    let opsLimit: Int
    let bytesLimit: Int

    init(opsLimit: Int = Self.opsPerDay, bytesLimit: Int = Self.bytesPerDay) {
        self.opsLimit = opsLimit
        self.bytesLimit = bytesLimit
    }

    /// Counts `ops` taken now (but those of `exempt` authors); returns the
    /// authors over the quota now.
    mutating func count(_ ops: some Sequence<Op>, exempt: Set<PeerID>, now: Double) -> Set<PeerID> {
        for op in ops where !exempt.contains(op.author) {
            if let use = used[op.author], now - use.since >= Self.day { used[op.author] = nil }
            used[op.author, default: Use(since: now)].ops += 1
            // As stored: the canonical bytes, a flag and a signature.
            used[op.author, default: Use(since: now)].bytes += op.canonicalBytes.count + 65
        }
        return over(now: now)
    }

    /// The authors over the quota now: days that ended are let go.
    mutating func over(now: Double) -> Set<PeerID> {
        used = used.filter { now - $0.value.since < Self.day }
        return Set(used.filter { $0.value.ops >= opsLimit || $0.value.bytes >= bytesLimit }.keys)
    }
}
