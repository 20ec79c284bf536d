import SweeperCrypto
import SweeperSync
import Testing

@testable import SweeperMembership

/// A cut (a removal, an invitations switch, a promotion, a second
/// admission) names the subject's records its author held, by their
/// hashes; a device that signs two records at one place of its chain
/// voids its own records from that place on. Each test is an attack that
/// counted on the release before this rule, where a cut named a *place*
/// and both records at one place counted.
/// What a device in bad faith writes at its places 1 and 2 again: an
/// invitation (its key from seed `key`) and the admission of a puppet
/// identity (seed `puppet`) with it.
func forkAdmitting(by who: SigningIdentity, puppet: UInt8, key: UInt8) -> (puppet: SigningIdentity, invite: MembershipRecord, admit: MembershipRecord) {
    let identity = Devices.identity(puppet)
    let invitation = Devices.identity(key).peerID
    let invite = forge(who, seq: 1, previous: nil, .invite(key: invitation, expiresMillis: 9_999_999))
    let admit = forge(who, seq: 2, previous: invite.hash, .admit(subject: identity.peerID, invitation: invitation, name: "p", through: 0))
    return (identity, invite, admit)
}

@Suite struct CutAndForkTests {
    /// Max writes two invitations, then is removed (the cut names his
    /// second record). With his old key he writes, at his places 1 and 2
    /// again, an invitation and the admission of a fresh identity of his
    /// own, and hands them to Mum's laptop, which slept through the removal.
    @Test func aRemovedDevicesForkBeforeItsCutAdmitsNobody() throws {
        var (dad, mum, max) = family()
        max.invite()
        max.invite()
        dad.take(from: max)
        var asleep = mum
        asleep.take(from: max)
        let madeRemove = dad.remove(max.peer)
        try #require(madeRemove != nil)
        let (puppet, invite, admit) = forkAdmitting(by: max.identity, puppet: 70, key: 71)
        // The member that missed the removal takes the fork (both records
        // at places it holds already: each is the second at its place).
        let outcome = asleep.membership.insert([invite, admit])
        #expect(outcome.added.count == 2, "the attack needs the forged records held")
        #expect(!asleep.view.isMember(puppet.peerID), "a fork voids the forker from its first forked place")
        #expect(asleep.view.equivocations[max.peer] == [1, 2])
        // Once the removal arrives, and on the device that made it, the same.
        asleep.take(from: dad)
        dad.membership.insert([invite, admit])
        #expect(dad.membership.records[admit.hash] != nil)
        #expect(!dad.view.isMember(puppet.peerID) && !asleep.view.isMember(puppet.peerID))
        #expect(dad.view == asleep.view)
        // The removed device's fork is shown, removed as it is.
        #expect(dad.view.isRemoved(max.peer) && dad.view.equivocations[max.peer] == [1, 2])
        // What Max wrote before his removal still stands: his two invitations.
        #expect(dad.view.invitations.values.filter { $0.madeBy == max.peer }.count == 2)
    }

    /// A member that missed nothing but whose device was never shown the
    /// real chain (it took only the forged branch) holds the puppet
    /// admitted; once it is handed the removal, which waits for the
    /// records it names, the puppet is gone.
    @Test func aForkedBranchAloneIsUndoneByTheCutThatNamesTheRealOne() throws {
        var (dad, mum, max) = family()
        var cat = Device(4)
        dad.admit(&cat)  // Cat holds none of Max's records
        max.invite()
        max.invite()
        dad.take(from: max)
        let madeRemove = dad.remove(max.peer)
        try #require(madeRemove != nil)
        let (puppet, invite, admit) = forkAdmitting(by: max.identity, puppet: 72, key: 73)
        cat.membership.insert([invite, admit])
        #expect(cat.view.isMember(puppet.peerID), "the attack needs a device that holds only the forged branch")
        cat.take(from: dad)
        #expect(!cat.view.isMember(puppet.peerID))
        #expect(cat.view.members == dad.view.members && cat.view.removed == dad.view.removed)
        _ = mum
    }

    /// Max's invitations are off (the cut names his second record); he
    /// writes an invitation and an admission at his places 1 and 2 again.
    @Test func invitationsOffCannotBeDodgedByAFork() throws {
        var (dad, mum, max) = family()
        max.invite()
        max.invite()
        dad.take(from: max)
        let madeInvitations = dad.invitations(of: max.peer, allowed: false)
        try #require(madeInvitations != nil)
        let (puppet, invite, admit) = forkAdmitting(by: max.identity, puppet: 74, key: 75)
        // A device holding only the switch and the forged branch: the switch
        // waits for Max's real records, which it names.
        var other = mum
        other.membership.insert([invite, admit])
        other.take(from: dad)
        dad.membership.insert([invite, admit])
        #expect(dad.membership.records[admit.hash] != nil, "the attack needs the record delivered")
        #expect(!dad.view.isMember(puppet.peerID) && !other.view.isMember(puppet.peerID))
        #expect(dad.view.members[max.peer]?.invites == false)
    }

    /// Mum, an admin, wrote two records; the founder removes her. With her
    /// old key she writes, at her place 1 again, a removal of Max.
    @Test func aRemovedAdminsForkRemovesNobody() throws {
        var (dad, mum, max) = family()
        mum.invite()
        mum.invite()
        dad.take(from: mum)
        let madeRemove = dad.remove(mum.peer)
        try #require(madeRemove != nil)
        let removal = forge(mum.identity, seq: 1, previous: nil, .remove(subject: max.peer, through: 0, kept: [:]))
        dad.membership.insert([removal])
        #expect(dad.membership.records[removal.hash] != nil, "the attack needs the record delivered")
        #expect(dad.view.isMember(max.peer))
        #expect(dad.view.equivocations[mum.peer] == [1])
    }

    /// Max is removed and the founder makes the new key; Max writes, at his
    /// place 1 again, a rekey to a key he chose.
    @Test func aRemovedDevicesForkedRekeySetsNoKey() throws {
        var (dad, mum, max) = family()
        max.invite()
        dad.take(from: max)
        let madeRemove = dad.remove(max.peer)
        try #require(madeRemove != nil)
        let madeRekey = dad.make(.rekey(to: CircleKey(), epoch: 1, members: dad.view.members.keys))
        let rekey = try #require(madeRekey)
        let chosen = CircleKey()
        let forged = forge(max.identity, seq: 1, previous: nil, .rekey(to: chosen, epoch: 2, members: [mum.peer, dad.peer]))
        dad.membership.insert([forged])
        #expect(dad.membership.records[forged.hash] != nil, "the attack needs the record delivered")
        #expect(dad.view.currentEpoch == 1 && dad.view.epochs.last?.record == rekey.hash)
    }

    /// A cut that claims a place beyond the records its author held takes
    /// effect after the newest of them: an admin in bad faith cannot void
    /// a member's records not yet written by naming a far place.
    @Test func aCutTakesEffectAfterTheNewestRecordItNames() throws {
        var (dad, mum, max) = family()
        max.invite()
        dad.take(from: max)
        mum.take(from: max)
        // Mum turns Max's invitations off "through" place 1,000.
        let madeMake = mum.make(.invitations(subject: max.peer, through: 1_000, allowed: false))
        try #require(madeMake != nil)
        dad.take(from: mum)
        #expect(dad.view.members[max.peer]?.invites == false)
        // Dad turns them on again; Max invites: it counts.
        let madeInvitations = dad.invitations(of: max.peer, allowed: true)
        try #require(madeInvitations != nil)
        max.take(from: dad)
        let key = max.invite()
        dad.take(from: max)
        #expect(dad.view.invitations[key]?.state == .open)
        #expect(dad.view.members[max.peer]?.invites == true)
    }

    /// A member in bad faith forks its chain: from that place on its
    /// records count for nothing, whichever branch came first, and it is shown.
    @Test func aForkVoidsTheForkerFromThatPlaceOn() throws {
        var (dad, mum, max) = family()
        let before = max.invite()
        dad.take(from: max)
        let head = try #require(max.membership.chainHead(of: max.peer))
        let a = forge(max.identity, seq: head.seq + 1, previous: head.hash, .invite(key: Devices.identity(76).peerID, expiresMillis: 9_999_999))
        let b = forge(max.identity, seq: head.seq + 1, previous: head.hash, .invite(key: Devices.identity(77).peerID, expiresMillis: 9_999_999))
        let later = forge(max.identity, seq: head.seq + 2, previous: a.hash, .invite(key: Devices.identity(78).peerID, expiresMillis: 9_999_999))
        var one = dad, two = mum
        two.take(from: dad)
        one.membership.insert([a, later])
        #expect(one.view.invitations[Devices.identity(78).peerID] != nil, "before the proof, the branch counts")
        one.membership.insert([b])
        two.membership.insert([b, a, later])
        for view in [one.view, two.view] {
            #expect(view.invitations[Devices.identity(76).peerID] == nil)
            #expect(view.invitations[Devices.identity(77).peerID] == nil)
            #expect(view.invitations[Devices.identity(78).peerID] == nil)
            #expect(view.invitations[before] != nil, "what it wrote before the fork stands")
            #expect(view.equivocations[max.peer] == [head.seq + 1])
        }
        #expect(one.view == two.view)
        // A third record at that place is kept like the others (so that
        // every device comes to hold the same records), and counts no more.
        let c = forge(max.identity, seq: head.seq + 1, previous: head.hash, .invite(key: Devices.identity(79).peerID, expiresMillis: 1))
        #expect(one.membership.insert([c]).added.count == 1 && one.view.invitations[Devices.identity(79).peerID] == nil)
    }

    /// A cut names its subject's newest record even when the author's heads
    /// are more than a record may name.
    @Test func aCutNamesItsSubjectAmongManyHeads() throws {
        var (dad, mum, max) = family()
        max.invite()
        dad.take(from: max)
        // 70 members each invite once: 70 heads at Dad's.
        var others: [Device] = []
        for n in 0..<70 {
            var d = Device(UInt8(120 + n))
            dad.admit(&d)
            others.append(d)
        }
        for i in others.indices {
            others[i].take(from: dad)
            others[i].invite()
        }
        for d in others { dad.take(from: d) }
        #expect(dad.membership.heads.count > MembershipRecord.parentLimit)
        let madeRemoval = dad.remove(max.peer)
        let removal = try #require(madeRemoval)
        let maxHead = try #require(dad.membership.chainHead(of: max.peer))
        #expect(removal.parents.contains(maxHead.hash) || removal.previous == maxHead.hash)
        _ = mum
    }

    /// A member whose invitations were off is removed, then admitted again
    /// by the founder: it invites again (the old switch does not come
    /// back), and the view says what its removal kept.
    @Test func aDeviceAdmittedAgainStartsAfresh() throws {
        var (dad, mum, max) = family()
        let madeOff = dad.invitations(of: max.peer, allowed: false)
        try #require(madeOff != nil)
        max.take(from: dad)
        let madeRemove = dad.remove(max.peer)
        try #require(madeRemove != nil)
        #expect(dad.view.isRemoved(max.peer))
        let key = dad.invite()
        let madeAdmit = dad.make(.admit(subject: max.peer, invitation: key, name: "Max", through: dad.membership.chainHead(of: max.peer)?.seq ?? 0))
        let admission = try #require(madeAdmit)
        #expect(dad.view.isMember(max.peer) && !dad.view.isRemoved(max.peer))
        #expect(dad.view.members[max.peer]?.invites == true)
        #expect(dad.view.members[max.peer]?.readmission == MembershipView.Readmission(record: admission.hash, kept: [Devices.game: 1]))
        max.take(from: dad)
        let invitation = max.invite()
        dad.take(from: max)
        mum.take(from: dad)
        #expect(dad.view.invitations[invitation]?.state == .open && mum.view == dad.view)
    }

    /// A holder of the circle key that no admission names sends large
    /// records naming parents nobody has: the waiting room stays within its
    /// bytes, a member's record that must wait still gets in, and records
    /// let go after ten minutes.
    @Test func recordsNamingMadeUpParentsAreBoundedAndExpire() throws {
        var (dad, mum, max) = family()
        let stranger = Devices.identity(99)
        var kept: [GameID: UInt64] = [:]
        for n in 0..<6_000 {
            var bytes = [UInt8](repeating: 0, count: 16)
            bytes[0] = UInt8(n & 0xFF)
            bytes[1] = UInt8(n >> 8)
            if let id = GameID(bytes: bytes) { kept[id] = 1 }
        }
        var sent = 0
        for n in 0..<80 {
            let parent = forge(Devices.identity(98), seq: UInt64(n + 1), previous: nil, .invite(key: stranger.peerID, expiresMillis: 1)).hash
            let big = forge(stranger, seq: 1, previous: nil, parents: [parent], .remove(subject: max.peer, through: UInt64(n), kept: kept))
            sent += big.encoded.count
            dad.membership.insert([big], arrivedMillis: 1_000)
        }
        #expect(sent > CircleMembership.waitingByteLimit + CircleMembership.waitingByteLimit / 2, "the attack needs more bytes than the room")
        #expect(dad.membership.waitingBytes <= CircleMembership.waitingByteLimit && dad.membership.waitingCount > 0)
        // Max's two newest records, newest first: the first waits for the second, and gets in.
        max.invite()
        max.invite()
        let newest = Array(max.membership.ordered.suffix(2).reversed())
        let first = dad.membership.insert([newest[0]], arrivedMillis: 2_000)
        #expect(first.waiting == 1 && first.refused.isEmpty)
        #expect(dad.membership.insert([newest[1]], arrivedMillis: 3_000).added.count == 2)
        // Ten minutes on, whatever still waits is let go.
        dad.membership.insert([], arrivedMillis: 3_000 + 10 * 60 * 1000 + 1)
        #expect(dad.membership.waitingCount == 0 && dad.membership.waitingBytes == 0)
        _ = mum
    }
}
