import SweeperConventions
import SweeperCrypto
import SweeperSync
import Testing

@testable import SweeperMembership

enum Devices {
    static func identity(_ n: UInt8) -> SigningIdentity {
        var seed = [UInt8](repeating: 0x5E, count: 32)
        seed[0] = n
        return (try? SigningIdentity(seed: seed)) ?? SigningIdentity()
    }

    static let firstKey = (try? CircleKey(bytes: [UInt8](repeating: 0xC1, count: 32))) ?? CircleKey()
    static let circle = CircleID(firstKey: firstKey)
    static let game = GameID(bytes: [UInt8](repeating: 7, count: 16))!
}

/// One device's copy of a circle's membership, with a clock.
struct Device {
    let identity: SigningIdentity
    var membership = CircleMembership(firstKey: Devices.firstKey)
    var clock: UInt64 = 1_000
    var invitations: UInt8 = 0

    init(_ n: UInt8) { identity = Devices.identity(n) }

    var peer: PeerID { identity.peerID }
    var view: MembershipView { membership.view }

    /// Makes a record as the daemon would (next in the chain, parents = heads); `nil` when refused.
    @discardableResult
    mutating func make(_ change: MembershipChange) -> MembershipRecord? {
        clock += 1
        return try? membership.record(change, by: identity, atMillis: clock)
    }

    mutating func found() { make(.found(proof: Devices.firstKey.membershipProof(for: peer))) }

    /// Makes a fresh invitation; returns its key.
    @discardableResult
    mutating func invite() -> PeerID {
        invitations += 1
        let key = Devices.identity(UInt8(truncatingIfNeeded: Int(identity.peerID.bytes[0]) &+ Int(invitations) &* 7 &+ 100)).peerID
        let fresh = SigningIdentity().peerID
        let chosen = membership.view.invitations[key] == nil ? key : fresh
        make(.invite(key: chosen, expiresMillis: clock + 86_400_000))
        return chosen
    }

    /// Invites and admits `other`, who then holds these records.
    mutating func admit(_ other: inout Device) {
        let key = invite()
        make(.admit(subject: other.peer, invitation: key, name: "dev\(other.peer.shortDescription)", through: membership.chainHead(of: other.peer)?.seq ?? 0))
        other.take(from: self)
    }

    @discardableResult
    mutating func remove(_ other: PeerID) -> MembershipRecord? {
        make(.remove(subject: other, through: membership.chainHead(of: other)?.seq ?? 0, kept: [Devices.game: 1]))
    }

    @discardableResult
    mutating func invitations(of other: PeerID, allowed: Bool) -> MembershipRecord? {
        make(.invitations(subject: other, through: membership.chainHead(of: other)?.seq ?? 0, allowed: allowed))
    }

    @discardableResult
    mutating func promote(_ other: PeerID) -> MembershipRecord? {
        make(.promote(subject: other, through: membership.chainHead(of: other)?.seq ?? 0))
    }

    mutating func take(from other: Device) { membership.insert(other.membership.ordered) }
}

/// A record signed by `who` with every field chosen: what a device acting
/// in bad faith writes (backdated parents, a place in its chain taken twice).
func forge(
    _ who: SigningIdentity, seq: UInt64, previous: RecordHash?, parents: Set<RecordHash> = [], _ change: MembershipChange,
    made: UInt64 = 5
) -> MembershipRecord {
    MembershipRecord(signing: who, circle: Devices.circle, madeMillis: made, seq: seq, previous: previous, parents: parents, change: change)
}

/// Founder Dad with Mum (an admin) and Max (a member).
func family() -> (dad: Device, mum: Device, max: Device) {
    var dad = Device(1), mum = Device(2), max = Device(3)
    dad.found()
    dad.admit(&mum)
    dad.admit(&max)
    dad.promote(mum.peer)
    mum.take(from: dad)
    max.take(from: dad)
    return (dad, mum, max)
}

@Suite struct MembershipRecordTests {
    @Test func everyKindRoundTripsAndIsSigned() throws {
        var a = Device(1)
        a.found()
        let b = Devices.identity(2).peerID
        let key = Devices.identity(200).peerID
        let changes: [MembershipChange] = [
            .invite(key: key, expiresMillis: 99),
            .admit(subject: b, invitation: key, name: "Grandma's tablet", through: 0),
            .promote(subject: b, through: 3),
            .remove(subject: b, through: 4, kept: [Devices.game: 12]),
            .rekey(to: CircleKey(), epoch: 1, members: [a.peer]),
            .revoke(key: key),
            .invitations(subject: b, through: 2, allowed: false),
            .invitations(subject: b, through: 5, allowed: true),
        ]
        for change in changes {
            let madeRecord = a.make(change)
            let record = try #require(madeRecord)
            let decoded = try MembershipRecord(decoding: record.encoded)
            #expect(decoded.hash == record.hash)
            #expect(decoded.change == change)
            #expect(decoded.seq == record.seq && decoded.previous == record.previous && decoded.parents == record.parents)
            #expect(decoded.hasValidSignature)
        }
        #expect(a.membership.chainHead(of: a.peer)?.seq == UInt64(changes.count + 1))
    }

    @Test func decodingRefusesDamageAndTellsTheVersions() throws {
        var a = Device(1)
        a.found()
        let madeRecord = a.make(.remove(subject: Devices.identity(2).peerID, through: 0, kept: [Devices.game: 3]))
        let record = try #require(madeRecord)
        let bytes = record.encoded
        for cut in [0, 1, 20, 60, bytes.count - 65] {
            #expect(throws: ByteDecodingError.self) { try MembershipRecord(decoding: Array(bytes.prefix(cut))) }
        }
        var v3 = bytes
        v3[0] = 3
        #expect(throws: ByteDecodingError.unknownVersion(3)) { try MembershipRecord(decoding: v3) }
        let legacy = LegacyRecord(signing: a.identity, circle: Devices.circle, madeMillis: 1, parents: [], change: .revoke(key: a.peer))
        guard case .legacy = try AnyMembershipRecord(decoding: legacy.encoded) else {
            Issue.record("a record of version 1 did not read as one")
            return
        }
        guard case .current = try AnyMembershipRecord(decoding: bytes) else {
            Issue.record("a record of version 2 did not read as one")
            return
        }
    }
}

@Suite struct RoleTests {
    @Test func theFounderAdmitsNamesAdminsAndIsNeverRemoved() throws {
        var (dad, mum, max) = family()
        #expect(dad.view.role(of: dad.peer) == .founder)
        #expect(dad.view.role(of: mum.peer) == .admin)
        #expect(dad.view.role(of: max.peer) == .member)
        #expect(dad.view.members[max.peer]?.admittedBy == dad.peer)
        // Mum, an admin, tries to remove the founder: the record is kept, and void.
        let madeAttempt = mum.remove(dad.peer)
        let attempt = try #require(madeAttempt)
        dad.membership.insert([attempt])
        #expect(dad.membership.records[attempt.hash] != nil)
        #expect(dad.view.role(of: dad.peer) == .founder && !dad.view.isRemoved(dad.peer))
        #expect(mum.view.removalRefusal(by: mum.peer, of: dad.peer) == .moreSenior(.founder))
        _ = max
    }

    @Test func aMemberCannotRemoveOrPromote() throws {
        var (dad, mum, max) = family()
        var cat = Device(4)
        dad.admit(&cat)
        max.take(from: dad)
        #expect(max.view.removalRefusal(by: max.peer, of: cat.peer) == .notAnAdmin)
        let madeRemoval = max.remove(cat.peer)
        let removal = try #require(madeRemoval)
        let madePromotion = max.promote(cat.peer)
        let promotion = try #require(madePromotion)
        dad.membership.insert([removal, promotion])
        #expect(dad.view.isMember(cat.peer) && dad.view.role(of: cat.peer) == .member)
        _ = mum
    }

    /// Role comes before lineage: Mum, admitted after Max and then named
    /// an admin, removes him.
    @Test func anAdminRemovesAMemberAdmittedBeforeIt() throws {
        var dad = Device(1), max = Device(3), mum = Device(2)
        dad.found()
        dad.admit(&max)
        dad.admit(&mum)
        dad.promote(mum.peer)
        mum.take(from: dad)
        #expect(try #require(mum.view.members[max.peer]).lineage.lexicographicallyPrecedes(try #require(mum.view.members[mum.peer]).lineage))
        #expect(mum.view.removalRefusal(by: mum.peer, of: max.peer) == nil)
        let madeRemoval = mum.remove(max.peer)
        let removal = try #require(madeRemoval)
        dad.membership.insert([removal])
        #expect(dad.view.isRemoved(max.peer))
        #expect(dad.view.removed[max.peer]?.removedBy == mum.peer)
    }

    /// Two admins remove each other while apart: the more senior one's
    /// removal stands, whatever order the records come in.
    @Test func ofDuellingAdminsTheMoreSeniorWinsInAnyOrder() throws {
        var (dad, mum, max) = family()
        dad.promote(max.peer)
        mum.take(from: dad)
        max.take(from: dad)
        let madeA = mum.remove(max.peer)
        let a = try #require(madeA)
        let madeB = max.remove(mum.peer)
        let b = try #require(madeB)
        var one = dad, two = dad
        one.membership.insert([a, b])
        two.membership.insert([b, a])
        #expect(one.view == two.view)
        #expect(one.view.isMember(mum.peer) && one.view.isRemoved(max.peer))
    }
}

/// An admin turns a member's invitations off and on again.
@Suite struct InvitationSwitchTests {
    /// While Max's invitations are off, the code he made before admits
    /// nobody and a new one is void, at every device; Mum turns them on
    /// again and the old code works.
    @Test func aMembersCodesAdmitNobodyWhileItsInvitationsAreOff() throws {
        var (dad, mum, max) = family()
        let before = max.invite()
        mum.take(from: max)
        let madeOff = mum.invitations(of: max.peer, allowed: false)
        #expect(madeOff != nil)
        #expect(mum.view.members[max.peer]?.invitationsOffBy == mum.peer)
        #expect(mum.view.members[max.peer]?.invites == false)
        max.take(from: mum)
        // Max's own copy refuses nothing (the daemon does: `invite` says
        // not-allowed), so Max writes a new code and admits with the old one.
        let madeLate = max.make(.invite(key: Devices.identity(90).peerID, expiresMillis: .max))
        let late = try #require(madeLate)
        let guest = Devices.identity(91).peerID
        let madeAdmission = max.make(.admit(subject: guest, invitation: before, name: "guest", through: 0))
        let admission = try #require(madeAdmission)
        dad.take(from: max)
        mum.take(from: max)
        #expect(dad.membership.records[admission.hash] != nil && dad.membership.records[late.hash] != nil, "the attempt needs the records held")
        #expect(dad.view.invitations[Devices.identity(90).peerID] == nil)
        #expect(!dad.view.isMember(guest) && !mum.view.isMember(guest))
        // Back on (by Mum, who turned them off): a later admission with the old code stands.
        #expect(mum.invitations(of: max.peer, allowed: true) != nil)
        #expect(mum.view.members[max.peer]?.invites == true)
        max.take(from: mum)
        let madeAgain = max.make(.admit(subject: guest, invitation: before, name: "guest", through: 0))
        let again = try #require(madeAgain)
        dad.take(from: max)
        #expect(dad.membership.records[again.hash] != nil)
        #expect(dad.view.isMember(guest))
        #expect(dad.view.invitations[before]?.state == .used(by: guest))
    }

    /// Only the founder and admins switch, never for a device as senior as
    /// they are; a junior admin cannot turn on what the founder turned off,
    /// and a promotion starts afresh.
    @Test func whoMaySwitchIsDecidedBySeniority() throws {
        var (dad, mum, max) = family()
        var sam = Device(4)
        dad.admit(&sam)
        mum.take(from: dad)
        max.take(from: dad)
        // A member's switch counts for nothing.
        #expect(max.view.invitationSwitchRefusal(by: max.peer, of: sam.peer, allowing: false) == .notAnAdmin)
        let head = max.membership.chainHead(of: max.peer)
        let byMember = forge(max.identity, seq: (head?.seq ?? 0) + 1, previous: head?.hash, .invitations(subject: sam.peer, through: 0, allowed: false))
        dad.membership.insert([byMember])
        #expect(dad.membership.records[byMember.hash] != nil)
        #expect(dad.view.members[sam.peer]?.invites == true)
        // An admin cannot switch the founder's.
        #expect(mum.view.invitationSwitchRefusal(by: mum.peer, of: dad.peer, allowing: false) == .alreadyAdmin(.founder))
        // The founder turns Sam's off; Mum (an admin, junior) may not turn them on.
        #expect(dad.invitations(of: sam.peer, allowed: false) != nil)
        mum.take(from: dad)
        #expect(mum.view.invitationSwitchRefusal(by: mum.peer, of: sam.peer, allowing: true) == .offByMoreSenior(.founder))
        let mumHead = mum.membership.chainHead(of: mum.peer)
        let junior = forge(
            mum.identity, seq: (mumHead?.seq ?? 0) + 1, previous: mumHead?.hash, parents: mum.membership.heads,
            .invitations(subject: sam.peer, through: 5, allowed: true))
        dad.membership.insert([junior])
        #expect(dad.membership.records[junior.hash] != nil)
        #expect(dad.view.members[sam.peer]?.invitationsOffBy == dad.peer)
        // Named an admin, Sam invites again.
        dad.promote(sam.peer)
        #expect(dad.view.members[sam.peer]?.invites == true && dad.view.members[sam.peer]?.invitationsOffBy == nil)
    }

    /// Two admins switch one member's invitations while apart: every
    /// device ends with the same answer, in any order.
    @Test func switchesWhileApartAgreeInAnyOrder() throws {
        var (dad, mum, max) = family()
        let madeOff = dad.invitations(of: max.peer, allowed: false)
        let off = try #require(madeOff)
        let madeOn = mum.invitations(of: max.peer, allowed: true)
        let on = try #require(madeOn)
        let madeMumOff = mum.invitations(of: max.peer, allowed: false)
        let mumOff = try #require(madeMumOff)
        var one = Device(9), two = Device(9)
        one.membership.insert(dad.membership.ordered + mum.membership.ordered)
        two.membership.insert(mum.membership.ordered.reversed() + dad.membership.ordered.reversed())
        two.membership.insert(mum.membership.ordered + dad.membership.ordered)
        #expect(one.view == two.view)
        #expect(one.view.members[max.peer]?.invites == false)
        _ = (off, on, mumOff)
    }
}

/// Each finding of the attack on the circle of the release before roles,
/// written as the attack: each fails on that release's rules.
@Suite struct AdversaryMembershipTests {
    /// A removed device writes, with its old keys, a removal of the founder
    /// with no parents (the lowest depth there is), and hands it to a
    /// member that missed its removal. It changes nothing, anywhere.
    @Test func aBackdatedRemovalByARemovedDeviceChangesNothing() throws {
        var (dad, mum, max) = family()
        dad.promote(max.peer)
        max.take(from: dad)
        var asleep = mum  // Mum's laptop sleeps through Max's removal.
        let madeRemoval = dad.remove(max.peer)
        let removal = try #require(madeRemoval)
        // Max, removed, writes the next record of its chain with no parents at all.
        let head = max.membership.chainHead(of: max.peer)
        let backdated = forge(max.identity, seq: (head?.seq ?? 0) + 1, previous: head?.hash, .remove(subject: dad.peer, through: 0, kept: [:]), made: 0)
        let again = forge(max.identity, seq: (head?.seq ?? 0) + 2, previous: backdated.hash, .remove(subject: mum.peer, through: 0, kept: [:]))
        asleep.membership.insert([backdated, again])
        // Even before the removal reaches it, the founder stands (nobody removes it) …
        #expect(asleep.view.isMember(dad.peer) && asleep.view.role(of: dad.peer) == .founder)
        // … and once it does, Max's records after it are void, Mum is back, and everyone agrees.
        asleep.take(from: dad)
        dad.membership.insert([backdated, again])
        #expect(dad.membership.records[backdated.hash] != nil, "the attack needs the record delivered")
        #expect(asleep.view.isRemoved(max.peer) && asleep.view.isMember(mum.peer) && asleep.view.isMember(dad.peer))
        #expect(asleep.view.members == dad.view.members && asleep.view.removed == dad.view.removed)
        #expect(dad.view.removed[max.peer]?.kept == [Devices.game: 1])
        _ = removal
    }

    /// A removed device keeps an invitation it made before its removal and
    /// admits a fresh identity with it: the admission is void, and the
    /// invitation shows as revoked by the removal.
    @Test func aRemovedDevicesOldInvitationAdmitsNobody() throws {
        var (dad, mum, max) = family()
        let key = max.invite()
        dad.take(from: max)
        mum.take(from: max)
        dad.remove(max.peer)
        let head = max.membership.chainHead(of: max.peer)
        let puppet = Devices.identity(66)
        let admission = forge(
            max.identity, seq: (head?.seq ?? 0) + 1, previous: head?.hash, .admit(subject: puppet.peerID, invitation: key, name: "x", through: 0))
        var stale = mum  // missed the removal
        stale.membership.insert([admission])
        #expect(stale.view.isMember(puppet.peerID), "the attack needs a member that missed the removal")
        stale.take(from: dad)
        #expect(!stale.view.isMember(puppet.peerID))
        #expect(stale.view.invitations[key]?.state == .revoked(by: dad.peer))
        // Nobody else may use Max's invitation either: only its maker admits.
        let other = forge(
            mum.identity, seq: (mum.membership.chainHead(of: mum.peer)?.seq ?? 0) + 1,
            previous: mum.membership.chainHead(of: mum.peer)?.hash, .admit(subject: puppet.peerID, invitation: key, name: "x", through: 0))
        dad.membership.insert([other])
        #expect(!dad.view.isMember(puppet.peerID))
    }

    /// One member writes invitation after invitation: past its budget they
    /// are refused, loudly, and the founder still removes it and invites.
    @Test func aFloodOfInvitationsNeverStopsARemoval() throws {
        var (dad, mum, max) = family()
        var refused = 0
        let attempts = CircleMembership.authorBudget + 20
        var made = 0
        for n in 0..<attempts {
            if (try? max.membership.record(.invite(key: SigningIdentity().peerID, expiresMillis: 1), by: max.identity, atMillis: UInt64(n))) != nil {
                made += 1
            } else {
                refused += 1
            }
        }
        #expect(refused > 0, "the budget never refused anything")
        #expect(max.membership.chainHead(of: max.peer).map { Int($0.seq) } ?? 0 <= CircleMembership.authorBudget + 2)
        dad.take(from: max)
        #expect(throws: CircleMembership.Refusal.authorBudget) {
            try max.membership.record(.invite(key: SigningIdentity().peerID, expiresMillis: 1), by: max.identity, atMillis: 9)
        }
        let madeRemoval = dad.remove(max.peer)
        let removal = try #require(madeRemoval)
        #expect(dad.view.isRemoved(max.peer))
        #expect(dad.invite() != max.peer)
        mum.membership.insert(dad.membership.ordered)
        #expect(mum.view.isRemoved(max.peer))
        _ = (made, removal)
    }

    /// A rekey sealed to tens of thousands of made-up recipients never
    /// decodes, and no record over the size limit does.
    @Test func anOversizedRecordIsRefused() throws {
        var w = [UInt8]()
        let dad = Devices.identity(1)
        let ok = forge(dad, seq: 1, previous: nil, .rekey(to: CircleKey(), epoch: 1, members: (0..<3).map { Devices.identity(UInt8($0)).peerID }))
        w = ok.encoded
        #expect((try? MembershipRecord(decoding: w)) != nil)
        var sealed: [PeerID: [UInt8]] = [:]
        for n in 0..<(MembershipChange.recipientLimit + 1) {
            var bytes = [UInt8](repeating: 0, count: 32)
            bytes[0] = UInt8(n & 0xFF)
            bytes[1] = UInt8(n >> 8)
            sealed[try PeerID(bytes: bytes)] = [UInt8](repeating: 1, count: MembershipChange.sealedKeyByteCount)
        }
        let big = forge(dad, seq: 1, previous: nil, .rekey(epoch: 1, check: [UInt8](repeating: 0, count: 16), sealed: sealed))
        #expect(throws: ByteDecodingError.self) { try MembershipRecord(decoding: big.encoded) }
        // A removal listing more games than fit in a record's bytes.
        var kept: [GameID: UInt64] = [:]
        for n in 0..<8_000 {
            var bytes = [UInt8](repeating: 0, count: 16)
            bytes[0] = UInt8(n & 0xFF)
            bytes[1] = UInt8(n >> 8)
            kept[try #require(GameID(bytes: bytes))] = UInt64.max
        }
        let long = forge(dad, seq: 1, previous: nil, .remove(subject: Devices.identity(2).peerID, through: 0, kept: kept))
        #expect(long.encoded.count > MembershipRecord.byteLimit)
        #expect(throws: ByteDecodingError.self) { try MembershipRecord(decoding: long.encoded) }
    }

    /// A member writes rekeys to a thousand made-up recipients each (115 KB
    /// a record): past its own 256 KiB of removals and rekeys they are
    /// refused, and the founder still removes it.
    @Test func aFloodOfHugeRekeysIsBoundedAndTheFounderStillRemoves() throws {
        var (dad, mum, max) = family()
        let fake = (0..<MembershipChange.recipientLimit).map { n -> PeerID in
            var seed = [UInt8](repeating: 0x11, count: 32)
            seed[0] = UInt8(n & 0xFF)
            seed[1] = UInt8(n >> 8)
            return ((try? SigningIdentity(seed: seed)) ?? SigningIdentity()).peerID
        }
        var kept = 0, refused: [CircleMembership.Refusal] = []
        for epoch in 1...6 {
            let head = max.membership.chainHead(of: max.peer)
            let rekey = forge(max.identity, seq: (head?.seq ?? 0) + 1, previous: head?.hash, .rekey(to: CircleKey(), epoch: UInt64(epoch), members: fake))
            max.membership.insert([rekey])
            let outcome = dad.membership.insert([rekey])
            kept += outcome.added.count
            refused += outcome.refused
        }
        #expect(kept == 2 && refused == [.authorBudget, .authorBudget, .authorBudget, .authorBudget], "kept \(kept), refused \(refused)")
        let madeRemoval = dad.remove(max.peer)
        #expect(madeRemoval != nil && dad.view.isRemoved(max.peer))
        _ = mum
    }

    /// A stranger's records fill the waiting room; a member's record that
    /// must wait still gets in, in place of one of them.
    @Test func strangersCannotFillTheWaitingRoom() throws {
        var (dad, mum, max) = family()
        for n in 0..<CircleMembership.waitingLimit {
            var seed = [UInt8](repeating: 0x22, count: 32)
            seed[0] = UInt8(n & 0xFF)
            seed[1] = UInt8(n >> 8)
            let stranger = (try? SigningIdentity(seed: seed)) ?? SigningIdentity()
            dad.membership.insert([forge(stranger, seq: 1, previous: nil, .invite(key: stranger.peerID, expiresMillis: 1))])
        }
        #expect(dad.membership.waitingCount == CircleMembership.waitingLimit)
        // Max's two newest records, newest first: the first waits for the second.
        max.invite()
        max.invite()
        let newest = Array(max.membership.ordered.suffix(2).reversed())
        let outcome = dad.membership.insert(newest)
        #expect(outcome.refused.isEmpty && outcome.added.count == 2, "\(outcome.refused)")
        _ = mum
    }

    /// Founding happens once: a second founding record (any holder of the
    /// first key can sign one) is refused, even one the founder signs.
    @Test func foundingCloses() throws {
        var (dad, mum, max) = family()
        let stranger = Devices.identity(77)
        let second = forge(stranger, seq: 1, previous: nil, .found(proof: Devices.firstKey.membershipProof(for: stranger.peerID)))
        #expect(dad.membership.insert([second]).refused == [.founding])
        #expect(!dad.view.isMember(stranger.peerID))
        // Max (admitted) founding again changes nothing either.
        let head = max.membership.chainHead(of: max.peer)
        let maxFounds = forge(max.identity, seq: (head?.seq ?? 0) + 1, previous: head?.hash, .found(proof: Devices.firstKey.membershipProof(for: max.peer)))
        #expect(mum.membership.insert([maxFounds]).refused == [.founding])
        #expect(mum.view.role(of: max.peer) == .member)
        // A migrated circle takes no founding at all.
        let legacy = LegacyRecord(
            signing: dad.identity, circle: Devices.circle, madeMillis: 1, parents: [],
            change: .found(proof: Devices.firstKey.membershipProof(for: dad.peer)))
        var migrated = CircleMembership(firstKey: Devices.firstKey, legacy: [legacy])
        #expect(migrated.view.role(of: dad.peer) == .founder)
        #expect(migrated.insert([second]).refused == [.founding])
    }

    /// One invitation admits one device: its maker's second admission with
    /// it, and any other member's, are void.
    @Test func oneInvitationAdmitsOneDevice() throws {
        var (dad, mum, max) = family()
        let key = dad.invite()
        let first = Devices.identity(40).peerID, second = Devices.identity(41).peerID
        dad.make(.admit(subject: first, invitation: key, name: "a", through: 0))
        dad.make(.admit(subject: second, invitation: key, name: "b", through: 0))
        mum.take(from: dad)
        let byMum = forge(
            mum.identity, seq: (mum.membership.chainHead(of: mum.peer)?.seq ?? 0) + 1,
            previous: mum.membership.chainHead(of: mum.peer)?.hash, .admit(subject: Devices.identity(42).peerID, invitation: key, name: "c", through: 0))
        mum.membership.insert([byMum])
        #expect(mum.view.isMember(first))
        #expect(!mum.view.isMember(second) && !mum.view.isMember(Devices.identity(42).peerID))
        #expect(mum.view.invitations[key]?.state == .used(by: first))
        _ = max
    }

    /// A record must follow its author's previous one: skipping a place,
    /// or naming another author's record as previous, is refused.
    @Test func aRecordThatSkipsItsChainIsRefused() throws {
        var (dad, mum, max) = family()
        max.invite()
        dad.take(from: max)
        let head = try #require(max.membership.chainHead(of: max.peer))
        let skip = forge(max.identity, seq: head.seq + 2, previous: head.hash, .invite(key: Devices.identity(90).peerID, expiresMillis: 1))
        #expect(dad.membership.insert([skip]).refused == [.badChain])
        let borrowed = forge(
            max.identity, seq: 2, previous: dad.membership.chainHead(of: dad.peer)?.hash,
            .invite(key: Devices.identity(91).peerID, expiresMillis: 1))
        #expect(dad.membership.insert([borrowed]).refused == [.badChain])
        _ = mum
    }

    /// Two records at one place in a chain: neither counts, and the device is shown.
    @Test func equivocationIsShown() throws {
        var (dad, mum, max) = family()
        let head = max.membership.chainHead(of: max.peer)
        let a = forge(max.identity, seq: (head?.seq ?? 0) + 1, previous: head?.hash, .invite(key: Devices.identity(92).peerID, expiresMillis: 1))
        let b = forge(max.identity, seq: (head?.seq ?? 0) + 1, previous: head?.hash, .invite(key: Devices.identity(93).peerID, expiresMillis: 1))
        dad.membership.insert([a, b])
        #expect(dad.view.equivocations[max.peer] == [(head?.seq ?? 0) + 1])
        #expect(dad.membership.records[a.hash] != nil && dad.membership.records[b.hash] != nil)
        #expect(dad.view.invitations[Devices.identity(92).peerID] == nil && dad.view.invitations[Devices.identity(93).peerID] == nil)
        _ = mum
    }

    /// Records of a device no admission names are neither kept nor passed on.
    @Test func aStrangersRecordsWaitAndAreNeverKept() throws {
        var (dad, mum, max) = family()
        let stranger = Devices.identity(88)
        let record = forge(stranger, seq: 1, previous: nil, .invite(key: Devices.identity(94).peerID, expiresMillis: 1))
        let outcome = dad.membership.insert([record])
        #expect(outcome.waiting == 1 && outcome.added.isEmpty)
        #expect(dad.membership.records[record.hash] == nil)
        _ = (mum, max)
    }

    /// A removed device comes back only with an admin's invitation.
    @Test func aRemovedDeviceComesBackOnlyThroughAnAdmin() throws {
        var (dad, mum, max) = family()
        var cat = Device(4)
        dad.admit(&cat)
        max.take(from: dad)
        dad.remove(cat.peer)
        max.take(from: dad)
        mum.take(from: dad)
        // Max, a member, re-admits Cat: void.
        let key = max.invite()
        max.make(.admit(subject: cat.peer, invitation: key, name: "cat", through: max.membership.chainHead(of: cat.peer)?.seq ?? 0))
        dad.take(from: max)
        #expect(dad.view.isRemoved(cat.peer))
        // Mum, an admin, does: Cat is a member again.
        let mumKey = mum.invite()
        mum.make(.admit(subject: cat.peer, invitation: mumKey, name: "cat", through: mum.membership.chainHead(of: cat.peer)?.seq ?? 0))
        dad.take(from: mum)
        #expect(dad.view.isMember(cat.peer) && !dad.view.isRemoved(cat.peer))
    }

    /// A removal made while a member was admin-ed by the device it removes
    /// does not undo the promotion that let it remove.
    @Test func aRemovalDoesNotUndoItsOwnAuthority() throws {
        var (dad, mum, max) = family()
        var cat = Device(4)
        dad.admit(&cat)
        mum.take(from: dad)
        mum.promote(cat.peer)  // Mum names Cat an admin …
        cat.take(from: mum)
        // … and Cat, junior to Mum, tries to remove her from before that promotion.
        let head = cat.membership.chainHead(of: cat.peer)
        let removal = forge(cat.identity, seq: (head?.seq ?? 0) + 1, previous: head?.hash, .remove(subject: mum.peer, through: 0, kept: [:]))
        dad.take(from: mum)
        dad.membership.insert([removal])
        #expect(dad.view.isMember(mum.peer) && dad.view.role(of: cat.peer) == .admin)
        _ = max
    }
}

@Suite struct MigrationTests {
    /// A circle of the release before roles: two founders, an admitted
    /// member, a removed device. The earliest founder is the founder, the
    /// other an admin, and the removal stands.
    @Test func aCircleOfVersion1BecomesOneWithRoles() throws {
        let a = Devices.identity(1), b = Devices.identity(2), c = Devices.identity(3), d = Devices.identity(4)
        let inv = Devices.identity(200).peerID
        func rec(_ who: SigningIdentity, _ made: UInt64, _ parents: Set<RecordHash>, _ change: LegacyChange) -> LegacyRecord {
            LegacyRecord(signing: who, circle: Devices.circle, madeMillis: made, parents: parents, change: change)
        }
        let fa = rec(a, 10, [], .found(proof: Devices.firstKey.membershipProof(for: a.peerID)))
        let fb = rec(b, 20, [], .found(proof: Devices.firstKey.membershipProof(for: b.peerID)))
        let i = rec(a, 30, [fa.hash, fb.hash], .invite(key: inv, expiresMillis: 99))
        let ad = rec(a, 31, [i.hash], .admit(subject: c.peerID, invitation: inv, name: "Cat"))
        let fd = rec(d, 15, [], .found(proof: Devices.firstKey.membershipProof(for: d.peerID)))
        let rm = rec(b, 40, [ad.hash, fd.hash], .remove(subject: d.peerID, kept: [Devices.game: 2]))
        for order in [[fa, fb, i, ad, fd, rm], [rm, fd, ad, i, fb, fa]] {
            var m = CircleMembership(firstKey: Devices.firstKey, legacy: order)
            #expect(m.view.role(of: a.peerID) == .founder)
            #expect(m.view.role(of: b.peerID) == .admin)
            #expect(m.view.role(of: c.peerID) == .member && m.view.members[c.peerID]?.name == "Cat")
            #expect(m.view.isRemoved(d.peerID) && m.view.removed[d.peerID]?.kept == [Devices.game: 2])
            #expect(m.view.needsRekey)
            // The circle goes on with records of version 2: the founder removes Cat.
            let removal = try m.record(.remove(subject: c.peerID, through: 0, kept: [:]), by: a, atMillis: 50)
            #expect(removal.seq == 1 && m.view.isRemoved(c.peerID))
        }
    }
}

@Suite struct ConvergenceTests {
    /// Devices that exchange everything agree, with honest and forged
    /// records alike; the founder is never removed, and no removal is of a
    /// device as senior as its author.
    @Test(arguments: 0..<30)
    func devicesThatExchangeEverythingAgree(seed: UInt64) {
        var rng = SplitMix(seed)
        var devices = (1...5).map { Device(UInt8($0)) }
        devices[0].found()
        for i in 1..<devices.count {
            var joining = devices[i]
            devices[0].admit(&joining)
            devices[i] = joining
        }
        for i in devices.indices {
            let founder = devices[0]
            devices[i].take(from: founder)
        }
        for _ in 0..<40 {
            let who = Int(rng.next() % 5), other = Int(rng.next() % 5)
            let subject = devices[other].peer
            switch rng.next() % 9 {
            case 0: devices[who].promote(subject)
            case 7: devices[who].invitations(of: subject, allowed: rng.next() % 2 == 0)
            case 1: devices[who].remove(subject)
            case 2: devices[who].invite()
            case 3:
                // A backdated removal: no parents.
                let head = devices[who].membership.chainHead(of: devices[who].peer)
                devices[who].membership.insert([
                    forge(
                        devices[who].identity, seq: (head?.seq ?? 0) + 1, previous: head?.hash,
                        .remove(subject: subject, through: 0, kept: [:]))
                ])
            case 4:
                // Equivocation at the last place.
                if let head = devices[who].membership.chainHead(of: devices[who].peer), head.seq > 1,
                    let prev = devices[who].membership.records[head.hash]?.previous
                {
                    devices[who].membership.insert([forge(devices[who].identity, seq: head.seq, previous: prev, .promote(subject: subject, through: 0))])
                }
            default:
                let source = devices[other]
                devices[who].take(from: source)
            }
        }
        for _ in 0..<2 {
            for i in devices.indices {
                for j in devices.indices where i != j {
                    let source = devices[j]
                    devices[i].take(from: source)
                }
            }
        }
        let first = devices[0].view
        for d in devices {
            #expect(Set(d.membership.records.keys) == Set(devices[0].membership.records.keys), "the records did not reach everyone")
            #expect(d.view == first)
        }
        #expect(first.role(of: devices[0].peer) == .founder)
        for (peer, removal) in first.removed {
            #expect(!first.isMember(peer))
            #expect(peer != devices[0].peer)
            _ = removal
        }
        var again = CircleMembership(firstKey: Devices.firstKey)
        again.insert(devices[0].membership.ordered.reversed())
        #expect(again.view == first, "the view depends on the order records came in")
    }
}

struct SplitMix {
    var state: UInt64
    init(_ seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
