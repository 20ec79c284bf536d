import SweeperConventions
import SweeperCrypto
import SweeperSync

/// The rules that derive a circle's ``MembershipView`` from its records.
///
/// Authority, not order, decides. Every record sits at a fixed place in
/// its author's chain (its `seq`); no rule looks at the parents an author
/// chose, at depths or at clocks.
///
/// - **Standing.** A device's standing at a place in its chain comes from
///   the changes that name it (admit, promote, remove), each taking effect
///   after the subject's record its `through` names. Taken in order of
///   `through` (at one place: admission, then promotion, then removal), an
///   admission makes the device a member, a promotion makes a member an
///   admin, a removal takes it out; an admission after a removal brings it
///   back. A record counts only when its author stands as a member (of any
///   role) at the record's place: so a removed device's records after its
///   removal are void however it writes them, and those before it stand.
/// - **Who may do what.** Any member invites, and admits with its own
///   invitations (an invitation is used once, at its maker: the first
///   admission in the maker's chain). The founder and admins promote
///   members and remove devices, never one as senior as they are or more
///   (``Seniority``: role, then lineage); the founder is never removed. A
///   device admitted again after a removal must be admitted by an admin.
///   The maker or an admin revokes an invitation; one already used stays
///   used. Any member rekeys.
/// - **Invitations off.** The founder and admins turn a less senior
///   member's invitations off and on again. While off, the member's
///   invitations admit nobody and it makes no new ones (its records of
///   either kind are void). Only a device as senior as the one that turned
///   them off, or more, turns them on again; an admission or a promotion
///   starts afresh (admins always invite). Of switches at one place of the
///   member's chain, the most senior author's last one stands.
/// - **No removal undoes its own authority.** A removal of the device that
///   admitted or promoted its author takes effect no earlier than that
///   admission or promotion.
/// - **A cut names records, not a place.** A change that names a subject
///   (an admission, a promotion, an invitations switch, a removal) takes
///   effect after the newest of the subject's records its own record
///   names, directly or not (its *pinned* records; the `through` it
///   writes only caps that place). Of the subject's records at or below
///   that place only the pinned ones count: any other was not seen by the
///   change's author, so it was written beside the real chain.
/// - **A fork voids the forker.** Two records by one author at one place
///   prove bad faith: from the first such place on, the author's records
///   count for nothing, except those a cut of it pins (what its remover
///   held stands as it stood).
/// - **Order of evaluation.** Devices are taken in order of lineage (the
///   founder, then each device after the one that admitted it), each
///   device's records in chain order. A change written by a device taken
///   later (an admin admitted after the member it removes) is known from
///   the previous round; rounds repeat until nothing changes (at most
///   ``roundLimit``), so the outcome is a function of the records alone.
/// - **Keys.** A rekey counts when its epoch is one more than the last
///   counted; of two rekeys of one epoch the more senior author's counts.
struct MembershipDerivation {
    let legacy: LegacyRoster
    let records: [RecordHash: MembershipRecord]
    let chains: [PeerID: [UInt64: [RecordHash]]]
    let root: RecordHash?
    /// Per record about a subject, the subject's records and the switches
    /// of its invitations among the record's ancestors (``CircleMembership``
    /// finds them once, as each record is added).
    let pins: [RecordHash: Set<RecordHash>]
    /// What one derivation computes once: ancestors, cuts and forks.
    let memo = Memo()

    /// The most rounds of evaluation.
    static let roundLimit = 8

    /// A change that names a device, as it takes effect.
    struct Event: Equatable {
        /// At one place, an admission, then a promotion, then a removal,
        /// then an admission again (an admin's, of a device whose removal
        /// the admission record names, directly or not).
        enum Kind: Int { case admit = 0, promote = 1, remove = 2, readmit = 3, invitesOff = 4, invitesOn = 5 }
        var kind: Kind
        var through: UInt64
        /// The author (`nil`: the founding, or the migrated roster).
        var author: PeerID?
        var authorSeq: UInt64 = 0
        var record: RecordHash?
        var role: Role = .member
        var lineage: [UInt64] = []
        var name = ""
        var invitation: PeerID?
        var millis: UInt64 = 0
        var kept: [GameID: UInt64] = [:]
        /// The author's seniority when it wrote the change (invitations off and on).
        var seniority: Seniority?
        /// The subject's records the change's record names (see ``Cut``).
        var pinned: Set<RecordHash> = []
        /// An admission's: the invitations switches of the subject that
        /// its record names, directly or not (it starts afresh after them,
        /// even at one place).
        var supersedes: Set<RecordHash> = []

        /// Whether the change is another device's record about the subject
        /// (so a cut of its chain), not the founding or a migrated roster's.
        var isCut: Bool { record != nil && author != nil }

        /// Invitations off and on rank alike: at one place, the least
        /// senior author's come first and each author's in its chain's
        /// order, so that the most senior author's last word stands.
        private var rank: Int { min(kind.rawValue, Kind.invitesOff.rawValue) }

        func precedes(_ other: Event) -> Bool {
            if through != other.through { return through < other.through }
            if rank != other.rank { return rank < other.rank }
            if kind.rawValue >= Kind.invitesOff.rawValue, let a = seniority, let b = other.seniority {
                if a != b { return b < a }
                if authorSeq != other.authorSeq { return authorSeq < other.authorSeq }
            }
            return (record?.bytes ?? []).lexicographicallyPrecedes(other.record?.bytes ?? [])
        }
    }

    /// A device's standing at a place in its chain.
    struct Standing {
        var role: Role?
        var admission: Event?
        var promotion: Event?
        var removal: Event?
        /// The change that turned the device's invitations off, while they are.
        var invitesOff: Event?

        /// Whether the device may invite and admit with its invitations.
        var invites: Bool { role != nil && (role != .member || invitesOff == nil) }

        /// Takes the next event, in order (``Event/precedes(_:)``).
        mutating func take(_ e: Event) {
            switch e.kind {
            case .admit, .readmit:
                guard role == nil else { return }
                role = e.role
                admission = e
                removal = nil
                invitesOff = nil
            case .promote:
                guard role == .member else { return }
                role = .admin
                promotion = e
                invitesOff = nil
            case .invitesOff:
                guard role == .member, invitesOff == nil, !(e.record.map { admission?.supersedes.contains($0) ?? false } ?? false) else { return }
                invitesOff = e
            case .invitesOn:
                // Only as senior a device as the one that turned them off, or more.
                guard role == .member, let off = invitesOff, let by = e.seniority, let offBy = off.seniority, by <= offBy else { return }
                invitesOff = nil
            case .remove:
                // The founder is never removed; of several removals, the first cuts.
                guard role != .founder, role != nil || removal == nil else { return }
                role = nil
                promotion = nil
                removal = e
                invitesOff = nil
            }
        }
    }

    static func standing(_ events: [Event], before position: UInt64) -> Standing {
        standing(sorted: events.sorted(by: { $0.precedes($1) }), before: position)
    }

    /// ``standing(_:before:)`` of events already in order (``Event/precedes(_:)``).
    static func standing(sorted events: [Event], before position: UInt64) -> Standing {
        var s = Standing()
        for e in events where e.through < position { s.take(e) }
        return s
    }

    struct Invitation {
        var maker: PeerID
        var madeMillis: UInt64
        var expires: UInt64
        var revokedByMaker = false
    }

    /// One round's outcome.
    struct Round {
        var events: [PeerID: [Event]] = [:]
        var lineage: [PeerID: [UInt64]] = [:]
        var invitations: [PeerID: Invitation] = [:]
        var used: [PeerID: PeerID] = [:]
        var revokes: [(key: PeerID, by: PeerID)] = []
        var rekeys: [(record: MembershipRecord, role: Role)] = []
        var taken: Set<PeerID> = []
    }

    /// The changes the founding and the migrated roster make.
    func baseEvents() -> (events: [PeerID: [Event]], lineage: [PeerID: [UInt64]]) {
        var events: [PeerID: [Event]] = [:]
        var lineage: [PeerID: [UInt64]] = [:]
        if let root, let r = records[root] {
            events[r.author] = [Event(kind: .admit, through: 0, author: nil, record: root, role: .founder, millis: r.madeMillis)]
            lineage[r.author] = []
        }
        for (i, m) in legacy.members.enumerated() where events[m.peer] == nil {
            let l: [UInt64] = m.role == .founder ? [] : [0, UInt64(i)]
            events[m.peer] = [
                Event(
                    kind: .admit, through: 0, author: m.admittedBy, role: m.role, lineage: l, name: m.name,
                    invitation: m.invitation, millis: m.joinedMillis)
            ]
            lineage[m.peer] = l
        }
        for (peer, removal) in legacy.removed where events[peer] == nil {
            events[peer] = [Event(kind: .remove, through: 0, author: removal.removedBy, millis: removal.removedMillis, kept: removal.kept)]
        }
        return (events, lineage)
    }

    mutating func run() -> MembershipView {
        var previous: Round?
        var round = Round()
        for _ in 0..<Self.roundLimit {
            round = sweep(previous: previous)
            if let previous, previous.events == round.events, previous.lineage == round.lineage { break }
            previous = round
        }
        return view(from: round)
    }

    /// One round: every device in order of lineage, its records in chain order.
    func sweep(previous: Round?) -> Round {
        var round = Round()
        (round.events, round.lineage) = baseEvents()
        // Room at once: a record makes one invitation at most, and rounds
        // hold much the same.
        round.invitations.reserveCapacity(legacy.invitations.count + records.count)
        round.used.reserveCapacity(previous?.used.count ?? 0)
        round.taken.reserveCapacity(previous?.taken.count ?? 0)
        for (key, invitation) in legacy.invitations where invitation.state == .open {
            round.invitations[key] = Invitation(maker: invitation.madeBy, madeMillis: invitation.madeMillis, expires: invitation.expiresMillis)
        }
        for (key, invitation) in legacy.invitations {
            if case .used(let by) = invitation.state { round.used[key] = by }
        }
        // Devices to take, most senior lineage last (popLast takes the next).
        var queue: [(lineage: [UInt64], peer: PeerID)] = round.lineage.map { ($0.value, $0.key) }
        func before(_ a: (lineage: [UInt64], peer: PeerID), _ b: (lineage: [UInt64], peer: PeerID)) -> Bool {
            a.lineage != b.lineage ? b.lineage.lexicographicallyPrecedes(a.lineage) : b.peer < a.peer
        }
        queue.sort(by: before)

        // A change by a device taken later this round is known from the previous round.
        var current: PeerID?
        func events(for peer: PeerID) -> [Event] {
            var out = round.events[peer] ?? []
            for e in previous?.events[peer] ?? [] {
                if let author = e.author, e.record != nil, author != current, !round.taken.contains(author) { out.append(e) }
            }
            return out
        }
        func lineage(of peer: PeerID) -> [UInt64] {
            round.lineage[peer] ?? previous?.lineage[peer] ?? [UInt64.max]
        }

        while let (_, author) = queue.popLast() {
            guard !round.taken.contains(author) else { continue }
            current = author
            let authorLineage = lineage(of: author)
            let fork = memo.firstFork(of: author, in: chains)
            // The author's events, in order: found again only when a record
            // of its own chain names it (this round's events only grow). Its
            // standing before each place folds them in as the place grows.
            var authorEvents: [Event] = []
            var authorEventsKnown = false
            var standing = Standing()
            var folded = 0
            /// Adds a change that names `subject` to this round.
            func add(naming subject: PeerID, _ event: Event) {
                round.events[subject, default: []].append(event)
                if subject == author { authorEventsKnown = false }
            }
            for seq in (chains[author]?.keys ?? [:].keys).sorted() {
                let atSeq = chains[author]?[seq] ?? []
                for hash in atSeq.count > 1 ? atSeq.sorted() : atSeq {
                    guard let record = records[hash] else { continue }
                    if !authorEventsKnown {
                        authorEvents = events(for: author).sorted(by: { $0.precedes($1) })
                        authorEventsKnown = true
                        standing = Standing()
                        folded = 0
                    }
                    while folded < authorEvents.count, authorEvents[folded].through < seq {
                        standing.take(authorEvents[folded])
                        folded += 1
                    }
                    guard Self.counts(hash, at: seq, fork: fork, events: authorEvents) else { continue }
                    guard let role = standing.role else { continue }
                    let me = Seniority(role: role, lineage: authorLineage, peer: author)
                    switch record.change {
                    case .found:
                        break
                    case .invite(let key, let expires):
                        if standing.invites, round.invitations[key] == nil, round.used[key] == nil {
                            round.invitations[key] = Invitation(maker: author, madeMillis: record.madeMillis, expires: expires)
                        }
                    case .revoke(let key):
                        if round.invitations[key]?.maker == author { round.invitations[key]?.revokedByMaker = true }
                        round.revokes.append((key, author))
                        if role > .admin, round.invitations[key]?.maker != author { round.revokes.removeLast() }
                    case .admit(let subject, let key, let name, let claimed):
                        guard standing.invites, let invitation = round.invitations[key], invitation.maker == author,
                            !invitation.revokedByMaker, round.used[key] == nil, subject != author
                        else { continue }
                        let cut = self.cut(of: subject, by: hash, claimed: claimed)
                        let through = cut.place
                        let subjectEvents = events(for: subject)
                        guard Self.standing(subjectEvents, before: through + 1).role == nil else { continue }
                        // Admitting again a device whose removal this record follows (names, directly or not).
                        let again = subjectEvents.contains { e in
                            e.kind == .remove && e.through <= through && (e.record.map { isAncestor($0, of: hash) } ?? true)
                        }
                        guard !again || role <= .admin else { continue }
                        round.used[key] = subject
                        let l = authorLineage + [seq]
                        let switches = subjectEvents.filter { $0.kind == .invitesOff || $0.kind == .invitesOn }.compactMap(\.record)
                        let named = switches.isEmpty ? [] : pins[hash] ?? ancestors(of: hash)
                        add(
                            naming: subject,
                            Event(
                                kind: again ? .readmit : .admit, through: through, author: author, authorSeq: seq, record: hash, lineage: l,
                                name: name, invitation: key, millis: record.madeMillis, pinned: cut.pinned,
                                supersedes: Set(switches.filter(named.contains))))
                        if !round.taken.contains(subject), round.lineage[subject].map({ l.lexicographicallyPrecedes($0) }) ?? true {
                            round.lineage[subject] = l
                            let entry = (lineage: l, peer: subject)
                            let at = queue.firstIndex { !before($0, entry) } ?? queue.endIndex
                            queue.insert(entry, at: at)
                        }
                    case .promote(let subject, let claimed):
                        guard role <= .admin else { continue }
                        let cut = self.cut(of: subject, by: hash, claimed: claimed)
                        let through = cut.place
                        let target = Self.standing(events(for: subject), before: through + 1)
                        guard target.role == .member, me < Seniority(role: .member, lineage: lineage(of: subject), peer: subject) else { continue }
                        add(
                            naming: subject,
                            Event(
                                kind: .promote, through: through, author: author, authorSeq: seq, record: hash, millis: record.madeMillis,
                                pinned: cut.pinned))
                    case .invitations(let subject, let claimed, let allowed):
                        guard role <= .admin else { continue }
                        let cut = self.cut(of: subject, by: hash, claimed: claimed)
                        let through = cut.place
                        let target = Self.standing(events(for: subject), before: through + 1)
                        guard target.role == .member, me < Seniority(role: .member, lineage: lineage(of: subject), peer: subject) else { continue }
                        add(
                            naming: subject,
                            Event(
                                kind: allowed ? .invitesOn : .invitesOff, through: through, author: author, authorSeq: seq, record: hash,
                                millis: record.madeMillis, seniority: me, pinned: cut.pinned))
                    case .remove(let subject, let claimed, let kept):
                        guard role <= .admin, subject != author else { continue }
                        var cut = self.cut(of: subject, by: hash, claimed: claimed)
                        let through = cut.place
                        let target = Self.standing(events(for: subject), before: through + 1)
                        guard target.role != .founder,
                            me < Seniority(role: target.role ?? .member, lineage: lineage(of: subject), peer: subject)
                        else { continue }
                        // Never before the admission or promotion that gives the author its standing.
                        var effective = through
                        for grant in [standing.admission, standing.promotion] {
                            guard let grant, grant.author == subject, grant.authorSeq > effective, let granting = grant.record else { continue }
                            effective = grant.authorSeq
                            cut.pinned.formUnion(chain(through: granting))
                        }
                        add(
                            naming: subject,
                            Event(
                                kind: .remove, through: effective, author: author, authorSeq: seq, record: hash, millis: record.madeMillis,
                                kept: kept, pinned: cut.pinned))
                    case .rekey:
                        round.rekeys.append((record, role))
                    }
                }
            }
            round.taken.insert(author)
        }
        return round
    }

    /// The view a round gives.
    func view(from round: Round) -> MembershipView {
        var view = MembershipView()
        view.invitations.reserveCapacity(legacy.invitations.count + round.invitations.count)
        var removalRecords: [RecordHash] = []
        for (peer, events) in round.events {
            let standing = Self.standing(events, before: .max)
            if let role = standing.role, let admission = standing.admission {
                view.members[peer] = MembershipView.Member(
                    peer: peer, role: role, name: PlayerName.cleaned(admission.name), admittedBy: admission.author, invitation: admission.invitation,
                    joinedMillis: admission.millis, lineage: round.lineage[peer] ?? admission.lineage, promotedBy: standing.promotion?.author,
                    invitationsOffBy: standing.invitesOff?.author, readmission: Self.readmission(admission, events))
            } else if let removal = standing.removal {
                var kept: [GameID: UInt64] = [:]
                var by = removal
                for e in events where e.kind == .remove {
                    kept.merge(e.kept, uniquingKeysWith: max)
                    if let record = e.record { removalRecords.append(record) }
                    // The most senior remover is named.
                    if let a = e.author, let b = by.author, let sa = view.members[a]?.seniority ?? seniority(a, round),
                        let sb = view.members[b]?.seniority ?? seniority(b, round), sa < sb
                    {
                        by = e
                    }
                }
                view.removed[peer] = MembershipView.Removal(
                    peer: peer, removedBy: by.author ?? peer, removedMillis: by.millis, through: removal.through, kept: kept)
            }
        }
        // Invitations.
        for (key, invitation) in legacy.invitations { view.invitations[key] = invitation }
        for (key, invitation) in round.invitations where view.invitations[key] == nil {
            view.invitations[key] = MembershipView.Invitation(
                key: key, madeBy: invitation.maker, madeMillis: invitation.madeMillis, expiresMillis: invitation.expires, state: .open)
        }
        for (key, subject) in round.used { view.invitations[key]?.state = .used(by: subject) }
        for revoke in round.revokes where view.invitations[revoke.key]?.state == .open {
            view.invitations[revoke.key]?.state = .revoked(by: revoke.by)
        }
        for (key, invitation) in view.invitations where invitation.state == .open {
            if let removal = view.removed[invitation.madeBy] { view.invitations[key]?.state = .revoked(by: removal.removedBy) }
        }
        // Keys.
        view.epochs = legacy.epochs
        let rekeys = round.rekeys.compactMap { entry -> (epoch: UInt64, seniority: Seniority, record: MembershipRecord)? in
            guard case .rekey(let epoch, _, _) = entry.record.change else { return nil }
            let lineage = round.lineage[entry.record.author] ?? [UInt64.max]
            return (epoch, Seniority(role: entry.role, lineage: lineage, peer: entry.record.author), entry.record)
        }.sorted { a, b in
            if a.epoch != b.epoch { return a.epoch < b.epoch }
            if a.seniority != b.seniority { return a.seniority < b.seniority }
            return a.record.hash < b.record.hash
        }
        for rekey in rekeys {
            guard case .rekey(let epoch, let check, let sealed) = rekey.record.change, epoch == view.currentEpoch + 1 else { continue }
            view.epochs.append(.init(epoch: epoch, record: rekey.record.hash, madeMillis: rekey.record.madeMillis, check: check, sealed: sealed))
        }
        let removed = Set(view.removed.keys)
        let stillRemoved = removalRecords.filter { records[$0].flatMap(\.change.subject).map(removed.contains) ?? false }
        if let newest = view.epochs.last, records[newest.record] != nil {
            let seen = ancestors(of: newest.record)
            view.needsRekey = stillRemoved.contains { !seen.contains($0) }
        } else {
            view.needsRekey = !stillRemoved.isEmpty || (legacy.needsRekey && !legacy.removed.keys.allSatisfy { !removed.contains($0) })
        }
        // Devices that signed two records at one place.
        for author in chains.keys {
            let places = (chains[author] ?? [:]).filter { $0.value.count > 1 }.keys.sorted()
            if !places.isEmpty { view.equivocations[author] = places }
        }
        return view
    }

    /// A member's admission again after a removal, with what its removals kept.
    static func readmission(_ admission: Event, _ events: [Event]) -> MembershipView.Readmission? {
        guard admission.kind == .readmit, let record = admission.record else { return nil }
        var kept: [GameID: UInt64] = [:]
        for e in events where e.kind == .remove && e.through <= admission.through { kept.merge(e.kept, uniquingKeysWith: max) }
        return MembershipView.Readmission(record: record, kept: kept)
    }

    private func seniority(_ peer: PeerID, _ round: Round) -> Seniority? {
        guard let lineage = round.lineage[peer] else { return nil }
        let role = Self.standing(round.events[peer] ?? [], before: .max).role ?? .member
        return Seniority(role: role, lineage: lineage, peer: peer)
    }

    /// Where a change made by `record` about `subject` takes effect, and
    /// which of the subject's records it pins: those `record` names,
    /// directly or not, below any place where it names two; the place is
    /// the newest of them, capped by the `claimed` place the record writes.
    struct Cut: Equatable {
        var place: UInt64
        var pinned: Set<RecordHash>
    }

    func cut(of subject: PeerID, by record: RecordHash, claimed: UInt64) -> Cut {
        guard claimed > 0 else { return Cut(place: 0, pinned: []) }
        let key = MemoKey(record: record, subject: subject)
        if let known = memo.cuts[key] { return known }
        var mine: [(seq: UInt64, hash: RecordHash)] = []
        for h in pins[record] ?? ancestors(of: record) {
            if let r = records[h], r.author == subject { mine.append((r.seq, h)) }
        }
        var atPlace: [UInt64: Int] = [:]
        for m in mine { atPlace[m.seq, default: 0] += 1 }
        if let forked = atPlace.filter({ $0.value > 1 }).keys.min() { mine.removeAll { $0.seq >= forked } }
        let place = min(claimed, mine.map(\.seq).max() ?? 0)
        let cut = Cut(place: place, pinned: Set(mine.filter { $0.seq <= place }.map(\.hash)))
        memo.cuts[key] = cut
        return cut
    }

    /// `hash` and the records before it in its author's chain.
    func chain(through hash: RecordHash) -> Set<RecordHash> {
        var out: Set<RecordHash> = []
        var next: RecordHash? = hash
        while let h = next, out.insert(h).inserted { next = records[h]?.previous }
        return out
    }

    /// Whether an author's record `hash` at `seq` counts: every cut of the
    /// author at or above `seq` pins it, and it is below the author's first
    /// forked place (`fork`) or some cut pins it.
    static func counts(_ hash: RecordHash, at seq: UInt64, fork: UInt64?, events: [Event]) -> Bool {
        var pinned = false
        for e in events where e.isCut {
            if e.pinned.contains(hash) {
                pinned = true
            } else if seq <= e.through {
                return false
            }
        }
        if let fork, seq >= fork { return pinned }
        return true
    }

    /// Whether `ancestor` is among the records `hash` names, directly or not.
    func isAncestor(_ ancestor: RecordHash, of hash: RecordHash) -> Bool {
        var seen: Set<RecordHash> = []
        var stack = records[hash]?.named ?? []
        while let h = stack.popLast() {
            if h == ancestor { return true }
            guard seen.insert(h).inserted else { continue }
            stack += records[h]?.named ?? []
        }
        return false
    }

    /// Every record `hash` names, directly or not.
    func ancestors(of hash: RecordHash) -> Set<RecordHash> {
        if let known = memo.ancestors[hash] { return known }
        var seen: Set<RecordHash> = []
        defer { memo.ancestors[hash] = seen }
        var stack = records[hash]?.named ?? []
        while let h = stack.popLast() {
            guard seen.insert(h).inserted else { continue }
            stack += records[h]?.named ?? []
        }
        return seen
    }
}

extension MembershipDerivation {
    struct MemoKey: Hashable {
        var record: RecordHash
        var subject: PeerID
    }

    /// What one derivation computes once and every round reads: each cut
    /// record's ancestors and cuts, each author's first forked place.
    final class Memo {
        var ancestors: [RecordHash: Set<RecordHash>] = [:]
        var cuts: [MemoKey: Cut] = [:]
        private var forks: [PeerID: UInt64?] = [:]

        /// The first place of `author`'s chain that holds two records.
        func firstFork(of author: PeerID, in chains: [PeerID: [UInt64: [RecordHash]]]) -> UInt64? {
            if let known = forks[author] { return known }
            let place = chains[author]?.filter { $0.value.count > 1 }.keys.min()
            forks[author] = .some(place)
            return place
        }
    }
}
