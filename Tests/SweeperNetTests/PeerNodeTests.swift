import Foundation
import Logging
import NIOCore
import NIOPosix
import SweeperCrypto
import SweeperTestSupport
import Synchronization
import Testing

@testable import SweeperNet

/// Records what a node hands to its sync layer.
final class RecordingDelegate: PeerNodeDelegate {
    private let log = Mutex<(up: [PeerLinkHandle], down: [PeerLinkHandle], received: [[UInt8]])>(([], [], []))

    var up: [PeerLinkHandle] { log.withLock { $0.up } }
    var down: [PeerLinkHandle] { log.withLock { $0.down } }
    var received: [[UInt8]] { log.withLock { $0.received } }
    var openLinks: [PeerLinkHandle] { log.withLock { l in l.up.filter { !l.down.contains($0) } } }

    func linkEstablished(_ link: PeerLinkHandle) -> LinkReceiver {
        log.withLock { $0.up.append(link) }
        return { message in self.log.withLock { $0.received.append(message.body) } }
    }
    func linkClosed(_ link: PeerLinkHandle) { log.withLock { $0.down.append(link) } }
}

/// A running node on loopback, stopped by `stop()`.
struct TestNode {
    let node: PeerNode
    let delegate = RecordingDelegate()
    let task: Task<Void, any Error>
    let port: Int

    init(circle: CircleKey, name: String, configuration: PeerNodeConfiguration = PeerNodeConfiguration()) async throws {
        var logger = Logger(label: "test.\(name)")
        logger.logLevel = .critical
        node = PeerNode(
            credentials: NodeCredentials(circle: circle, identity: SigningIdentity(), name: name), configuration: configuration,
            delegate: delegate, logger: logger)
        let bound = try await node.listen(on: [("127.0.0.1", 0)])
        port = bound.first?.port ?? 0
        let node = self.node
        task = Task { try await node.run() }
    }

    func stop() async {
        await node.shutdown()
        _ = await task.result
    }
}

@Suite(.serialized) struct PeerNodeTests {
    /// The most a TCP socket's send and receive buffers grow to here
    /// (`tcp_wmem` and `tcp_rmem`, their last fields), 8 MiB when unknown.
    static func socketBufferCeilings() -> Int {
        func ceiling(_ name: String) -> Int? {
            guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/\(name)", encoding: .utf8) else { return nil }
            return text.split(whereSeparator: \.isWhitespace).last.flatMap { Int($0) }
        }
        guard let w = ceiling("tcp_wmem"), let r = ceiling("tcp_rmem") else { return 8 << 20 }
        return w + r
    }

    /// While more than the send buffer limit waits on a link, a droppable
    /// sync message (a catch-up) is dropped and any other is still sent,
    /// after what waits: the sessions rely on the stream for those.
    @Test func aFullLinkDropsOnlyDroppableMessages() async throws {
        let circle = CircleKey()
        // More than one write on loopback can ever take (the kernel's
        // ceilings of a socket's send and receive buffers, which it grows
        // to as a link warms up): it leaves the link over its limit for this
        // turn of its loop, however the buffers stand.
        let big = [UInt8](repeating: 7, count: Self.socketBufferCeilings() + (1 << 20))
        var small = PeerNodeConfiguration()
        small.sendBufferLimit = 1 << 10
        small.frameLimit = big.count + (1 << 20)
        var roomy = PeerNodeConfiguration()
        roomy.frameLimit = small.frameLimit
        let a = try await TestNode(circle: circle, name: "alice", configuration: small)
        let b = try await TestNode(circle: circle, name: "bob", configuration: roomy)
        await a.node.addStaticPeer(host: "127.0.0.1", port: b.port)
        #expect(await eventuallyAsync { a.delegate.openLinks.count == 1 && b.delegate.openLinks.count == 1 })
        let link = try #require(a.delegate.openLinks.first)
        let writableAfterBig = try await link.channel.eventLoop.submit {
            link.send(ApplicationMessage(type: 1, body: big), droppable: true)
            let writable = link.isWritable
            link.send(ApplicationMessage(type: 1, body: [1]), droppable: true)
            link.send(ApplicationMessage(type: 1, body: [2]), droppable: false)
            return writable
        }.get()
        #expect(!writableAfterBig)
        #expect(await eventuallyAsync { b.delegate.received.contains([2]) })
        let received = b.delegate.received
        #expect(received.count == 2 && received.first?.count == big.count && received.last == [2], "the droppable message was sent, or order was lost")
        await a.stop()
        await b.stop()
    }

    @Test func membersLinkAndExchangeSyncMessagesBothWays() async throws {
        let circle = CircleKey()
        let a = try await TestNode(circle: circle, name: "alice")
        let b = try await TestNode(circle: circle, name: "bob")
        await a.node.addStaticPeer(host: "127.0.0.1", port: b.port)
        #expect(
            await eventuallyAsync {
                let x = a.delegate.openLinks.count, y = b.delegate.openLinks.count; return x == 1 && y == 1
            })
        let fromA = try #require(a.delegate.openLinks.first)
        let fromB = try #require(b.delegate.openLinks.first)
        #expect(fromA.peer == b.node.peerID)
        #expect(fromB.peer == a.node.peerID)
        fromA.send(ApplicationMessage(type: 1, body: [1, 2, 3]), droppable: false)
        fromB.send(ApplicationMessage(type: 1, body: [4, 5]), droppable: false)
        #expect(
            await eventuallyAsync {
                let x = b.delegate.received, y = a.delegate.received; return x == [[1, 2, 3]] && y == [[4, 5]]
            })
        // The hello names the peer; `peers` shows it connected, found statically on one side and incoming on the other.
        #expect(await eventuallyAsync { await a.node.snapshot().first?.name == "bob" })
        let seenByA = try #require(await a.node.snapshot().first)
        #expect(seenByA.state == .connected)
        #expect(seenByA.origins == [.static])
        #expect(await b.node.snapshot().first?.origins == [.incoming])
        await a.stop()
        #expect(await eventuallyAsync { b.delegate.openLinks.isEmpty })
        await b.stop()
    }

    @Test func keepAlivesMeasureTheRoundTrip() async throws {
        var fast = PeerNodeConfiguration()
        fast.pingInterval = .milliseconds(50)
        let circle = CircleKey()
        let a = try await TestNode(circle: circle, name: "a", configuration: fast)
        let b = try await TestNode(circle: circle, name: "b", configuration: fast)
        await a.node.addStaticPeer(host: "127.0.0.1", port: b.port)
        #expect(await eventuallyAsync { await a.node.snapshot().first?.roundTrip != nil })
        await a.stop()
        await b.stop()
    }

    @Test func dialingEachOtherAtOnceLeavesOneLink() async throws {
        let circle = CircleKey()
        let a = try await TestNode(circle: circle, name: "a")
        let b = try await TestNode(circle: circle, name: "b")
        await a.node.addStaticPeer(host: "127.0.0.1", port: b.port)
        await b.node.addStaticPeer(host: "127.0.0.1", port: a.port)
        #expect(
            await eventuallyAsync {
                let x = await a.node.connectedCount, y = await b.node.connectedCount; return x == 1 && y == 1
            })
        // Stay settled: the loser of the tie-break must not come back.
        let settled = await holdsAsync(1.5) {
            let x = await a.node.connectedCount, y = await b.node.connectedCount; return x == 1 && y == 1
        }
        let (linksA, linksB) = (await a.node.connectedCount, await b.node.connectedCount)
        #expect(settled, "a: \(linksA) links, b: \(linksB)")
        let linkA = try #require(a.delegate.openLinks.first)
        linkA.send(ApplicationMessage(type: 1, body: [9]), droppable: false)
        #expect(await eventuallyAsync { b.delegate.received.contains([9]) })
        await a.stop()
        await b.stop()
    }

    /// Each side says whom it is linked to, again whenever that changes:
    /// with a–b and b–c up, c learns that b is linked to a; once a leaves,
    /// that b is linked to nobody else.
    @Test func linkedPeersAreReportedAndKeptCurrent() async throws {
        let circle = CircleKey()
        let a = try await TestNode(circle: circle, name: "a")
        let b = try await TestNode(circle: circle, name: "b")
        let c = try await TestNode(circle: circle, name: "c")
        await a.node.addStaticPeer(host: "127.0.0.1", port: b.port)
        await c.node.addStaticPeer(host: "127.0.0.1", port: b.port)
        #expect(await eventuallyAsync { await b.node.connectedCount == 2 })
        let cToB = try #require(await eventuallyAsync { c.delegate.openLinks.count == 1 } ? c.delegate.openLinks.first : nil)
        #expect(await eventuallyAsync { cToB.reportedLinks == [a.node.peerID] })
        let aToB = try #require(a.delegate.openLinks.first)
        #expect(await eventuallyAsync { aToB.reportedLinks == [c.node.peerID] })
        await a.stop()
        #expect(await eventuallyAsync { cToB.reportedLinks.isEmpty })
        await b.stop()
        await c.stop()
    }

    @Test func aDaemonOfAnotherCircleNeverLinks() async throws {
        let a = try await TestNode(circle: CircleKey(), name: "a")
        let stranger = try await TestNode(circle: CircleKey(), name: "stranger")
        await stranger.node.addStaticPeer(host: "127.0.0.1", port: a.port)
        // The stranger dialled, and its handshake was refused.
        #expect(await eventuallyAsync { await !stranger.node.unreachedStaticPeers().isEmpty })
        #expect(a.delegate.up.isEmpty)
        #expect(stranger.delegate.up.isEmpty)
        #expect(await a.node.snapshot().isEmpty)
        await a.stop()
        await stranger.stop()
    }

    @Test func garbageAndOversizedFramesAreDroppedAndServingGoesOn() async throws {
        let circle = CircleKey()
        let a = try await TestNode(circle: circle, name: "a")
        for payload: [UInt8] in [
            Array("GET / HTTP/1.1\r\n\r\n".utf8), [0xFF, 0xFF, 0xFF, 0xFF, 1, 2], [0, 0, 0, 0], [0, 0, 0, 64] + [UInt8](repeating: 7, count: 64),
        ] {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: a.port).get()
            try await channel.writeAndFlush(ByteBuffer(bytes: payload))
            // The node closes the connection: the channel goes inactive on its own.
            #expect(await eventuallyAsync(5) { !channel.isActive })
            try? await channel.close()
        }
        #expect(a.delegate.up.isEmpty)
        // A real member still gets in.
        let b = try await TestNode(circle: circle, name: "b")
        await b.node.addStaticPeer(host: "127.0.0.1", port: a.port)
        #expect(await eventuallyAsync { a.delegate.openLinks.count == 1 })
        await a.stop()
        await b.stop()
    }

    @Test func aStalledHandshakeIsCutOff() async throws {
        var quick = PeerNodeConfiguration()
        quick.handshakeTimeout = .milliseconds(300)
        let a = try await TestNode(circle: CircleKey(), name: "a", configuration: quick)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: a.port).get()
        #expect(await eventuallyAsync(5) { !channel.isActive })
        await a.stop()
    }

    /// Connections that open and say nothing, as many as one address may
    /// hold in its handshake, do not keep out a member dialling from that
    /// address (another user's daemon on the same machine, say): the
    /// member's handshake pushes the oldest of them out.
    @Test func stalledHandshakesFromOneAddressDoNotKeepAMemberOut() async throws {
        let circle = CircleKey()
        let a = try await TestNode(circle: circle, name: "a")
        var stalled: [any Channel] = []
        for _ in 0..<PeerNodeConfiguration().handshakeLimitPerAddress {
            stalled.append(try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: a.port).get())
        }
        // Every slot of 127.0.0.1 is held (the last connection has been taken in).
        #expect(await eventuallyAsync(5) { await a.node.handshakesInFlight(from: "127.0.0.1") == stalled.count })
        let b = try await TestNode(circle: circle, name: "b")
        await b.node.addStaticPeer(host: "127.0.0.1", port: a.port)
        // Well within the handshake timeout, which would otherwise free a slot.
        #expect(await eventuallyAsync(5) { a.delegate.openLinks.count == 1 })
        #expect(stalled.contains { !$0.isActive })
        for channel in stalled { try? await channel.close() }
        await a.stop()
        await b.stop()
    }

    @Test func staticPeersAreRedialledAfterTheyRestart() async throws {
        var quick = PeerNodeConfiguration()
        quick.backoffBase = .milliseconds(50)
        quick.backoffCap = .milliseconds(200)
        let circle = CircleKey()
        let a = try await TestNode(circle: circle, name: "a", configuration: quick)
        var b = try await TestNode(circle: circle, name: "b")
        let port = b.port
        await a.node.addStaticPeer(host: "127.0.0.1", port: port)
        #expect(await eventuallyAsync { await a.node.connectedCount == 1 })
        await b.stop()
        #expect(await eventuallyAsync { await a.node.connectedCount == 0 })
        // Bring a daemon back on the same port: the dialler finds it again.
        var again: TestNode?
        for _ in 0..<50 where again == nil {
            again = try? await TestNode(circle: circle, name: "b2", port: port)
            if again == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        b = try #require(again)
        #expect(await eventuallyAsync { await a.node.connectedCount == 1 })
        await a.stop()
        await b.stop()
    }
}

extension TestNode {
    init(circle: CircleKey, name: String, port: Int) async throws {
        var logger = Logger(label: "test.\(name)")
        logger.logLevel = .critical
        node = PeerNode(
            credentials: NodeCredentials(circle: circle, identity: SigningIdentity(), name: name), delegate: delegate, logger: logger)
        let bound = try await node.listen(on: [("127.0.0.1", port)])
        self.port = bound.first?.port ?? 0
        let node = self.node
        task = Task { try await node.run() }
    }
}

@Suite struct LinkMessageTests {
    @Test func messagesRoundTrip() throws {
        let two = [SigningIdentity().peerID, SigningIdentity().peerID]
        for m: LinkMessage in [
            .hello(PeerHello(protocolVersion: 8, listenPort: 7455, name: "Ünïcode name")),
            .application(ApplicationMessage(type: 1, body: [1, 2, 3])), .application(ApplicationMessage(type: 1, body: [])),
            .ping(42), .pong(.max), .links([]), .links(two),
        ] {
            #expect(try LinkMessage(decoding: m.encoded) == m)
        }
    }

    /// The transport reads only its own types; any other goes up unread,
    /// for the application to read or refuse.
    @Test func otherTypesAreTheApplications() throws {
        for type in UInt8.min...UInt8.max where !LinkMessage.transportTypes.contains(type) {
            #expect(try LinkMessage(decoding: [type, 7]) == .application(ApplicationMessage(type: type, body: [7])))
        }
    }

    @Test func badMessagesAreRefused() {
        for bad: [UInt8] in [[], [9], [2, 1, 2], [0, 1, 0], [0, 1, 0, 0, 5, 65], [0, 1, 0, 0, 1, 0xFF]] {
            #expect(throws: PeerConnectionError.self) { try LinkMessage(decoding: bad) }
        }
        // Links: a count that does not match the ids, a partial id, or more than the limit.
        let id = SigningIdentity().peerID.bytes
        let over = LinkMessage.linksLimit + 1
        for bad: [UInt8] in [[4], [4, 0], [4, 0, 1], [4, 0, 2] + id, [4, 0, 1] + id.dropLast(), [4, UInt8(over >> 8), UInt8(over & 0xFF)]] {
            #expect(throws: PeerConnectionError.self) { try LinkMessage(decoding: bad) }
        }
    }
}
