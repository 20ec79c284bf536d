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
    static let invitation = identity(200)
    static let game = GameID(bytes: [UInt8](repeating: 7, count: 16))!
}

/// One device's copy of a circle's membership, with a clock.
struct Device {
    let identity: SigningIdentity
    var membership = CircleMembership(firstKey: Devices.firstKey)
    var clock: UInt64 = 1_000

    init(_ n: UInt8) { identity = Devices.identity(n) }

    var peer: PeerID { identity.peerID }

    @discardableResult
    mutating func make(_ change: MembershipChange) -> MembershipRecord {
        clock += 1
        return membership.record(change, by: identity, atMillis: clock)
    }

    mutating func found() { make(.found(proof: Devices.firstKey.membershipProof(for: peer))) }

    /// Invites and admits `other`, who then holds these records.
    mutating func admit(_ other: inout Device, invitation: SigningIdentity = Devices.invitation) {
        make(.invite(key: invitation.peerID, expiresMillis: clock + 86_400_000))
        make(.admit(subject: other.peer, invitation: invitation.peerID, name: "dev\(other.peer.shortDescription)"))
        other.take(from: self)
    }

    mutating func take(from other: Device) { membership.insert(other.membership.ordered) }
}

@Suite struct MembershipRecordTests {
    @Test func everyKindRoundTripsAndIsSigned() throws {
        var a = Device(1)
        a.found()
        let b = Devices.identity(2).peerID
        let changes: [MembershipChange] = [
            .invite(key: Devices.invitation.peerID, expiresMillis: 99),
            .admit(subject: b, invitation: Devices.invitation.peerID, name: "Grandma's tablet"),
            .remove(subject: b, kept: [Devices.game: 12]),
            .rekey(to: CircleKey(), epoch: 1, members: [a.peer]),
            .revoke(key: Devices.invitation.peerID),
        ]
        for change in changes {
            let record = a.make(change)
            let decoded = try MembershipRecord(decoding: record.encoded)
            #expect(decoded.hash == record.hash)
            #expect(decoded.change == change)
            #expect(decoded.parents == record.parents)
            #expect(decoded.hasValidSignature)
        }
    }

    @Test func decodingRefusesDamage() throws {
        var a = Device(1)
        a.found()
        let record = a.make(.remove(subject: Devices.identity(2).peerID, kept: [Devices.game: 3]))
        let bytes = record.encoded
        for cut in [0, 1, 20, 60, bytes.count - 65] {
            #expect(throws: SyncDecodingError.self) { try MembershipRecord(decoding: Array(bytes.prefix(cut))) }
        }
        var v2 = bytes
        v2[0] = 2
        #expect(throws: SyncDecodingError.unknownVersion(2)) { try MembershipRecord(decoding: v2) }
        var kind = bytes
        // version, circle id, author, made-at varint (2 bytes), one parent (count + 32), then the kind.
        let kindOffset = 1 + 16 + 32 + 2 + 1 + 32
        #expect(kind[kindOffset] == MembershipChange.Kind.remove.rawValue)
        kind[kindOffset] = 9
        #expect(throws: SyncDecodingError.unknownKind(field: "membership kind", value: 9)) { try MembershipRecord(decoding: kind) }
        var forged = bytes
        forged[kindOffset + 1] ^= 1
        let decoded = try MembershipRecord(decoding: forged)
        #expect(!decoded.hasValidSignature)
    }
}

@Suite struct MembershipRuleTests {
    @Test func foundersAreMembersWhileFoundingIsOpen() {
        var a = Device(1), b = Device(2), stranger = Device(3)
        a.found()
        b.found()
        a.take(from: b)
        #expect(a.membership.view.isMember(a.peer) && a.membership.view.isMember(b.peer))
        // A founding proof under another key counts for nothing.
        stranger.make(.found(proof: CircleKey().membershipProof(for: stranger.peer)))
        a.take(from: stranger)
        #expect(!a.membership.view.isMember(stranger.peer))
        // After a rekey, a founding record the rekey had not seen counts for nothing.
        a.make(.rekey(to: CircleKey(), epoch: 1, members: [a.peer, b.peer]))
        var late = Device(4)
        late.found()
        a.take(from: late)
        #expect(!a.membership.view.isMember(late.peer))
        #expect(a.membership.view.isMember(b.peer))
    }

    @Test func anInvitationAdmitsOnceAndNotAfterRevocation() {
        var a = Device(1), b = Device(2), c = Device(3), d = Device(4)
        a.found()
        a.admit(&b)
        #expect(a.membership.view.isMember(b.peer))
        #expect(a.membership.view.invitations[Devices.invitation.peerID]?.state == .used(by: b.peer))
        // The same invitation again: no effect.
        a.make(.admit(subject: c.peer, invitation: Devices.invitation.peerID, name: "c"))
        #expect(!a.membership.view.isMember(c.peer))
        // A revoked invitation admits nobody.
        let other = Devices.identity(201)
        a.make(.invite(key: other.peerID, expiresMillis: 1 << 50))
        a.make(.revoke(key: other.peerID))
        a.make(.admit(subject: d.peer, invitation: other.peerID, name: "d"))
        #expect(!a.membership.view.isMember(d.peer))
        #expect(a.membership.view.invitations[other.peerID]?.state == .revoked(by: a.peer))
        // A non-member's admission counts for nothing.
        c.take(from: a)
        c.make(.invite(key: Devices.identity(202).peerID, expiresMillis: 1 << 50))
        c.make(.admit(subject: d.peer, invitation: Devices.identity(202).peerID, name: "d"))
        a.take(from: c)
        #expect(!a.membership.view.isMember(d.peer))
    }

    @Test func aRemovalWinsOverAConcurrentAdmission() {
        for order in 0..<2 {
            var a = Device(1), b = Device(2), x = Device(9)
            a.found()
            a.admit(&b)
            a.admit(&x, invitation: Devices.identity(210))
            b.take(from: a)
            // a removes x while b, not knowing, admits x again with a fresh invitation.
            a.make(.remove(subject: x.peer, kept: [:]))
            b.make(.invite(key: Devices.identity(211).peerID, expiresMillis: 1 << 50))
            b.make(.admit(subject: x.peer, invitation: Devices.identity(211).peerID, name: "x"))
            if order == 0 { a.take(from: b); b.take(from: a) } else { b.take(from: a); a.take(from: b) }
            #expect(a.membership.view == b.membership.view)
            #expect(!a.membership.view.isMember(x.peer))
            #expect(a.membership.view.isRemoved(x.peer))
        }
    }

    @Test func aRemovedDevicesLaterRecordsAreVoid() {
        var a = Device(1), thief = Device(2), accomplice = Device(3), guest = Device(4)
        a.found()
        a.admit(&thief)
        // Before it is lost, the device admits a guest: that stays.
        thief.admit(&guest, invitation: Devices.identity(220))
        a.take(from: thief)
        #expect(a.membership.view.isMember(guest.peer))
        // a removes it; meanwhile it admits an accomplice, which a never saw.
        a.make(.remove(subject: thief.peer, kept: [Devices.game: 5]))
        thief.admit(&accomplice, invitation: Devices.identity(221))
        thief.make(.remove(subject: a.peer, kept: [:]))
        #expect(thief.membership.view.isMember(accomplice.peer))
        a.take(from: thief)
        thief.take(from: a)
        for view in [a.membership.view, thief.membership.view] {
            #expect(view.isMember(a.peer))
            #expect(view.isMember(guest.peer))
            #expect(!view.isMember(accomplice.peer))
            #expect(!view.isMember(thief.peer))
            #expect(view.removed[thief.peer]?.kept == [Devices.game: 5])
        }
        #expect(a.membership.view == thief.membership.view)
    }

    @Test func ofTwoMutualRemovalsExactlyOneStands() {
        var a = Device(1), b = Device(2), c = Device(3)
        a.found()
        a.admit(&b)
        a.admit(&c, invitation: Devices.identity(230))
        b.take(from: a)
        a.make(.remove(subject: b.peer, kept: [:]))
        b.make(.remove(subject: a.peer, kept: [:]))
        c.take(from: b)
        c.take(from: a)
        a.take(from: b)
        let view = c.membership.view
        #expect(view == a.membership.view)
        #expect(view.isMember(a.peer) != view.isMember(b.peer))
        #expect(view.isMember(c.peer))
    }

    @Test func rekeysSealTheKeyToMembersAndFollowRemovals() throws {
        var a = Device(1), b = Device(2), x = Device(3)
        a.found()
        a.admit(&b)
        a.admit(&x, invitation: Devices.identity(240))
        b.take(from: a)
        a.make(.remove(subject: x.peer, kept: [:]))
        #expect(a.membership.view.needsRekey)
        let next = CircleKey()
        a.make(.rekey(to: next, epoch: 1, members: [a.peer, b.peer]))
        #expect(!a.membership.view.needsRekey)
        b.take(from: a)
        let epoch = try #require(b.membership.view.epochs.first)
        #expect(epoch.key(for: b.identity) == next)
        #expect(epoch.key(for: x.identity) == nil)
        // A removal by b that a's rekey had not seen calls for another key.
        var y = Device(4)
        b.admit(&y, invitation: Devices.identity(241))
        a.take(from: b)
        b.make(.remove(subject: y.peer, kept: [:]))
        a.make(.rekey(to: CircleKey(), epoch: 2, members: [a.peer, b.peer, y.peer]))
        a.take(from: b)
        #expect(a.membership.view.currentEpoch == 2)
        #expect(a.membership.view.needsRekey)
        // A rekey that skips an epoch counts for nothing.
        a.make(.rekey(to: CircleKey(), epoch: 5, members: [a.peer]))
        #expect(a.membership.view.currentEpoch == 2)
    }

    /// A rekey sealed to more devices than any circle has (made-up
    /// recipients: megabytes that every hello would then carry) is refused
    /// wherever it goes; one sealed to the members is taken.
    @Test func aRekeySealedToTooManyRecipientsIsRefused() {
        var a = Device(1), b = Device(2)
        a.found()
        a.admit(&b)
        let crowd = [a.peer, b.peer] + (0..<CircleMembership.rekeyRecipientLimit).map { _ in SigningIdentity().peerID }
        let big = a.make(.rekey(to: CircleKey(), epoch: 1, members: crowd))
        #expect(big.encoded.count > 100_000)
        let outcome = b.membership.insert([big])
        #expect(outcome.refused == [.oversized] && outcome.added.isEmpty)
        #expect(b.membership.view.epochs.isEmpty)
        let fit = a.make(.rekey(to: CircleKey(), epoch: 1, members: [a.peer, b.peer]))
        #expect(b.membership.insert([fit]).added == [fit])
    }

    @Test func recordsWaitForTheirParentsAndBadOnesAreRefused() {
        var a = Device(1), b = Device(2)
        a.found()
        let invite = a.make(.invite(key: Devices.invitation.peerID, expiresMillis: 1 << 50))
        let admit = a.make(.admit(subject: b.peer, invitation: Devices.invitation.peerID, name: "b"))
        let founding = a.membership.ordered[0]
        var outcome = b.membership.insert([admit, invite])
        #expect(outcome.waiting == 2 && outcome.added.isEmpty)
        outcome = b.membership.insert([founding])
        #expect(outcome.added.count == 3)
        #expect(b.membership.view.isMember(b.peer))
        #expect(b.membership.heads == [admit.hash])
        var elsewhere = CircleMembership(firstKey: CircleKey())
        #expect(elsewhere.insert([founding]).refused == [.otherCircle])
        var forged = founding.encoded
        forged[forged.count - 1] ^= 1
        if let bad = try? MembershipRecord(decoding: forged) {
            var fresh = CircleMembership(firstKey: Devices.firstKey)
            #expect(fresh.insert([bad]).refused == [.badSignature])
        }
    }
}

@Suite struct MembershipConvergenceTests {
    /// Devices that invite, admit, remove and rekey at random, exchanging
    /// their records in random pairs; once every record has reached every
    /// device, all derive the same view.
    @Test(arguments: 0..<40)
    func devicesThatExchangeEverythingAgree(seed: UInt64) {
        var rng = SplitMix(seed: seed)
        var devices = (1...6).map { Device(UInt8($0)) }
        devices[0].found()
        devices[1].found()
        var nextInvitation: UInt8 = 100
        for _ in 0..<40 {
            let i = Int(rng.next() % UInt64(devices.count))
            let j = Int(rng.next() % UInt64(devices.count))
            switch rng.next() % 5 {
            case 0, 1:
                devices[i].take(from: devices[j])
            case 2 where i != j && !devices[j].membership.view.isMember(devices[j].peer):
                nextInvitation &+= 1
                var other = devices[j]
                devices[i].admit(&other, invitation: Devices.identity(nextInvitation))
                devices[j] = other
            case 3 where i != j:
                devices[i].make(.remove(subject: devices[j].peer, kept: [Devices.game: rng.next() % 9]))
            case 4:
                let view = devices[i].membership.view
                devices[i].make(.rekey(to: CircleKey(), epoch: view.currentEpoch + 1, members: view.members.keys))
            default:
                break
            }
        }
        for _ in 0..<2 {
            for i in devices.indices {
                for j in devices.indices where i != j { devices[i].take(from: devices[j]) }
            }
        }
        let first = devices[0].membership.view
        for d in devices {
            #expect(d.membership.view == first)
            #expect(d.membership.records.count == devices[0].membership.records.count)
        }
        for peer in first.removed.keys { #expect(!first.isMember(peer)) }
        // Nobody can remove itself, and of mutual removals one stands: someone is always left.
        #expect(!first.members.isEmpty)
    }
}

/// A small deterministic generator (SplitMix64).
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
