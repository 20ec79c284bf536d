import SweeperCrypto
import SweeperSync
import Testing

@testable import SweeperMembership

/// A player hosted by a device: an invitation whose key is the player's
/// own, admitted with it by the same device. Every device derives the
/// player as a member hosted by that device; an ordinary admission names
/// no host, and a member whose invitations are off hosts nobody.
@Suite struct HostedAdmissionTests {
    /// `host` hosts `player` as the daemon does (invite the player's own key, admit it).
    @discardableResult
    static func host(_ player: PeerID, by host: inout Device) -> Bool {
        guard host.make(.invite(key: player, expiresMillis: host.clock + 600_000)) != nil else { return false }
        return host.make(.admit(subject: player, invitation: player, name: "Sam", through: 0)) != nil
    }

    @Test func everyDeviceSeesTheHostedPlayerAsAMemberHostedByItsHost() throws {
        var (dad, mum, max) = family()
        let sam = Devices.identity(40).peerID
        #expect(Self.host(sam, by: &max))
        #expect(max.view.members[sam]?.hostedBy == max.peer)
        // Another device, with the records in another order, derives the same.
        mum.take(from: max)
        dad.take(from: mum)
        for device in [dad, mum] {
            let member = try #require(device.view.members[sam], "the hosted player is not a member on \(device.peer.shortDescription)")
            #expect(member.hostedBy == max.peer)
            #expect(member.name == "Sam")
            #expect(member.role == .member)
        }
        // An ordinary admission names no host.
        #expect(dad.view.members[max.peer]?.hostedBy == nil)
        #expect(dad.view.members[mum.peer]?.hostedBy == nil)
        // An admin removes the hosted player like any device.
        #expect(dad.remove(sam) != nil)
        #expect(dad.view.isRemoved(sam))
        #expect(!dad.view.isMember(sam))
    }

    @Test func aMemberWhoseInvitationsAreOffHostsNobody() throws {
        var (dad, mum, max) = family()
        #expect(mum.invitations(of: max.peer, allowed: false) != nil)
        max.take(from: mum)
        dad.take(from: mum)
        let sam = Devices.identity(41).peerID
        // Made on a device that ignores the switch (records forged in order), the
        // admission counts nowhere: the records exist, the member does not.
        let invite = forge(max.identity, seq: 1, previous: nil, .invite(key: sam, expiresMillis: 10_000_000))
        let admit = forge(max.identity, seq: 2, previous: invite.hash, .admit(subject: sam, invitation: sam, name: "Sam", through: 0))
        let outcome = dad.membership.insert([invite, admit])
        #expect(outcome.added.count == 2, "the records were not taken, so the test shows nothing")
        #expect(!dad.view.isMember(sam), "a member with invitations off hosted a player")
        // Max's own daemon derives the same: whatever it signs, the player is no member.
        let tom = Devices.identity(42).peerID
        Self.host(tom, by: &max)
        #expect(!max.view.isMember(tom))
    }
}
