import Foundation
import NIOCore
import SweeperCrypto
import Testing

@testable import SweeperNet

/// What a node knows of peers, without sockets.
@Suite struct PeerDirectoryTests {
    let me = SigningIdentity().peerID
    let circle = "aaaaaaaaaaaaaaaa"
    let otherCircle = "bbbbbbbbbbbbbbbb"

    func sighting(_ peer: PeerID, _ name: String, circle: String, ip: String = "198.18.0.2") throws -> PeerSighting {
        PeerSighting(peer: peer, name: name, circleTag: circle, addresses: [try SocketAddress(ipAddress: ip, port: 7455)])
    }

    @Test func aMemberSightedStartsOneDialLoop() throws {
        var d = PeerDirectory(ownID: me)
        let bob = SigningIdentity().peerID
        #expect(d.sighted(try sighting(bob, "bob", circle: circle), circleTag: circle))
        // Seen again (another address): recorded, but its dial loop runs already.
        #expect(!d.sighted(try sighting(bob, "bob", circle: circle, ip: "198.18.0.3"), circleTag: circle))
        #expect(d.dialPlan(bob)?.sighted == true)
        #expect(d.dialPlan(bob)?.addresses.count == 1)
        let listed = d.snapshot(links: [:])
        #expect(listed.map(\.id) == [bob])
        #expect(listed.first?.state == .discovered && listed.first?.origins == [.mdns])
        #expect(listed.first?.addresses == ["198.18.0.2:7455", "198.18.0.3:7455"])
        // Its own sighting is no peer.
        #expect(!d.sighted(try sighting(me, "me", circle: circle), circleTag: circle))
        #expect(d.snapshot(links: [:]).count == 1)
    }

    @Test func anIPv4PeerOnADualStackSocketHasOneAddress() throws {
        var d = PeerDirectory(ownID: me)
        let bob = SigningIdentity().peerID
        #expect(d.sighted(try sighting(bob, "bob", circle: circle), circleTag: circle))
        // It dialled in on a dual-stack socket, which names it `::ffff:198.18.0.2`; its dial-back is the address mDNS gave.
        let mapped = try SocketAddress(ipAddress: "::ffff:198.18.0.2", port: 50_000)
        #expect(mapped.ipAddress?.hasPrefix("::ffff:") == true, "the socket address is v4-mapped: \(mapped)")
        let back = try #require(PeerDirectory.dialBack(ip: mapped.ipAddress, listenPort: 7455))
        d.linked(bob, origin: .static, remote: back)
        d.linked(bob, origin: .mdns, remote: try SocketAddress(ipAddress: "::ffff:198.18.0.2", port: 7455).hostPortText)
        #expect(d.snapshot(links: [:]).first?.addresses == ["198.18.0.2:7455"])
        // A real IPv6 address keeps its brackets.
        #expect(try SocketAddress(ipAddress: "fd00::2", port: 7455).hostPortText == "[fd00::2]:7455")
    }

    @Test func anotherCirclesDaemonIsListedOnlyWhenAskedAndNeverDialled() throws {
        var d = PeerDirectory(ownID: me)
        let eve = SigningIdentity().peerID
        #expect(!d.sighted(try sighting(eve, "eve", circle: otherCircle), circleTag: circle))
        #expect(d.snapshot(links: [:]).isEmpty)
        let all = d.snapshot(links: [:], includeOtherCircles: true)
        #expect(all.count == 1 && all.first?.otherCircle == true && all.first?.id == eve && all.first?.state == .discovered)
        #expect(d.dialPlan(eve) == nil)
        d.sightingLost(eve)
        #expect(d.snapshot(links: [:], includeOtherCircles: true).isEmpty)
    }

    @Test func aLostSightingNeverLinkedLeavesTheListOneLinkedBeforeTurnsOffline() throws {
        var d = PeerDirectory(ownID: me)
        let (bob, cat) = (SigningIdentity().peerID, SigningIdentity().peerID)
        _ = d.sighted(try sighting(bob, "bob", circle: circle), circleTag: circle)
        _ = d.sighted(try sighting(cat, "cat", circle: circle), circleTag: circle)
        d.linked(cat, origin: .mdns, remote: "198.18.0.3:7455")
        d.unlinked(cat)
        d.sightingLost(bob)
        d.sightingLost(cat)
        #expect(d.snapshot(links: [:]).map(\.id) == [cat])
        #expect(d.snapshot(links: [:]).first?.state == .offline)
        // Bob's dial loop finds no plan and stops; cat's finds it unseen.
        #expect(d.dialPlan(bob) == nil)
        #expect(d.dialPlan(cat)?.sighted == false)
        d.stopDialling(cat)
        // Seen again after its loop stopped: a new loop starts.
        #expect(d.sighted(try sighting(cat, "cat", circle: circle), circleTag: circle))
        #expect(d.sighted(try sighting(bob, "bob", circle: circle), circleTag: circle))
    }

    @Test func changingCircleSortsTheSightingsAgain() throws {
        var d = PeerDirectory(ownID: me)
        let (bob, eve) = (SigningIdentity().peerID, SigningIdentity().peerID)
        _ = d.sighted(try sighting(bob, "bob", circle: circle), circleTag: circle)
        _ = d.sighted(try sighting(eve, "eve", circle: otherCircle), circleTag: circle)
        // Joining eve's circle: eve is dialled, bob becomes another circle's.
        #expect(d.circleChanged(to: otherCircle) == [eve])
        let all = d.snapshot(links: [:], includeOtherCircles: true)
        #expect(all.first { $0.id == eve }?.otherCircle == false)
        #expect(all.first { $0.id == bob && $0.otherCircle } != nil)
        #expect(d.dialPlan(bob)?.sighted == false)
    }

    @Test func namesFromTheNetworkAreCleaned() throws {
        var d = PeerDirectory(ownID: me)
        let (bob, eve) = (SigningIdentity().peerID, SigningIdentity().peerID)
        _ = d.sighted(try sighting(bob, "bo\u{1B}[31mb\n", circle: circle), circleTag: circle)
        _ = d.sighted(try sighting(eve, "\u{1B}]0;x\u{07}eve", circle: otherCircle), circleTag: circle)
        #expect(d.snapshot(links: [:]).first?.name == "bo[31mb")
        d.named(bob, "bob\u{9B}2J")
        #expect(d.snapshot(links: [:]).first?.name == "bob2J")
        #expect(d.snapshot(links: [:], includeOtherCircles: true).last?.name == "]0;xeve")
    }

    /// A host that vanished (cable cut, killed, asleep) stays in mDNS
    /// caches and is dialled again and again: once linked, it is offline,
    /// since it was last heard from, until a link comes up; one never
    /// linked whose dials fail is offline, never reached.
    @Test func aVanishedHostIsOfflineWhateverMDNSAndDialsSay() throws {
        var d = PeerDirectory(ownID: me)
        let (ann, bob) = (SigningIdentity().peerID, SigningIdentity().peerID)
        let t0 = Date(timeIntervalSince1970: 1_795_000_000)
        _ = d.sighted(try sighting(ann, "ann", circle: circle), circleTag: circle, now: t0)
        _ = d.sighted(try sighting(bob, "bob", circle: circle), circleTag: circle, now: t0)
        #expect(d.snapshot(links: [:]).first { $0.id == bob }?.state == .discovered)
        d.linked(ann, origin: .mdns, remote: "198.18.0.2:7455", now: t0)
        d.unlinked(ann, now: t0.addingTimeInterval(60))
        // Still sighted (a cache), a dial under way: offline, last heard when the link dropped.
        _ = d.sighted(try sighting(ann, "ann", circle: circle), circleTag: circle, now: t0.addingTimeInterval(120))
        d.setDialing(ann, inFlight: true)
        var listed = d.snapshot(links: [:]).first { $0.id == ann }
        #expect(listed?.state == .offline && listed?.lastHeard == t0.addingTimeInterval(60))
        // Bob's dials fail: a sighting is no longer "seen".
        d.setDialing(bob, inFlight: true)
        #expect(d.snapshot(links: [:]).first { $0.id == bob }?.state == .connecting)
        d.dialFailed(bob)
        listed = d.snapshot(links: [:]).first { $0.id == bob }
        #expect(listed?.state == .offline && listed?.lastHeard == nil)
        // A link again: linked, and the failure forgotten.
        let linkedAt = t0.addingTimeInterval(200)
        d.linked(bob, origin: .mdns, remote: "198.18.0.3:7455", now: linkedAt)
        #expect(d.snapshot(links: [bob: PeerDirectory.LinkInfo(id: 1, roundTrip: nil)]).first { $0.id == bob }?.state == .connected)
        // Heard over the link since: seen then; a read before the link came up counts for nothing.
        listed = d.snapshot(links: [bob: PeerDirectory.LinkInfo(id: 1, roundTrip: nil, heard: linkedAt.addingTimeInterval(7))]).first { $0.id == bob }
        #expect(listed?.lastSeen == linkedAt.addingTimeInterval(7) && listed?.lastHeard == linkedAt.addingTimeInterval(7))
        listed = d.snapshot(links: [bob: PeerDirectory.LinkInfo(id: 1, roundTrip: nil, heard: t0)]).first { $0.id == bob }
        #expect(listed?.lastSeen == linkedAt && listed?.lastHeard == linkedAt)
        d.unlinked(bob)
        #expect(d.snapshot(links: [:]).first { $0.id == bob }?.lastHeard != nil)
    }

    @Test func statesAndOrderOfTheSnapshot() throws {
        var d = PeerDirectory(ownID: me)
        let (ann, bob, cat, dan) = (SigningIdentity().peerID, SigningIdentity().peerID, SigningIdentity().peerID, SigningIdentity().peerID)
        _ = d.sighted(try sighting(ann, "ann", circle: circle), circleTag: circle)
        _ = d.sighted(try sighting(bob, "bob", circle: circle), circleTag: circle)
        _ = d.sighted(try sighting(cat, "cat", circle: circle), circleTag: circle)
        d.linked(dan, origin: .incoming, remote: "198.18.0.9:40000")
        d.named(dan, "zed\n")
        d.linked(cat, origin: .mdns, remote: "198.18.0.2:7455")
        d.setDialing(bob, inFlight: true)
        // Ann was linked once, so losing her sighting leaves her offline.
        d.linked(ann, origin: .mdns, remote: "198.18.0.2:7455")
        d.unlinked(ann)
        d.sightingLost(ann)
        let links = [
            cat: PeerDirectory.LinkInfo(id: 7, roundTrip: .milliseconds(2)),
            dan: PeerDirectory.LinkInfo(id: 8, roundTrip: nil),
        ]
        let listed = d.snapshot(links: links)
        // Linked first, then by name.
        #expect(listed.map(\.name) == ["cat", "zed", "ann", "bob"])
        #expect(listed.map(\.state) == [.connected, .connected, .offline, .connecting])
        #expect(listed[0].linkID == 7 && listed[0].roundTrip == .milliseconds(2))
        // An incoming connection's address is not one to dial.
        #expect(listed[1].addresses.isEmpty && listed[1].origins == [.incoming])
        d.unlinked(dan)
        #expect(d.snapshot(links: links.filter { $0.key == cat }).first { $0.id == dan }?.state == .offline)
    }
}

/// Where a peer that connected to us can be dialled later.
@Suite struct DialBackTests {
    @Test func aLinkLocalAddressWithoutItsInterfaceIsNotKept() {
        #expect(PeerDirectory.dialBack(ip: "198.18.0.2", listenPort: 7455) == "198.18.0.2:7455")
        #expect(PeerDirectory.dialBack(ip: "2001:db8::2", listenPort: 7456) == "[2001:db8::2]:7456")
        #expect(PeerDirectory.dialBack(ip: "fe80::1c2:3ff:fe44:5566", listenPort: 7455) == nil)
        #expect(PeerDirectory.dialBack(ip: "FEBF::1", listenPort: 7455) == nil)
        #expect(PeerDirectory.dialBack(ip: "198.18.0.2", listenPort: 0) == nil)
        #expect(LinkLocalAddress.isUnscoped("fe80::1") && !LinkLocalAddress.isUnscoped("fe80::1%eth0"))
        #expect(!LinkLocalAddress.isUnscoped("fec0::1") && !LinkLocalAddress.isUnscoped("feed.example"))
    }
}

/// The slots incoming handshakes hold.
@Suite struct HandshakeSlotsTests {
    @Test func aNewConnectionPushesOutTheOldestFromItsAddressThenFromTheBusiestOne() {
        var slots = HandshakeSlots<String>(limit: 3, perAddress: 2)
        #expect(slots.take(from: "a", holder: "a1").evicted == nil)
        #expect(slots.take(from: "a", holder: "a2").evicted == nil)
        // A third from one address takes the place of its oldest.
        #expect(slots.take(from: "a", holder: "a3").evicted == "a1")
        #expect(slots.count(from: "a") == 2)
        let b1 = slots.take(from: "b", holder: "b1")
        #expect(b1.evicted == nil)
        // A fourth in all: the address holding the most gives up its oldest.
        #expect(slots.take(from: "c", holder: "c1").evicted == "a2")
        #expect(slots.count() == 3)
        slots.give(back: b1.ticket)
        #expect(slots.count() == 2 && slots.count(from: "b") == 0)
        slots.give(back: 999)  // a ticket taken over or never given changes nothing
        #expect(slots.take(from: "d", holder: "d1").evicted == nil)
    }
}
