import FoundationEssentials
import Logging
import NIOPosix
import SweeperConventions
import SweeperCrypto
import SweeperMembership
import SweeperMessages
import SweeperNet
import SweeperStore
import SweeperSync
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// This daemon's copy of its circle's membership records (see
/// ``CircleMembership``), kept in the store's membership table and in
/// memory. A device founds only a circle it makes (one with no records);
/// a circle made by the release before roles is migrated from its records
/// of version 1 (``LegacyRoster``), which are kept as they are.
final class CircleMembers: Sendable {
    private let store: Store
    private let identity: SigningIdentity
    private let logger: Logger
    /// The membership as readers see it: replaced whole by each writer.
    private let state: Mutex<CircleMembership>
    /// Held by the one writer at a time (see ``write(_:)``).
    private let writer = Mutex<Void>(())
    /// Later circle keys a member handed over at admission (none was sealed to this device).
    private let handed: Mutex<[CircleKey]>
    /// Held in a struct: an optional closure as the mutex's value gains two
    /// conversion thunks each time `withLock` lends it (see `LineDelivery`).
    private struct Observer {
        var body: (@Sendable ([[UInt8]]) async -> Void)?
    }
    private let observer = Mutex(Observer())
    /// How many times the membership changed (see ``generation``).
    private let changes = Atomic<UInt64>(0)

    /// The daemon's clock: the wall time records are signed with and
    /// invitations expire by.
    private let clock: any DaemonClock

    /// The membership of the circle whose first key is `firstKey`, as kept
    /// in `store`; this device founds it when it is not a member.
    init(store: Store, identity: SigningIdentity, firstKey: CircleKey, clock: any DaemonClock = SystemClock(), logger: Logger) {
        self.store = store
        self.identity = identity
        self.clock = clock
        self.logger = logger
        let membership = Self.load(store, firstKey: firstKey, logger: logger)
        state = Mutex(membership)
        handed = Mutex(Self.handedKeys(store, membership.circle))
        foundIfNew()
    }

    private static func handedKeys(_ store: Store, _ circle: CircleID) -> [CircleKey] {
        ((try? store.circleKeys(circle: circle.bytes)) ?? []).compactMap { try? CircleKey(bytes: $0) }
    }

    private static func load(_ store: Store, firstKey: CircleKey, logger: Logger) -> CircleMembership {
        let circle = CircleID(firstKey: firstKey)
        let (legacy, records) = split((try? store.membershipRecords(circle: circle.bytes)) ?? [])
        var membership = CircleMembership(firstKey: firstKey, legacy: legacy)
        let outcome = membership.insert(records)
        if outcome.added.count != records.count {
            logger.warning("some stored membership records did not go back in", metadata: ["kept": "\(outcome.added.count)", "stored": "\(records.count)"])
        }
        if !legacy.isEmpty, records.isEmpty {
            logger.notice(
                "circle migrated to roles", metadata: ["founder": "\(membership.view.founder?.shortDescription ?? "none")", "records": "\(legacy.count)"])
        }
        return membership
    }

    /// Records of both versions, decoded; one that no longer reads is passed
    /// over (a stored record was checked when it came).
    private static func split(_ encoded: [[UInt8]]) -> (legacy: [LegacyRecord], current: [MembershipRecord]) {
        var legacy: [LegacyRecord] = []
        var current: [MembershipRecord] = []
        for bytes in encoded {
            switch try? AnyMembershipRecord(decoding: bytes) {
            case .legacy(let record): legacy.append(record)
            case .current(let record): current.append(record)
            case nil: continue
            }
        }
        return (legacy, current)
    }

    /// Founds the circle when it has no start at all: this device made it.
    /// A device that joined, or whose circle has records, never founds.
    private func foundIfNew() {
        let me = identity.peerID
        let made: MembershipRecord? = write { membership in
            guard !membership.isFounded, membership.records.isEmpty else { return nil }
            return try? membership.record(.found(proof: membership.firstKey.membershipProof(for: me)), by: identity, atMillis: clock.wallMillis)
        }
        if let made { save([made]) }
    }

    /// Moves to the circle a member admitted this device to: its records
    /// (this device's admission among them) and the keys the member handed
    /// over (the first key first). Throws when the answer does not admit
    /// this device to the circle of that first key.
    ///
    /// With `root` (what the invite code pinned), the records must be
    /// rooted there: a founding record, or a migrated roster, other than
    /// the one the code names is refused, whoever answered.
    func adopt(records encoded: [[UInt8]], keys: [CircleKey], root: [UInt8]? = nil) throws -> CircleKey {
        guard let first = keys.first else { throw AdoptionError.noKeys }
        let (legacy, records) = Self.split(encoded)
        var membership = CircleMembership(firstKey: first, legacy: legacy)
        membership.insert(records)
        if let root {
            guard let held = membership.rootCommitment, held.starts(with: root) else { throw AdoptionError.otherRoot }
        }
        guard membership.view.isMember(identity.peerID) else { throw AdoptionError.notAdmitted }
        let kept =
            membership.legacy.records.map { (hash: $0.hash.bytes, record: $0.encoded) }
            + membership.ordered.map { (hash: $0.hash.bytes, record: $0.encoded) }
        try store.saveMembershipRecords(circle: membership.circle.bytes, kept)
        let later = Array(keys.dropFirst())
        try store.saveCircleKeys(circle: membership.circle.bytes, later.map(\.bytes))
        write { $0 = membership }
        handed.withLock { $0 = later }
        return first
    }

    /// Why a member's answer could not be taken.
    enum AdoptionError: Error, CustomStringConvertible {
        case noKeys
        case notAdmitted
        case otherRoot

        var description: String {
            switch self {
            case .noKeys: "the member's answer held no circle key"
            case .notAdmitted: "the member's answer did not admit this device"
            case .otherRoot:
                "the member's records are not of the circle the invite code names (another founding): refused; ask for a code from another member"
            }
        }
    }

    /// Runs `body` on the membership as its one writer. Writers take turns
    /// (``writer``), each on a copy of the membership readers see, which
    /// replaces it at the end, whether or not the body throws (as under one
    /// lock). A reader (``view`` and the like: the event loop asks with
    /// every note a peer sends) so never waits for a writer's work, such
    /// as deriving the view again from a peer's flood of records off the
    /// loop (tens of milliseconds in a full circle), only for the swap.
    private func write<R, E: Error>(_ body: (inout CircleMembership) throws(E) -> R) throws(E) -> R {
        try writer.withLock { _ throws(E) -> R in
            var next = state.withLock { $0 }
            let result: Result<R, E>
            do throws(E) {
                result = .success(try body(&next))
            } catch {
                result = .failure(error)
            }
            // The old membership is let go of outside the readers' lock.
            let old = state.withLock { published in
                let old = published
                published = next
                return old
            }
            _ = old
            changes.add(1, ordering: .releasing)
            return try result.get()
        }
    }

    /// Runs `body`, a change this device makes (an invitation, a
    /// removal), on a thread of the pool, not the caller's: a change waits
    /// its turn behind the writer under way, such as a peer's flood of
    /// records going in, and the event loop (where control requests run)
    /// must not. Inline when the pool has stopped (the daemon is stopping).
    func offLoop<R: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> R) async throws(E) -> R {
        let run: @Sendable () -> Result<R, E> = {
            do throws(E) {
                return .success(try body())
            } catch {
                return .failure(error)
            }
        }
        let result = (try? await NIOThreadPool.singleton.runIfActive(run)) ?? run()
        return try result.get()
    }

    /// Who is in the circle now.
    var view: MembershipView { state.withLock { $0.view } }

    /// A count of the changes to the membership: what is worked out from
    /// the view (``PlayerNames``) holds while it stays the same.
    var generation: UInt64 { changes.load(ordering: .acquiring) }

    /// Calls `body` after every change, with the records made here to send
    /// to the peers (empty when the change came from a peer, who passes it on).
    func observe(_ body: @escaping @Sendable ([[UInt8]]) async -> Void) {
        observer.withLock { $0.body = body }
    }

    private func changed(made: [MembershipRecord]) {
        guard let body = observer.withLock({ $0.body }) else { return }
        let encoded = made.map(\.encoded)
        Task { await body(encoded) }
    }

    /// The circle's keys as this device holds them: the newest it can open
    /// (sealed to it by a rekey) is current; the first key and the other
    /// opened ones are earlier keys, still accepted in handshakes.
    var keys: (current: CircleKey, earlier: [CircleKey]) {
        let (first, epochs) = state.withLock { ($0.firstKey, $0.view.epochs) }
        let handed = handed.withLock { $0 }
        var held = [first]
        for epoch in epochs {
            if let key = epoch.key(for: identity) ?? handed.first(where: epoch.matches) { held.append(key) }
        }
        let current = held.removeLast()
        return (current, held)
    }

    /// What this circle's invite codes pin (see ``CircleMembership/rootCommitment``).
    var rootCommitment: [UInt8]? { state.withLock { $0.rootCommitment } }

    /// The circle's first key: what never changes while the circle lasts.
    var firstKey: CircleKey { state.withLock { $0.firstKey } }

    /// The keys the boards of the day are made with: the first, and each
    /// later one with when its rekey was made (`nil` where this device
    /// holds no copy of it).
    var dailyKeys: DailyKeys {
        let (first, epochs) = state.withLock { ($0.firstKey, $0.view.epochs) }
        let handed = handed.withLock { $0 }
        return DailyKeys(
            first: first,
            later: epochs.map { epoch in
                (epoch.madeMillis, epoch.key(for: identity) ?? handed.first(where: epoch.matches))
            })
    }

    /// The removed devices, with per game how many of their ops stay.
    var removals: [PeerID: [GameID: UInt64]] { view.removed.mapValues(\.kept) }

    /// The members an admin admitted again after a removal, as the games take them.
    var readmitted: [PeerID: GameService.Readmitted] {
        view.members.compactMapValues { m in m.readmission.map { GameService.Readmitted(record: $0.record.description, kept: $0.kept) } }
    }

    /// The devices whose new ops the games take: the members and the
    /// removed devices (up to what their removal kept). A migrated circle
    /// also takes the devices whose ops it held before (members of the
    /// release before roles that no record names); `nil` until the circle
    /// has a start.
    func opAuthors(holding held: Set<PeerID>) -> Set<PeerID>? {
        let (view, founded, migrated) = state.withLock { ($0.view, $0.isFounded, !$0.legacy.records.isEmpty) }
        guard founded else { return nil }
        var authors = Set(view.members.keys).union(view.removed.keys)
        if migrated { authors.formUnion(held.subtracting(view.removed.keys)) }
        return authors
    }

    // MARK: Invitations

    /// Makes an invitation that expires `lifetime` from now: its record
    /// goes to every member, its secret stays here (for `invite --list`).
    /// Returns the secret and when it expires.
    func invite(for lifetime: Duration) throws -> (secret: InvitationSecret, expiresMillis: UInt64) {
        let secret = InvitationSecret()
        let now = clock.wallMillis
        let expires = now + UInt64(max(0, lifetime.components.seconds)) * 1000
        let me = identity.peerID
        let key = secret.identity.peerID
        let record = try write { membership throws(MembershipError) -> MembershipRecord in
            guard let member = membership.view.members[me] else { throw .removedHere }
            if let off = member.invitationsOffBy { throw .invitationsOff(by: off) }
            do throws(CircleMembership.Refusal) {
                return try membership.record(.invite(key: key, expiresMillis: expires), by: identity, atMillis: now)
            } catch {
                throw .refused(error)
            }
        }
        try store.saveInvitation(key.bytes, circle: record.circle.bytes, secret: secret.secret.bytes)
        save([record])
        changed(made: [record])
        return (secret, expires)
    }

    /// Admits `player`, a key this device holds and hosts (a person who
    /// plays from a browser paired to it): an invitation whose key is the
    /// player's own, and its admission, both by this device, under the
    /// circle's rules for any admission (a member whose invitations are
    /// off hosts nobody; the author's budget counts both records). Every
    /// member then takes the player's moves; one that reads the two
    /// records shows the player as hosted by this device
    /// (``SweeperMembership/MembershipView/Member/hostedBy``).
    ///
    /// The observer is not called: the caller runs ``CircleChanges`` with
    /// the records, so that they reach the peers (and the games take the
    /// player's moves) before anything the player signs.
    func host(_ player: PeerID, name: String) throws -> [MembershipRecord] {
        let now = clock.wallMillis
        let me = identity.peerID
        let made = try write { membership throws(MembershipError) -> [MembershipRecord] in
            guard let member = membership.view.members[me] else { throw .removedHere }
            if let off = member.invitationsOffBy { throw .invitationsOff(by: off) }
            do throws(CircleMembership.Refusal) {
                let invite = try membership.record(.invite(key: player, expiresMillis: now + 10 * 60 * 1000), by: identity, atMillis: now)
                let admit = try membership.record(.admit(subject: player, invitation: player, name: name, through: 0), by: identity, atMillis: now)
                return [invite, admit]
            } catch {
                throw .refused(error)
            }
        }
        save(made)
        return made
    }

    /// Revokes an open invitation.
    func revoke(_ key: PeerID) throws(MembershipError) {
        let me = identity.peerID
        let record = try write { membership throws(MembershipError) -> MembershipRecord in
            guard membership.view.isMember(me) else { throw .removedHere }
            guard let invitation = membership.view.invitations[key] else { throw .unknownInvitation }
            guard invitation.state == .open else { throw .invitationClosed(invitation.state) }
            guard invitation.madeBy == me || (membership.view.role(of: me) ?? .member) <= .admin else { throw .notYours }
            do throws(CircleMembership.Refusal) {
                return try membership.record(.revoke(key: key), by: identity, atMillis: clock.wallMillis)
            } catch {
                throw .refused(error)
            }
        }
        save([record])
        changed(made: [record])
    }

    /// The secrets of invitations made here, by invitation key.
    var secrets: [PeerID: InvitationSecret] {
        let circle = state.withLock { $0.circle }
        var out: [PeerID: InvitationSecret] = [:]
        for (key, secret) in (try? store.invitationSecrets(circle: circle.bytes)) ?? [:] {
            if let peer = try? PeerID(bytes: key), let s = InvitationSecret(bytes: secret) { out[peer] = s }
        }
        return out
    }

    /// Answers a device whose handshake proved an invitation and whose
    /// request is signed by it: admitted when this device made the
    /// invitation and it is open and unexpired (an admission record, sent
    /// on to every member), else refused saying why. An invitation made on
    /// another device is redeemed only there (so it admits one device,
    /// circle-wide). A device already a member is answered again; a
    /// removed device comes back only with an admin's invitation.
    func admit(_ request: AdmissionRequest, from peer: PeerID) -> AdmissionReply {
        let me = identity.peerID
        let now = clock.wallMillis
        // Decided on the circle readers see first: a refusal, or a member
        // asking again, waits for no writer.
        let decided = state.withLock { Self.admission(request, of: peer, by: me, in: $0.view, now: now) }
        var outcome = decided.map { _ in MembershipRecord?.none }
        if case .success(true) = decided {
            outcome = write { membership in
                switch Self.admission(request, of: peer, by: me, in: membership.view, now: now) {
                case .failure(let why): return .failure(why)
                case .success(false): return .success(nil)
                case .success(true): break
                }
                let through = membership.chainHead(of: peer)?.seq ?? 0
                guard
                    let record = try? membership.record(
                        .admit(subject: peer, invitation: request.invitation, name: "", through: through), by: identity, atMillis: now)
                else { return .failure(.unavailable) }
                return membership.view.isMember(peer) ? .success(record) : .failure(.unavailable)
            }
        }
        switch outcome {
        case .failure(let why):
            return .refused(why)
        case .success(let record):
            if let record {
                save([record])
                changed(made: [record])
            }
            let (current, earlier) = keys
            let first = state.withLock { $0.firstKey }
            let later = (earlier + [current]).filter { $0 != first }
            let messages = PeerMessage.membershipBatches(encodedRecords).map(\.application)
            return .admitted(messages: messages, keys: [first] + later)
        }
    }

    /// Whether `request` admits `peer` now, as `me` sees `view`: `true`
    /// when a record must admit it, `false` when it is a member already.
    private static func admission(
        _ request: AdmissionRequest, of peer: PeerID, by me: PeerID, in view: MembershipView, now: UInt64
    ) -> Result<Bool, AdmissionRefusal> {
        guard view.isMember(me) else { return .failure(.unavailable) }
        guard let invitation = view.invitations[request.invitation] else { return .failure(.unknown) }
        if view.isMember(peer) { return .success(false) }
        switch invitation.state {
        case .used: return .failure(.used)
        case .revoked: return .failure(.revoked)
        case .open: break
        }
        guard invitation.expiresMillis > now else { return .failure(.expired) }
        guard invitation.madeBy == me else { return .failure(.elsewhere) }
        // An admin turned this device's invitations off: its codes admit nobody meanwhile.
        guard view.members[me]?.invites ?? false else { return .failure(.revoked) }
        if view.isRemoved(peer), (view.role(of: me) ?? .member) > .admin { return .failure(.removedDevice) }
        return .success(true)
    }

    /// Why a membership change could not be made.
    enum MembershipError: Error, Equatable {
        case removedHere
        case unknownInvitation
        case invitationClosed(MembershipView.Invitation.State)
        /// Only its maker or an admin revokes an invitation.
        case notYours
        /// An admin (this device) turned this device's invitations off.
        case invitationsOff(by: PeerID)
        /// The circle refused the record (a budget or limit).
        case refused(CircleMembership.Refusal)
    }

    /// Why a device could not be removed or named an admin.
    enum AuthorityError: Error, Equatable {
        /// The circle's rules refuse it.
        case refused(AuthorityRefusal)
        /// The circle refused the record.
        case record(CircleMembership.Refusal)
    }

    /// Why this device may not remove `peer` now, or `nil` when it may.
    func removalRefusal(of peer: PeerID) -> AuthorityRefusal? {
        state.withLock { $0.view.removalRefusal(by: identity.peerID, of: peer) }
    }

    /// Removes `peer`, keeping the ops of it this device holds (`kept`),
    /// and makes a new circle key sealed to every other member. Returns the
    /// records made. Only the founder and admins remove, and never a device
    /// as senior as they are.
    func remove(_ peer: PeerID, kept: [GameID: UInt64]) throws(AuthorityError) -> [MembershipRecord] {
        let me = identity.peerID
        let made = try write { membership throws(AuthorityError) -> [MembershipRecord] in
            if let why = membership.view.removalRefusal(by: me, of: peer) { throw .refused(why) }
            let now = clock.wallMillis
            let through = membership.chainHead(of: peer)?.seq ?? 0
            let hosted = membership.view.members[peer]?.hostedBy.map { membership.view.isMember($0) } ?? false
            var made: [MembershipRecord]
            do throws(CircleMembership.Refusal) {
                made = [try membership.record(.remove(subject: peer, through: through, kept: kept), by: identity, atMillis: now)]
            } catch {
                throw .record(error)
            }
            guard membership.view.isRemoved(peer) else { throw .refused(.subjectNotAMember) }
            // A hosted player's key never left its host, which stays a member:
            // the circle key it could read is held by members only still.
            if hosted { return made }
            if let rekey = Self.rekey(&membership, identity: identity, now: now) { made.append(rekey) }
            return made
        }
        save(made)
        changed(made: made)
        return made
    }

    /// Names `peer` an admin. Only the founder and admins do, for a member
    /// less senior than they are.
    func promote(_ peer: PeerID) throws(AuthorityError) -> MembershipRecord {
        try change(of: peer, refusal: { $0.promotionRefusal(by: $1, of: peer) }, making: { .promote(subject: peer, through: $0) })
    }

    /// Turns `peer`'s invitations off (`allowed` false) or on again. Only
    /// the founder and admins do, for a member less senior than they are;
    /// only as senior a device as the one that turned them off turns them on.
    func switchInvitations(of peer: PeerID, allowed: Bool) throws(AuthorityError) -> MembershipRecord {
        try change(
            of: peer, refusal: { $0.invitationSwitchRefusal(by: $1, of: peer, allowing: allowed) },
            making: { .invitations(subject: peer, through: $0, allowed: allowed) })
    }

    /// Makes, keeps and sends the record of a change to `peer` that the
    /// view's rules allow this device (`refusal` says why not, given the
    /// view and this device), through the newest record of `peer`'s held here.
    private func change(
        of peer: PeerID, refusal: (MembershipView, PeerID) -> AuthorityRefusal?, making change: (_ through: UInt64) -> MembershipChange
    ) throws(AuthorityError) -> MembershipRecord {
        let me = identity.peerID
        let record = try write { membership throws(AuthorityError) -> MembershipRecord in
            if let why = refusal(membership.view, me) { throw .refused(why) }
            let through = membership.chainHead(of: peer)?.seq ?? 0
            do throws(CircleMembership.Refusal) {
                return try membership.record(change(through), by: identity, atMillis: clock.wallMillis)
            } catch {
                throw .record(error)
            }
        }
        save([record])
        changed(made: [record])
        return record
    }

    /// A new key sealed to the members, when a removal calls for one and
    /// this device is a member.
    private static func rekey(_ membership: inout CircleMembership, identity: SigningIdentity, now: UInt64) -> MembershipRecord? {
        let view = membership.view
        guard view.needsRekey, view.isMember(identity.peerID) else { return nil }
        return try? membership.record(
            .rekey(to: CircleKey(), epoch: view.currentEpoch + 1, members: view.members.keys), by: identity, atMillis: now)
    }

    /// Every record held, encoded, those of version 1 first and each after
    /// those it names: what a newly linked peer is sent.
    var encodedRecords: [[UInt8]] { state.withLock { $0.encodedRecords } }

    /// What taking a peer's records did.
    struct Intake {
        /// Records new here, in order: to be sent on to the other peers.
        var added: [[UInt8]] = []
        /// Why records were refused (a bad signature, another circle, limits).
        var refused: [CircleMembership.Refusal] = []
        /// Records of version 1: a circle's start is never taken from a peer.
        var legacy = 0
    }

    /// Takes records a peer sent: the new ones are kept. Throws when one
    /// cannot be decoded (the peer is dropped).
    func take(_ encoded: [[UInt8]]) throws(ByteDecodingError) -> Intake {
        var records: [MembershipRecord] = []
        var legacy = 0
        for bytes in encoded {
            switch try AnyMembershipRecord(decoding: bytes) {
            case .current(let record): records.append(record)
            case .legacy: legacy += 1
            }
        }
        let (outcome, rekey) = write { membership in
            let outcome = membership.insert(records, arrivedMillis: clock.wallMillis)
            // A removal no rekey has followed (made elsewhere, or two at
            // once): this member makes the new key.
            let rekey = outcome.added.isEmpty ? nil : Self.rekey(&membership, identity: identity, now: clock.wallMillis)
            return (outcome, rekey)
        }
        // Peers hold what they sent, and a rekey lost here is made again: no fsync on the loop.
        save(outcome.added + (rekey.map { [$0] } ?? []), durability: .deferred)
        if !outcome.added.isEmpty { changed(made: rekey.map { [$0] } ?? []) }
        return Intake(added: outcome.added.map(\.encoded), refused: outcome.refused, legacy: legacy)
    }

    private func save(_ records: [MembershipRecord], durability: Store.Durability = .synced) {
        guard let circle = records.first?.circle else { return }
        do {
            try store.saveMembershipRecords(
                circle: circle.bytes, records.map { (hash: $0.hash.bytes, record: $0.encoded) }, durability: durability)
        } catch {
            // Kept in memory; peers send them again after a restart.
            logger.warning("could not keep membership records", metadata: ["error": "\(error)"])
        }
    }
}
