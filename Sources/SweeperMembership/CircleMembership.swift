import SweeperCrypto
import SweeperSync

/// A circle's membership records: a grow-only set of signed records, each
/// at its place in its author's chain, and the ``MembershipView`` derived
/// from them. Any two replicas holding the same records derive the same
/// view, whatever order the records came in; the rules are in
/// ``MembershipDerivation``.
///
/// What a replica takes is bounded, so that no member can make the circle
/// unusable by writing records: each author has a budget of records
/// (``authorBudget``), the circle a total (``recordLimit``), a record a size;
/// removals and rekeys are never refused for space (they have a budget of
/// their own per author, ``changeBudget``). Records of devices no
/// admission names wait, and are neither kept nor passed on.
public struct CircleMembership: Sendable {
    /// The circle.
    public let circle: CircleID
    /// The circle's first key: the founding record proves it.
    public let firstKey: CircleKey
    /// The roster of records of version 1 this circle was migrated from (empty for a circle made with roles).
    public private(set) var legacy: LegacyRoster
    /// Every record held, by hash.
    public private(set) var records: [RecordHash: MembershipRecord] = [:]
    /// The records in the order they were taken (every record after those it names).
    private var order: [RecordHash] = []
    /// The founding record, once held.
    public private(set) var root: RecordHash?
    /// Each author's records by place in its chain.
    private(set) var chains: [PeerID: [UInt64: [RecordHash]]] = [:]
    /// Records waiting: for a record they name, or for their author's admission.
    private var waiting = WaitingRoom(countLimit: CircleMembership.waitingLimit, byteLimit: CircleMembership.waitingByteLimit)
    /// The devices some held admission names (its records may be taken).
    private var admitted: Set<PeerID> = []
    /// Records of the budgeted kinds, per author.
    private var spent: [PeerID: Int] = [:]
    private var budgeted = 0
    /// Removals and rekeys, per author: how many, and their bytes.
    private var exempt: [PeerID: (count: Int, bytes: Int)] = [:]
    /// The bytes of removals and rekeys by devices other than the founder.
    private var changeBytes = 0
    /// The records no held record names.
    public private(set) var heads: Set<RecordHash> = []
    /// For each record about a subject (an admission, a removal, a
    /// promotion, an invitations switch) whose `through` is past 0: the
    /// records among its ancestors that are the subject's own or that
    /// switch the subject's invitations. A record's ancestors never change
    /// once it is held, so this is found once, when it is added, and the
    /// derivation reads it (see ``MembershipDerivation/cut(of:by:claimed:)``).
    private(set) var pins: [RecordHash: Set<RecordHash>] = [:]
    /// Who is in the circle.
    public private(set) var view = MembershipView()

    /// The most records of the budgeted kinds (found, admit, invite,
    /// revoke, promote, invitations) a circle holds. A family's circle makes a few dozen.
    public static let recordLimit = 4_096
    /// The most records of the budgeted kinds one author may write: a
    /// member making an invitation a day would take most of a year.
    public static let authorBudget = 256
    /// The most removals and rekeys one author may write, and their most
    /// bytes: the total bound on records does not count them, and this is
    /// far more than a family ever makes (a rekey to ten members is about
    /// 1 KiB), while a member writing rekeys to made-up recipients stops
    /// at 256 KiB.
    public static let changeBudget = 256
    /// See ``changeBudget``.
    public static let changeByteBudget = 256 * 1024
    /// The most bytes of removals and rekeys the circle holds from devices
    /// other than the founder, whose removals and rekeys are never refused.
    public static let changeByteLimit = 16 * 1024 * 1024
    /// The most records that may wait.
    public static let waitingLimit = 1_024
    /// The most bytes of records that may wait: far more than a family's
    /// circle ever sends ahead of what it names, while a flood of records
    /// naming parents nobody has stops there.
    public static let waitingByteLimit = 4 << 20

    /// An empty membership of the circle whose first key is `firstKey`,
    /// migrated from the records of version 1 `legacy` (none for a circle
    /// made with roles).
    public init(firstKey: CircleKey, legacy: [LegacyRecord] = []) {
        self.firstKey = firstKey
        circle = CircleID(firstKey: firstKey)
        self.legacy = legacy.isEmpty ? LegacyRoster() : LegacyRoster(records: legacy, firstKey: firstKey)
        admitted = Set(self.legacy.members.map(\.peer)).union(self.legacy.removed.keys)
        view = derive()
    }

    /// How many records wait for a record they name or for their author's admission.
    public var waitingCount: Int { waiting.count }
    /// How many bytes of records wait.
    public var waitingBytes: Int { waiting.bytes }

    /// The founder: the founding record's author, or a migrated circle's
    /// first founder. Fixed once the circle has a start.
    public var founder: PeerID? {
        if let root, let record = records[root] { return record.author }
        return legacy.members.first { $0.role == .founder }?.peer
    }

    /// What an invite code pins (its first bytes): the founding record's
    /// hash, or for a circle migrated from records of version 1, BLAKE2b-32
    /// of `"sweeper/legacy-roster/v1"` and the hashes of those records in
    /// ascending order (they are fixed for good: no device makes them any
    /// more). `nil` before the circle has a start. A joining device takes
    /// only records that give the same.
    public var rootCommitment: [UInt8]? {
        if let root { return root.bytes }
        guard !legacy.records.isEmpty else { return nil }
        let hashes = legacy.records.map(\.hash.bytes).sorted { $0.lexicographicallyPrecedes($1) }
        return Blake2b.hash(parts: [Array("sweeper/legacy-roster/v1".utf8)] + hashes, key: nil, length: 32)
    }

    /// Whether the circle has a start: a founding record, or a migrated roster.
    public var isFounded: Bool { root != nil || !legacy.members.isEmpty }

    /// Why a record was refused.
    public enum Refusal: String, Error, Sendable, Equatable, CustomStringConvertible {
        /// The signature is not the author's.
        case badSignature
        /// The record is another circle's.
        case otherCircle
        /// Too many records are waiting.
        case waitingLimit
        /// The circle holds the most records of that kind it may.
        case recordLimit
        /// The author has written the most records it may.
        case authorBudget
        /// A second founding, or a founding that does not prove the first key.
        case founding
        /// The record does not follow its author's previous record.
        case badChain

        public var description: String {
            switch self {
            case .badSignature: "its signature is not its author's"
            case .otherCircle: "it is another circle's"
            case .waitingLimit: "too many records wait for the ones they name"
            case .recordLimit: "the circle holds the most records it may"
            case .authorBudget: "its author has written the most records a device may"
            case .founding: "the circle was founded already"
            case .badChain: "it does not follow its author's previous record"
            }
        }
    }

    /// What an insert did.
    public struct InsertOutcome: Sendable {
        /// Records added (waiting ones now complete included), in the order added.
        public var added: [MembershipRecord] = []
        /// Records held back for a record they name, or for their author's admission.
        public var waiting = 0
        /// Records already held.
        public var duplicates = 0
        /// Records refused.
        public var refused: [Refusal] = []
    }

    /// Adds records (checking each signature, circle, chain and bound),
    /// then derives the view again. With `arrivedMillis`, records that
    /// waited longer than ten minutes before it are let go.
    @discardableResult
    public mutating func insert(_ incoming: [MembershipRecord], arrivedMillis: UInt64? = nil) -> InsertOutcome {
        var outcome = InsertOutcome()
        now = arrivedMillis
        defer { now = nil }
        if let arrivedMillis { waiting.expire(at: arrivedMillis) }
        for record in incoming {
            if records[record.hash] != nil || waiting.holds(record.hash) {
                outcome.duplicates += 1
                continue
            }
            guard record.circle == circle else {
                outcome.refused.append(.otherCircle)
                continue
            }
            guard record.hasValidSignature else {
                outcome.refused.append(.badSignature)
                continue
            }
            if let refusal = take(record, &outcome) { outcome.refused.append(refusal) }
        }
        if !outcome.added.isEmpty { view = derive() }
        return outcome
    }

    /// Takes one record whose signature is checked: adds it, holds it back, or says why not.
    private mutating func take(_ record: MembershipRecord, _ outcome: inout InsertOutcome) -> Refusal? {
        if let refusal = refusal(of: record) { return refusal }
        let missing = record.named.filter { records[$0] == nil }
        let authorKnown = admitted.contains(record.author) || record.change.kind == .found
        if missing.isEmpty, authorKnown {
            if let refusal = chainRefusal(of: record) { return refusal }
            add(record, &outcome)
            return nil
        }
        guard waiting.hold(record, until: missing.first, stranger: !authorKnown, at: now) else { return .waitingLimit }
        outcome.waiting += 1
        return nil
    }

    /// The arrival time of the records being inserted, while they are.
    private var now: UInt64?

    /// The checks that need nothing the record names.
    ///
    /// Nothing here depends on the derived view: two replicas that are
    /// offered the same records (each author's in chain order, as they
    /// come) hold the same ones, so they derive the same view.
    private func refusal(of record: MembershipRecord) -> Refusal? {
        switch record.change {
        case .found(let proof):
            guard !isFounded, record.seq == 1, firstKey.isValidMembershipProof(proof, for: record.author) else { return .founding }
        case .remove, .rekey:
            let spent = exempt[record.author] ?? (0, 0)
            let size = record.signedBytes.count + Signature.byteCount
            if spent.count >= Self.changeBudget || spent.bytes + size > Self.changeByteBudget { return .authorBudget }
            if record.author != founder, changeBytes + size > Self.changeByteLimit { return .recordLimit }
        default:
            if spent[record.author, default: 0] >= Self.authorBudget { return .authorBudget }
            if budgeted >= Self.recordLimit { return .recordLimit }
        }
        return nil
    }

    /// A record whose named records are held must follow its author's previous one.
    private func chainRefusal(of record: MembershipRecord) -> Refusal? {
        guard let previous = record.previous else { return record.seq == 1 ? nil : .badChain }
        guard let before = records[previous], before.author == record.author, before.seq + 1 == record.seq else { return .badChain }
        return nil
    }

    private mutating func add(_ first: MembershipRecord, _ outcome: inout InsertOutcome) {
        var ready = [first]
        while let record = ready.popLast() {
            records[record.hash] = record
            order.append(record.hash)
            chains[record.author, default: [:]][record.seq, default: []].append(record.hash)
            for named in record.named { heads.remove(named) }
            heads.insert(record.hash)
            notePins(of: record)
            switch record.change {
            case .found:
                root = record.hash
                admitted.insert(record.author)
                spend(record.author)
            case .remove, .rekey:
                let size = record.signedBytes.count + Signature.byteCount
                let spent = exempt[record.author] ?? (0, 0)
                exempt[record.author] = (spent.count + 1, spent.bytes + size)
                if record.author != founder { changeBytes += size }
            case .admit(let subject, _, _, _):
                admitted.insert(subject)
                spend(record.author)
            default:
                spend(record.author)
            }
            outcome.added.append(record)
            // Records that waited for this one, or for the device it admits.
            var woken = waiting.release(waitingOn: record.hash)
            if let subject = record.change.subject, case .admit = record.change { woken += waiting.release(author: subject) }
            if case .found = record.change { woken += waiting.release(author: record.author) }
            for waiter in woken.sorted(by: { $0.hash < $1.hash }) {
                outcome.waiting = max(0, outcome.waiting - 1)
                if let refusal = refusal(of: waiter) {
                    outcome.refused.append(refusal)
                    continue
                }
                let missing = waiter.named.filter { records[$0] == nil }
                let known = admitted.contains(waiter.author) || waiter.change.kind == .found
                if !missing.isEmpty || !known {
                    if waiting.hold(waiter, until: missing.first, stranger: !known, at: now) {
                        outcome.waiting += 1
                    } else {
                        outcome.refused.append(.waitingLimit)
                    }
                } else if let refusal = chainRefusal(of: waiter) {
                    outcome.refused.append(refusal)
                } else {
                    ready.append(waiter)
                }
            }
        }
    }

    /// Finds ``pins`` of `record` (every record it names is held).
    private mutating func notePins(of record: MembershipRecord) {
        let through: UInt64
        switch record.change {
        case .admit(_, _, _, let t), .remove(_, let t, _), .promote(_, let t), .invitations(_, let t, _): through = t
        default: return
        }
        guard let subject = record.change.subject, through > 0 else { return }
        var found: Set<RecordHash> = []
        var seen: Set<RecordHash> = []
        var stack = record.named
        while let h = stack.popLast() {
            guard seen.insert(h).inserted, let r = records[h] else { continue }
            if r.author == subject || r.change.subject == subject && r.change.kind == .invitations { found.insert(h) }
            stack += r.named
        }
        pins[record.hash] = found
    }

    private mutating func spend(_ author: PeerID) {
        spent[author, default: 0] += 1
        budgeted += 1
    }

    /// The place and hash of the newest record `author` holds of its own chain.
    public func chainHead(of author: PeerID) -> (seq: UInt64, hash: RecordHash)? {
        guard let chain = chains[author], let seq = chain.keys.max(), let hash = chain[seq]?.min() else { return nil }
        return (seq, hash)
    }

    /// Makes and signs a record of `change` by `identity`, next in its
    /// chain, whose parents are the current heads, and adds it. Throws when
    /// the record is refused (a second founding, a budget spent).
    @discardableResult
    public mutating func record(_ change: MembershipChange, by identity: SigningIdentity, atMillis now: UInt64) throws(Refusal) -> MembershipRecord {
        let head = chainHead(of: identity.peerID)
        // A change about another device names that device's newest record
        // among its parents, whatever else they hold: that record is where
        // the change cuts the device's chain.
        var parents = heads
        if let subject = change.subject, let cut = chainHead(of: subject)?.hash, parents.count > MembershipRecord.parentLimit {
            parents = Set(heads.subtracting([cut, head?.hash].compactMap { $0 }).sorted().prefix(MembershipRecord.parentLimit - 1) + [cut])
        }
        let record = MembershipRecord(
            signing: identity, circle: circle, madeMillis: now, seq: (head?.seq ?? 0) + 1, previous: head?.hash, parents: parents,
            change: change)
        let outcome = insert([record])
        if let refusal = outcome.refused.first { throw refusal }
        guard outcome.added.contains(record) else { throw .waitingLimit }
        return record
    }

    /// Every held record, each after those it names, the records of
    /// version 1 first: the order to send them in.
    public var ordered: [MembershipRecord] { order.compactMap { records[$0] } }

    /// The encoded records, those of version 1 first: what a peer is sent.
    public var encodedRecords: [[UInt8]] { legacy.records.map(\.encoded) + ordered.map(\.encoded) }

    /// Derives the view from the records held (see ``MembershipDerivation``).
    private func derive() -> MembershipView {
        var derivation = MembershipDerivation(legacy: legacy, records: records, chains: chains, root: root, pins: pins)
        return derivation.run()
    }
}

extension MembershipChange {
    /// A rekey to `key` for `epoch`, sealed to each of `members` (a member
    /// whose key has no X25519 form is left out: it cannot have signed anything).
    public static func rekey(to key: CircleKey, epoch: UInt64, members: some Sequence<PeerID>) -> MembershipChange {
        var sealed: [PeerID: [UInt8]] = [:]
        let bytes = key.bytes
        for member in members {
            if let box = SealedBox.seal(bytes, to: member) { sealed[member] = box }
        }
        return .rekey(epoch: epoch, check: key.check, sealed: sealed)
    }
}

extension MembershipView.Epoch {
    /// This epoch's key, when it was sealed to `identity` (and matches its check).
    public func key(for identity: SigningIdentity) -> CircleKey? {
        guard let box = sealed[identity.peerID], let opened = identity.openSealed(box),
            let key = try? CircleKey(bytes: opened.bytes), key.check == check
        else { return nil }
        return key
    }

    /// Whether `key` is this epoch's key.
    public func matches(_ key: CircleKey) -> Bool { key.check == check }
}
