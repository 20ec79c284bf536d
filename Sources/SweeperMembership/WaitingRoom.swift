import SweeperCrypto

/// Records held back until what they need is held: a record they name, or
/// their author's admission. Bounded by count and bytes; when full, the
/// records of devices no admission names go first (a stranger's, most
/// likely), then the oldest; a record waits at most ``lifetime``.
struct WaitingRoom: Sendable {
    /// The most records that may wait.
    let countLimit: Int
    /// The most bytes of records that may wait.
    let byteLimit: Int
    /// How long a record may wait (ms), when arrival times are given.
    static let lifetime: UInt64 = 10 * 60 * 1000

    private(set) var records: [RecordHash: MembershipRecord] = [:]
    /// Arrival order (oldest first; entries of records gone are skipped).
    private var order: [RecordHash] = []
    private var arrived: [RecordHash: UInt64] = [:]
    private(set) var bytes = 0
    /// What each record waits on: a record it names, or (`nil`) its author's admission.
    private var on: [RecordHash: Set<RecordHash>] = [:]
    private var forAuthor: [PeerID: Set<RecordHash>] = [:]

    init(countLimit: Int, byteLimit: Int) {
        self.countLimit = countLimit
        self.byteLimit = byteLimit
    }

    var count: Int { records.count }

    func holds(_ hash: RecordHash) -> Bool { records[hash] != nil }

    private static func size(_ record: MembershipRecord) -> Int { record.signedBytes.count + Signature.byteCount }

    /// Holds `record` until `missing` is held (or, when `nil`, until its
    /// author is admitted), making room by eviction; `false` when there is
    /// no room (the record is bigger than the room, or nothing may go).
    /// `stranger` tells whether no admission names `record`'s author.
    mutating func hold(_ record: MembershipRecord, until missing: RecordHash?, stranger: Bool, at now: UInt64?) -> Bool {
        let size = Self.size(record)
        guard size <= byteLimit else { return false }
        if let now { expire(at: now) }
        while records.count >= countLimit || bytes + size > byteLimit {
            // Room goes to a member's record before a stranger's: a stranger's never evicts a member's.
            guard let evicted = victim(), stranger ? !isMembers(evicted) : true else { return false }
            remove(evicted)
        }
        records[record.hash] = record
        order.append(record.hash)
        if let now { arrived[record.hash] = now }
        bytes += size
        if let missing {
            on[missing, default: []].insert(record.hash)
        } else {
            forAuthor[record.author, default: []].insert(record.hash)
        }
        if stranger { strangers.insert(record.hash) }
        return true
    }

    /// The records whose authors no admission named when they came.
    private var strangers: Set<RecordHash> = []

    private func isMembers(_ hash: RecordHash) -> Bool { !strangers.contains(hash) }

    /// The record to evict: the oldest stranger's, else the oldest.
    private func victim() -> RecordHash? {
        order.first { records[$0] != nil && strangers.contains($0) } ?? order.first { records[$0] != nil }
    }

    /// Drops the records that waited longer than ``lifetime``.
    mutating func expire(at now: UInt64) {
        guard now >= Self.lifetime else { return }
        let cutoff = now - Self.lifetime
        for hash in order where (arrived[hash] ?? .max) < cutoff { remove(hash) }
        compact()
    }

    /// Lets go of one waiting record.
    @discardableResult
    mutating func remove(_ hash: RecordHash) -> MembershipRecord? {
        guard let record = records.removeValue(forKey: hash) else { return nil }
        bytes -= Self.size(record)
        arrived[hash] = nil
        strangers.remove(hash)
        forAuthor[record.author]?.remove(hash)
        if forAuthor[record.author]?.isEmpty == true { forAuthor[record.author] = nil }
        for named in record.named where on[named]?.remove(hash) != nil {
            if on[named]?.isEmpty == true { on[named] = nil }
        }
        if order.count > 2 * records.count + 64 { compact() }
        return record
    }

    private mutating func compact() { order.removeAll { records[$0] == nil } }

    /// Takes out the records that waited for `hash`.
    mutating func release(waitingOn hash: RecordHash) -> [MembershipRecord] {
        let hashes = on.removeValue(forKey: hash) ?? []
        return hashes.sorted().compactMap { remove($0) }
    }

    /// Takes out the records that waited for `author`'s admission.
    mutating func release(author: PeerID) -> [MembershipRecord] {
        let hashes = forAuthor.removeValue(forKey: author) ?? []
        return hashes.sorted().compactMap { remove($0) }
    }
}
