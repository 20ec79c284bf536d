import SweeperCrypto
import SweeperSync

/// Who is in a circle, derived from its membership records.
public struct MembershipView: Sendable, Equatable {
    /// A member and how it came in.
    public struct Member: Sendable, Equatable {
        /// The device.
        public let peer: PeerID
        /// The name it was admitted under (empty for founders).
        public let name: String
        /// Who admitted it; `nil` for a founder (a member before membership was recorded).
        public let admittedBy: PeerID?
        /// The invitation it used; `nil` for a founder.
        public let invitation: PeerID?
        /// When it was admitted or founded (the record's clock).
        public let joinedMillis: UInt64
    }

    /// A removed device.
    public struct Removal: Sendable, Equatable {
        /// The device.
        public let peer: PeerID
        /// Who removed it (the first removal in record order).
        public let removedBy: PeerID
        /// When (the record's clock).
        public let removedMillis: UInt64
        /// Per game, how many of its ops stay (the most any removal kept).
        public internal(set) var kept: [GameID: UInt64]
    }

    /// An invitation and what became of it.
    public struct Invitation: Sendable, Equatable {
        /// What became of an invitation.
        public enum State: Sendable, Equatable {
            /// Not used or revoked (it may have expired: compare ``Invitation/expiresMillis`` with the clock).
            case open
            /// Used to admit this device.
            case used(by: PeerID)
            /// Revoked by this member.
            case revoked(by: PeerID)
        }
        /// The invitation's public key (its id).
        public let key: PeerID
        /// Who made it.
        public let madeBy: PeerID
        /// When.
        public let madeMillis: UInt64
        /// When it stops working.
        public let expiresMillis: UInt64
        /// What became of it.
        public internal(set) var state: State
    }

    /// One circle key after the first: the rekey record that made it.
    public struct Epoch: Sendable, Equatable {
        /// 1, 2, …
        public let epoch: UInt64
        /// The record.
        public let record: RecordHash
        /// The key's ``CircleKey/check``.
        public let check: [UInt8]
        /// The key, sealed to each member the record's author counted.
        public let sealed: [PeerID: [UInt8]]
    }

    /// The members.
    public internal(set) var members: [PeerID: Member] = [:]
    /// The removed devices: never members again.
    public internal(set) var removed: [PeerID: Removal] = [:]
    /// Every invitation, by key.
    public internal(set) var invitations: [PeerID: Invitation] = [:]
    /// The keys after the first, in order (index = epoch − 1).
    public internal(set) var epochs: [Epoch] = []
    /// Whether some removed device may hold the newest key: a removal no
    /// rekey has followed yet. A member that sees this makes a new key.
    public internal(set) var needsRekey = false

    /// Whether `peer` is a member.
    public func isMember(_ peer: PeerID) -> Bool { members[peer] != nil }
    /// Whether `peer` was removed.
    public func isRemoved(_ peer: PeerID) -> Bool { removed[peer] != nil }
    /// The newest key's epoch (0: the first key).
    public var currentEpoch: UInt64 { UInt64(epochs.count) }
}

/// A circle's membership records: a grow-only set of signed records, each
/// naming the records its author knew (its parents), and the
/// ``MembershipView`` derived from them. Any two replicas holding the same
/// records derive the same view, whatever order the records came in.
///
/// The rules, applied to the records in a fixed order (by depth in the
/// parent graph, then by hash):
/// - A founder is a member: its record proves the circle's first key, and
///   founding is open until the first rekey (a founding record counts only
///   when no rekey exists or it is an ancestor of one).
/// - A member may invite, admit (once per invitation, which must not be
///   revoked), remove and rekey. A record whose author is not a member at
///   that point changes nothing.
/// - A removal wins: a removed device is never a member again, whatever
///   admits it. Of its own records, only those some removal of it had
///   seen (its ancestors) count; the rest are void, wherever they sit in
///   the order.
/// - A rekey counts when its epoch is one more than the last counted one;
///   of two rekeys of one epoch, the first in the order counts.
public struct CircleMembership: Sendable {
    /// The circle.
    public let circle: CircleID
    /// The circle's first key: founding records prove it.
    public let firstKey: CircleKey
    /// Every record held, by hash.
    public private(set) var records: [RecordHash: MembershipRecord] = [:]
    /// Records whose parents are not all held yet.
    private var waiting: [RecordHash: MembershipRecord] = [:]
    /// The records no held record names as a parent.
    public private(set) var heads: Set<RecordHash> = []
    /// Who is in the circle.
    public private(set) var view = MembershipView()
    private var depth: [RecordHash: Int] = [:]

    /// The most records a circle holds; a peer sending more is refused. A
    /// family's circle makes a few dozen; the bound keeps deriving the view
    /// (quadratic in the records at worst) cheap whatever a member sends.
    public static let recordLimit = 4_096
    /// The most records that may wait for their parents.
    public static let waitingLimit = 1_024
    /// The most members a rekey may seal the circle's new key to: far more
    /// devices than a family has, and a rekey of that many is 112 KiB. One
    /// sealed to more (tens of thousands of made-up recipients, megabytes a
    /// record) is refused, so that no member can make every hello carry
    /// megabytes.
    public static let rekeyRecipientLimit = 1_024

    /// An empty membership of the circle whose first key is `firstKey`.
    public init(firstKey: CircleKey) {
        self.firstKey = firstKey
        circle = CircleID(firstKey: firstKey)
    }

    /// Why a record was refused.
    public enum Refusal: String, Error, Sendable, Equatable {
        /// The signature is not the author's.
        case badSignature
        /// The record is another circle's.
        case otherCircle
        /// Too many records are waiting for their parents.
        case waitingLimit
        /// The circle holds the most records it may.
        case recordLimit
        /// A rekey sealed to more than ``CircleMembership/rekeyRecipientLimit`` members.
        case oversized
    }

    /// What an insert did.
    public struct InsertOutcome: Sendable {
        /// Records added (waiting ones now complete included), in the order added.
        public var added: [MembershipRecord] = []
        /// Records held back for a missing parent.
        public var waiting = 0
        /// Records already held.
        public var duplicates = 0
        /// Records refused.
        public var refused: [Refusal] = []
    }

    /// Adds records (checking each signature and circle), then derives the view again.
    @discardableResult
    public mutating func insert(_ incoming: [MembershipRecord]) -> InsertOutcome {
        var outcome = InsertOutcome()
        for record in incoming {
            if records[record.hash] != nil || waiting[record.hash] != nil {
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
            if case .rekey(_, _, let sealed) = record.change, sealed.count > Self.rekeyRecipientLimit {
                outcome.refused.append(.oversized)
                continue
            }
            guard records.count + waiting.count < Self.recordLimit else {
                outcome.refused.append(.recordLimit)
                continue
            }
            if record.parents.allSatisfy({ records[$0] != nil }) {
                add(record, &outcome)
                drainWaiting(&outcome)
            } else if waiting.count < Self.waitingLimit {
                waiting[record.hash] = record
                outcome.waiting += 1
            } else {
                outcome.refused.append(.waitingLimit)
            }
        }
        if !outcome.added.isEmpty { view = derive() }
        return outcome
    }

    /// Makes, signs and adds a record of `change` by `identity`, whose
    /// parents are the current heads.
    @discardableResult
    public mutating func record(_ change: MembershipChange, by identity: SigningIdentity, atMillis now: UInt64) -> MembershipRecord {
        let record = MembershipRecord(signing: identity, circle: circle, madeMillis: now, parents: heads, change: change)
        insert([record])
        return record
    }

    /// Every held record, parents before children: the order to send them in.
    public var ordered: [MembershipRecord] {
        records.values.sorted { (depth[$0.hash] ?? 0, $0.hash) < (depth[$1.hash] ?? 0, $1.hash) }
    }

    private mutating func add(_ record: MembershipRecord, _ outcome: inout InsertOutcome) {
        records[record.hash] = record
        depth[record.hash] = (record.parents.compactMap { depth[$0] }.max() ?? -1) + 1
        for p in record.parents { heads.remove(p) }
        heads.insert(record.hash)
        outcome.added.append(record)
    }

    private mutating func drainWaiting(_ outcome: inout InsertOutcome) {
        var progress = true
        while progress {
            progress = false
            for (hash, record) in waiting where record.parents.allSatisfy({ records[$0] != nil }) {
                waiting[hash] = nil
                add(record, &outcome)
                outcome.waiting = max(0, outcome.waiting - 1)
                progress = true
            }
        }
    }

    // MARK: Deriving the view

    /// Every record `hash` descends from (not itself).
    private func ancestors(of hash: RecordHash) -> Set<RecordHash> {
        var seen: Set<RecordHash> = []
        var stack = records[hash]?.parents ?? []
        while let h = stack.popLast() {
            guard seen.insert(h).inserted else { continue }
            stack += records[h]?.parents ?? []
        }
        return seen
    }

    private func derive() -> MembershipView {
        let order = ordered
        var allowed: [PeerID: Set<RecordHash>] = [:]
        var rekeyAncestors: Set<RecordHash> = []
        var anyRekey = false
        var ancestorsOf: [RecordHash: Set<RecordHash>] = [:]
        for record in order {
            switch record.change {
            case .remove(let subject, _) where subject != record.author:
                let a = ancestors(of: record.hash)
                ancestorsOf[record.hash] = a
                allowed[subject, default: []].formUnion(a)
            case .rekey:
                let a = ancestors(of: record.hash)
                ancestorsOf[record.hash] = a
                rekeyAncestors.formUnion(a)
                anyRekey = true
            default:
                break
            }
        }
        var void: Set<RecordHash> = []
        // Each pass either finishes or voids at least one more record, so
        // this ends within one pass per record.
        for _ in 0...order.count {
            var view = MembershipView()
            var applied: [PeerID: [RecordHash]] = [:]
            var removals: [RecordHash] = []
            var voided = false
            pass: for record in order where !void.contains(record.hash) {
                let author = record.author
                if view.removed[author] != nil, !(allowed[author]?.contains(record.hash) ?? false) {
                    void.insert(record.hash)
                    continue
                }
                if case .found(let proof) = record.change {
                    if view.members[author] == nil, view.removed[author] == nil,
                        firstKey.isValidMembershipProof(proof, for: author), !anyRekey || rekeyAncestors.contains(record.hash) {
                        view.members[author] = .init(peer: author, name: "", admittedBy: nil, invitation: nil, joinedMillis: record.madeMillis)
                        applied[author, default: []].append(record.hash)
                    }
                    continue
                }
                guard view.members[author] != nil else { continue }
                applied[author, default: []].append(record.hash)
                switch record.change {
                case .found:
                    break
                case .admit(let subject, let invitation, let name):
                    guard view.removed[subject] == nil, view.members[subject] == nil,
                        let invite = view.invitations[invitation], invite.state == .open
                    else { continue }
                    view.members[subject] = .init(
                        peer: subject, name: name, admittedBy: author, invitation: invitation, joinedMillis: record.madeMillis)
                    view.invitations[invitation]?.state = .used(by: subject)
                case .remove(let subject, let kept):
                    guard subject != author else { continue }
                    removals.append(record.hash)
                    if var existing = view.removed[subject] {
                        existing.kept.merge(kept, uniquingKeysWith: max)
                        view.removed[subject] = existing
                        continue
                    }
                    view.removed[subject] = .init(peer: subject, removedBy: author, removedMillis: record.madeMillis, kept: kept)
                    view.members[subject] = nil
                    let outside = (applied[subject] ?? []).filter { !(allowed[subject]?.contains($0) ?? false) }
                    if !outside.isEmpty {
                        void.formUnion(outside)
                        voided = true
                        break pass
                    }
                case .rekey(let epoch, let check, let sealed):
                    guard epoch == view.currentEpoch + 1 else { continue }
                    view.epochs.append(.init(epoch: epoch, record: record.hash, check: check, sealed: sealed))
                case .invite(let key, let expires):
                    guard view.invitations[key] == nil else { continue }
                    view.invitations[key] = .init(key: key, madeBy: author, madeMillis: record.madeMillis, expiresMillis: expires, state: .open)
                case .revoke(let key):
                    guard view.invitations[key]?.state == .open else { continue }
                    view.invitations[key]?.state = .revoked(by: author)
                }
            }
            if voided { continue }
            for peer in view.removed.keys { view.members[peer] = nil }
            // A removal that the newest key's rekey had not seen: the
            // removed device may hold that key.
            let newest = view.epochs.last.flatMap { ancestorsOf[$0.record] } ?? []
            view.needsRekey = removals.contains { !newest.contains($0) }
            return view
        }
        return MembershipView()
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
