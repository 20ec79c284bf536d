import Foundation
import NIOCore
import SweeperCrypto
import SweeperTestSupport
import Testing

@testable import SweeperNet

/// How a node dials the peers it met before: the address book's static
/// peers, named, are dialled as mDNS dials (the smaller id first), and one
/// peer is dialled by one loop at a time, however many name it.
@Suite(.serialized) struct PeerNodeDialTests {
    /// Two nodes, the first with the smaller id.
    static func ordered(_ circle: CircleKey, _ configuration: PeerNodeConfiguration) async throws -> (small: TestNode, large: TestNode) {
        let x = try await TestNode(circle: circle, name: "x", configuration: configuration)
        let y = try await TestNode(circle: circle, name: "y", configuration: configuration)
        return x.node.peerID < y.node.peerID ? (x, y) : (y, x)
    }

    /// A peer met before with the smaller id is dialled at once; one with
    /// the larger id only after the wait mDNS dials keep, which gives the
    /// smaller side the first dial (both dialling at start made two links,
    /// and closing one of them made the link go down and up again).
    @Test func thePeerWithTheLargerIDWaitsBeforeDiallingAPeerMetBefore() async throws {
        var configuration = PeerNodeConfiguration()
        configuration.largerIDDialDelay = .seconds(2)
        let circle = CircleKey()
        let (small, large) = try await Self.ordered(circle, configuration)
        let start = ContinuousClock.now
        await large.node.addStaticPeer(host: "127.0.0.1", port: small.port, knownAs: small.node.peerID)
        #expect(await eventuallyAsync { large.delegate.openLinks.count == 1 })
        let waited = ContinuousClock.now - start
        #expect(waited >= .seconds(2), "the larger id dialled after \(waited)")
        await small.stop()
        await large.stop()

        let (small2, large2) = try await Self.ordered(circle, configuration)
        await small2.node.addStaticPeer(host: "127.0.0.1", port: large2.port, knownAs: large2.node.peerID)
        #expect(await eventuallyAsync(1.5) { small2.delegate.openLinks.count == 1 }, "the smaller id waited")
        await small2.stop()
        await large2.stop()
    }

    /// A peer named by a static address and seen by mDNS has two dial
    /// loops: one dials while the other waits, so one link comes up, and
    /// stays, rather than the second dial's link replacing the first's.
    @Test func aPeerTwoLoopsDialGetsOneLink() async throws {
        let circle = CircleKey()
        let (small, large) = try await Self.ordered(circle, PeerNodeConfiguration())
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: large.port)
        await small.node.addStaticPeer(host: "127.0.0.1", port: large.port, knownAs: large.node.peerID)
        await small.node.sighted(PeerSighting(peer: large.node.peerID, name: "large", circleTag: circle.tag, addresses: [address]))
        #expect(await eventuallyAsync { large.delegate.openLinks.count == 1 && small.delegate.openLinks.count == 1 })
        let settled = await holdsAsync(2) { large.delegate.up.count == 1 && small.delegate.up.count == 1 }
        #expect(settled, "links up: \(small.delegate.up.count) on the dialling side, \(large.delegate.up.count) on the other")
        await small.stop()
        await large.stop()
    }
}
