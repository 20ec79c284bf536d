import SweeperCrypto
import SweeperSync

/// Who was in a circle by the records of version 1 (``LegacyRecord``),
/// derived once, by that version's rules, when a circle made before roles
/// is migrated: the start the circle's records of version 2 build on.
///
/// Version 1 had no roles: every founder could do everything. So the
/// founder whose founding record is earliest (by its clock, then hash)
/// becomes the circle's **founder**, the other founders become **admins**
/// (they could remove before, and still can), and the devices admitted by
/// invitation become **members**. Removed devices stay removed; the keys
/// and open invitations carry over.
public struct LegacyRoster: Sendable, Equatable {
    /// A device that was a member, with its role in the migrated circle.
    public struct Entry: Sendable, Equatable {
        public let peer: PeerID
        public let role: Role
        public let name: String
        public let admittedBy: PeerID?
        public let invitation: PeerID?
        public let joinedMillis: UInt64
    }

    /// The members, most senior first (the founder first).
    public internal(set) var members: [Entry] = []
    /// The removed devices, with what each removal kept, and by whom.
    public internal(set) var removed: [PeerID: MembershipView.Removal] = [:]
    /// The invitations, as version 1 left them.
    public internal(set) var invitations: [PeerID: MembershipView.Invitation] = [:]
    /// The keys after the first.
    public internal(set) var epochs: [MembershipView.Epoch] = []
    /// Whether a removed device may hold the newest key.
    public internal(set) var needsRekey = false
    /// The records it was derived from (kept and sent, so that a device
    /// admitted later starts from the same roster).
    public internal(set) var records: [LegacyRecord] = []

    /// The most records of version 1 a circle migrates: far more than any
    /// family's circle made (a few dozen), and a bound on the cost of
    /// version 1's derivation, which is cubic at worst.
    public static let recordLimit = 512

    public static func == (a: LegacyRoster, b: LegacyRoster) -> Bool {
        a.records.map(\.hash).sorted() == b.records.map(\.hash).sorted()
    }

    /// An empty roster (a circle made with roles).
    public init() {}

    /// The roster the records of version 1 give, under the first key
    /// `firstKey`. Records of another circle, with a bad signature or
    /// beyond ``recordLimit`` are passed over.
    public init(records input: [LegacyRecord], firstKey: CircleKey) {
        let circle = CircleID(firstKey: firstKey)
        var held: [RecordHash: LegacyRecord] = [:]
        for record in input where record.circle == circle && held.count < Self.recordLimit && record.hasValidSignature {
            held[record.hash] = record
        }
        // Only records whose ancestors are all held.
        var depth: [RecordHash: Int] = [:]
        var progress = true
        while progress {
            progress = false
            for (hash, record) in held where depth[hash] == nil {
                let parents = record.parents.map { depth[$0] }
                guard !parents.contains(where: { $0 == nil }) else { continue }
                depth[hash] = (parents.compactMap { $0 }.max() ?? -1) + 1
                progress = true
            }
        }
        let order = held.values.filter { depth[$0.hash] != nil }.sorted { (depth[$0.hash] ?? 0, $0.hash) < (depth[$1.hash] ?? 0, $1.hash) }
        records = order
        derive(order, held: held, firstKey: firstKey)
    }

    private mutating func derive(_ order: [LegacyRecord], held: [RecordHash: LegacyRecord], firstKey: CircleKey) {
        func ancestors(of hash: RecordHash) -> Set<RecordHash> {
            var seen: Set<RecordHash> = []
            var stack = held[hash]?.parents ?? []
            while let h = stack.popLast() {
                guard seen.insert(h).inserted else { continue }
                stack += held[h]?.parents ?? []
            }
            return seen
        }
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
        struct Member { let peer: PeerID; let name: String; let admittedBy: PeerID?; let invitation: PeerID?; let joined: UInt64; let founded: RecordHash? }
        var void: Set<RecordHash> = []
        for _ in 0...order.count {
            var members: [PeerID: Member] = [:]
            var removed: [PeerID: MembershipView.Removal] = [:]
            var invitations: [PeerID: MembershipView.Invitation] = [:]
            var epochs: [MembershipView.Epoch] = []
            var applied: [PeerID: [RecordHash]] = [:]
            var removals: [RecordHash] = []
            var voided = false
            pass: for record in order where !void.contains(record.hash) {
                let author = record.author
                if removed[author] != nil, !(allowed[author]?.contains(record.hash) ?? false) {
                    void.insert(record.hash)
                    continue
                }
                if case .found(let proof) = record.change {
                    if members[author] == nil, removed[author] == nil, firstKey.isValidMembershipProof(proof, for: author),
                        !anyRekey || rekeyAncestors.contains(record.hash)
                    {
                        members[author] = Member(peer: author, name: "", admittedBy: nil, invitation: nil, joined: record.madeMillis, founded: record.hash)
                        applied[author, default: []].append(record.hash)
                    }
                    continue
                }
                guard members[author] != nil else { continue }
                applied[author, default: []].append(record.hash)
                switch record.change {
                case .found:
                    break
                case .admit(let subject, let invitation, let name):
                    guard removed[subject] == nil, members[subject] == nil, invitations[invitation]?.state == .open else { continue }
                    members[subject] = Member(peer: subject, name: name, admittedBy: author, invitation: invitation, joined: record.madeMillis, founded: nil)
                    invitations[invitation]?.state = .used(by: subject)
                case .remove(let subject, let kept):
                    guard subject != author else { continue }
                    removals.append(record.hash)
                    if var existing = removed[subject] {
                        existing.kept.merge(kept, uniquingKeysWith: max)
                        removed[subject] = existing
                        continue
                    }
                    removed[subject] = MembershipView.Removal(peer: subject, removedBy: author, removedMillis: record.madeMillis, through: 0, kept: kept)
                    members[subject] = nil
                    let outside = (applied[subject] ?? []).filter { !(allowed[subject]?.contains($0) ?? false) }
                    if !outside.isEmpty {
                        void.formUnion(outside)
                        voided = true
                        break pass
                    }
                case .rekey(let epoch, let check, let sealed):
                    guard epoch == UInt64(epochs.count) + 1 else { continue }
                    epochs.append(.init(epoch: epoch, record: record.hash, madeMillis: record.madeMillis, check: check, sealed: sealed))
                case .invite(let key, let expires):
                    guard invitations[key] == nil else { continue }
                    invitations[key] = .init(key: key, madeBy: author, madeMillis: record.madeMillis, expiresMillis: expires, state: .open)
                case .revoke(let key):
                    guard invitations[key]?.state == .open else { continue }
                    invitations[key]?.state = .revoked(by: author)
                }
            }
            if voided { continue }
            for peer in removed.keys { members[peer] = nil }
            let newest = epochs.last.flatMap { ancestorsOf[$0.record] } ?? []
            needsRekey = removals.contains { !newest.contains($0) }
            self.removed = removed
            self.invitations = invitations
            self.epochs = epochs
            // The earliest founder founds; the other founders are admins, then the admitted members.
            let founders = members.values.filter { $0.founded != nil }.sorted {
                $0.joined != $1.joined ? $0.joined < $1.joined : ($0.founded?.bytes ?? []).lexicographicallyPrecedes($1.founded?.bytes ?? [])
            }
            let admitted = members.values.filter { $0.founded == nil }.sorted { ($0.joined, $0.peer) < ($1.joined, $1.peer) }
            self.members =
                founders.enumerated().map { i, m in
                    Entry(peer: m.peer, role: i == 0 ? .founder : .admin, name: m.name, admittedBy: nil, invitation: nil, joinedMillis: m.joined)
                }
                + admitted.map {
                    Entry(peer: $0.peer, role: .member, name: $0.name, admittedBy: $0.admittedBy, invitation: $0.invitation, joinedMillis: $0.joined)
                }
            return
        }
    }
}
