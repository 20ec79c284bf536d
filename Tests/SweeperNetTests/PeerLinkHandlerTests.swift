import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOPosix
import SweeperCrypto
import Synchronization
import Testing

@testable import SweeperNet

/// The messages a link handed on.
private final class Inbox: Sendable {
    private let log = Mutex<[LinkMessage]>([])
    func add(_ message: LinkMessage) { log.withLock { $0.append(message) } }
    var all: [LinkMessage] { log.withLock { $0 } }
}

/// One end of a link in an embedded channel: the daemon's pipeline (frame
/// decoder, frame encoder, link handler) and what it hands on.
private final class LinkEnd {
    let loop = EmbeddedEventLoop()
    let channel: EmbeddedChannel
    let handler: PeerLinkHandler
    let identity = SigningIdentity()
    let inbox = Inbox()

    convenience init(pingInterval: TimeAmount = .seconds(10)) throws {
        try self.init(pace: KeepAlivePace(tick: pingInterval, silence: pingInterval * 3, perSecond: Int.max))
    }

    init(pace: KeepAlivePace) throws {
        channel = EmbeddedChannel(loop: loop)
        handler = PeerLinkHandler(eventLoop: loop, pace: pace)
        let ops = channel.pipeline.syncOperations
        try ops.addHandler(ByteToMessageHandler(FrameDecoder(limit: 1 << 20, openingLimit: 1024)))
        try ops.addHandler(MessageToByteHandler(FrameEncoder()))
        try ops.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 7455)).wait()
    }

    /// Starts the handshake; `accept` decides whether the link is kept.
    /// Application messages go to `application` when given, else with the
    /// others to the inbox.
    func start(
        _ role: SecretHandshake.Role, circle: CircleKey, accept: Bool = true, application: LinkReceiver? = nil
    ) -> EventLoopFuture<PeerID?> {
        let inbox = self.inbox
        return handler.start(SecretHandshake(role: role, circle: circle, identity: identity)) { _ in
            guard accept else { return nil }
            return PeerLinkHandler.Delivery(application: application) { message in inbox.add(message) }
        }
    }

    var messages: [LinkMessage] { inbox.all }
}

/// Moves every byte either side has written to the other until both are quiet.
private func pump(_ a: LinkEnd, _ b: LinkEnd) throws {
    for _ in 0..<100 {
        var moved = false
        for (from, to) in [(a, b), (b, a)] {
            while let bytes = try from.channel.readOutbound(as: ByteBuffer.self) {
                moved = true
                if to.channel.isActive { _ = try? to.channel.writeInbound(bytes) }
            }
        }
        if !moved { return }
    }
}

/// The result of a future of an embedded loop, nil while it is pending.
private func value<T>(_ future: EventLoopFuture<T>) -> Result<T, any Error>? {
    var result: Result<T, any Error>?
    future.assumeIsolated().whenComplete { result = $0 }
    return result
}

@Suite struct PeerLinkHandlerTests {
    @Test func handshakeThenMessagesInOrderAndPingsAnswered() throws {
        let circle = CircleKey()
        let client = try LinkEnd(pingInterval: .seconds(10))
        let server = try LinkEnd()
        let serverUp = server.start(.server, circle: circle)
        let clientUp = client.start(.client, circle: circle)
        try pump(client, server)
        #expect(try value(clientUp)?.get() == server.identity.peerID)
        #expect(try value(serverUp)?.get() == client.identity.peerID)

        // Messages are sealed in the order written and handed on in that order.
        for n: UInt8 in 1...5 { client.channel.write(LinkMessage.application(ApplicationMessage(type: 1, body: [n])), promise: nil) }
        client.channel.flush()
        server.channel.writeAndFlush(LinkMessage.links([client.identity.peerID]), promise: nil)
        try pump(client, server)
        #expect(server.messages == (1...5).map { LinkMessage.application(ApplicationMessage(type: 1, body: [$0])) })
        #expect(client.messages == [.links([client.identity.peerID])])

        // Once the interval passes the client pings; the server answers by itself.
        client.loop.advanceTime(by: .seconds(10))
        try pump(client, server)
        guard case .ping(let token)? = server.messages.last else {
            Issue.record("no ping arrived: \(server.messages)")
            return
        }
        #expect(client.messages.last == .pong(token))
        #expect(client.channel.isActive && server.channel.isActive)
    }

    @Test func oneSideOfAnIdleLinkPingsAndNeitherGoesSilent() throws {
        let client = try LinkEnd(pingInterval: .seconds(1))
        let server = try LinkEnd(pingInterval: .seconds(1))
        let (pinged, longest) = try idle(client, server, seconds: 60)
        func pings(_ m: [LinkMessage]) -> Int { m.filter { if case .ping = $0 { true } else { false } }.count }
        let sent = (client: pinged[0], server: pinged[1])
        // Before, each side pinged every second: 120 pings a minute. Now one side does, the other every tenth second.
        #expect(sent.client + sent.server <= 60 + 60 / PeerLinkHandler.roundTripEvery + 2, "pings \(sent)")
        #expect(min(sent.client, sent.server) >= 60 / PeerLinkHandler.roundTripEvery - 1, "the quiet side still times the round trip: \(sent)")
        // Each side hears something at least every second and a bit: far inside the 3 s a silent link is closed after.
        #expect(longest.allSatisfy { $0 <= 1_100 }, "longest silence heard (ms): \(longest)")
        #expect(client.channel.isActive && server.channel.isActive)

        // The pinging side falls silent (nothing it sends arrives): the other pings every interval again.
        let pinger = sent.client > sent.server ? client : server
        let quiet = pinger === client ? server : client
        let before = pings(pinger.messages)
        for _ in 0..<100 {
            for end in [client, server] { end.loop.advanceTime(by: .milliseconds(50)) }
            while let bytes = try quiet.channel.readOutbound(as: ByteBuffer.self) { _ = try? pinger.channel.writeInbound(bytes) }
            while try pinger.channel.readOutbound(as: ByteBuffer.self) != nil {}
        }
        #expect(pings(pinger.messages) - before >= 4, "in 5 s of silence the other side pinged \(pings(pinger.messages) - before) times")
    }

    /// An idle link for `seconds`, in steps of 50 ms (the server's timer
    /// 0.3 s behind the client's): the pings each side sent, and the
    /// longest each went without hearing anything (ms).
    private func idle(_ client: LinkEnd, _ server: LinkEnd, seconds: Int) throws -> (pings: [Int], longest: [Int]) {
        let circle = CircleKey()
        _ = server.start(.server, circle: circle)
        _ = client.start(.client, circle: circle)
        try pump(client, server)
        server.loop.advanceTime(by: .milliseconds(300))
        var longest = [0, 0], since = [0, 0]
        for _ in 0..<(seconds * 20) {
            for end in [client, server] { end.loop.advanceTime(by: .milliseconds(50)) }
            let before = [client.messages.count, server.messages.count]
            try pump(client, server)
            for i in 0..<2 {
                let now = [client.messages.count, server.messages.count][i]
                since[i] = now > before[i] ? 0 : since[i] + 50
                longest[i] = max(longest[i], since[i])
            }
        }
        func pings(_ m: [LinkMessage]) -> Int { m.filter { if case .ping = $0 { true } else { false } }.count }
        #expect(client.channel.isActive && server.channel.isActive)
        return ([pings(server.messages), pings(client.messages)], longest)
    }

    /// A node of 31 links (a classroom's full mesh, four keep-alive rounds
    /// a second) pings each every 7.75 s and waits 23.25 s before calling a
    /// link silent; a node of few links keeps its pace of a second, and a
    /// link between the two is kept alive by the faster side.
    @Test func aNodeOfManyLinksPingsEachLessOftenAndAPeerOfFewKeepsItsPace() throws {
        func pace(links: Int) -> KeepAlivePace {
            let pace = KeepAlivePace(tick: .seconds(1), silence: .seconds(3), perSecond: 4)
            pace.setLinks(links)
            return pace
        }
        #expect(pace(links: 3).interval == .seconds(1) && pace(links: 3).silence == .seconds(3))
        #expect(pace(links: 31).interval == .milliseconds(7_750) && pace(links: 31).silence == .milliseconds(23_250))

        // Both of many links: about one ping in 7.75 s, where a pace of a second sent 60 + 6 a minute.
        let many = try idle(LinkEnd(pace: pace(links: 31)), LinkEnd(pace: pace(links: 31)), seconds: 120)
        #expect(many.pings.reduce(0, +) <= 120 / 7 + 3, "pings \(many.pings)")
        #expect(many.longest.allSatisfy { $0 <= 8_100 }, "longest silence heard (ms): \(many.longest)")

        // One of many links, one of two: the one of two pings about every second (it leaves one out after
        // the other's rare ping), and both hear each other well within the 3 s the one of two waits.
        let mixed = try idle(LinkEnd(pace: pace(links: 31)), LinkEnd(pace: pace(links: 2)), seconds: 60)
        #expect(mixed.pings[1] >= 50, "the side of few links pinged \(mixed.pings[1]) times in a minute")
        #expect(mixed.longest.allSatisfy { $0 <= 2_000 }, "longest silence heard (ms): \(mixed.longest)")
    }

    @Test func applicationMessagesGoStraightToTheReceiverAndOneItRefusesEndsTheLink() throws {
        let circle = CircleKey()
        let client = try LinkEnd()
        let server = try LinkEnd()
        let bodies = Mutex<[[UInt8]]>([])
        _ = server.start(.server, circle: circle) { message in
            guard message.body != [0xFF] else { throw PeerConnectionError.malformedMessage("refused") }
            bodies.withLock { $0.append(message.body) }
        }
        _ = client.start(.client, circle: circle)
        try pump(client, server)
        #expect(server.handler.heard.withLockedValue { $0 } == .uptimeNanoseconds(0))

        // The receiver gets the application messages in order, the node the rest; each read is heard.
        server.loop.advanceTime(by: .seconds(3))
        for n: UInt8 in 1...3 { client.channel.write(LinkMessage.application(ApplicationMessage(type: 1, body: [n])), promise: nil) }
        client.channel.write(LinkMessage.links([client.identity.peerID]), promise: nil)
        client.channel.flush()
        try pump(client, server)
        #expect(bodies.withLock { $0 } == [[1], [2], [3]])
        #expect(server.messages == [.links([client.identity.peerID])])
        #expect(server.handler.heard.withLockedValue { $0 } == server.loop.now)

        // A message the receiver refuses ends the link with the reason.
        client.channel.writeAndFlush(LinkMessage.application(ApplicationMessage(type: 1, body: [0xFF])), promise: nil)
        try pump(client, server)
        #expect(!server.channel.isActive)
        let failure = try value(server.handler.ended)?.get()
        guard case .malformedMessage(let why)? = failure as? PeerConnectionError else {
            Issue.record("the link ended with \(String(describing: failure))")
            return
        }
        #expect(why.contains("refused"))
        #expect(bodies.withLock { $0 } == [[1], [2], [3]])
    }

    @Test func aTamperedFrameEndsTheLinkWithTheError() throws {
        let circle = CircleKey()
        let client = try LinkEnd()
        let server = try LinkEnd()
        _ = server.start(.server, circle: circle)
        _ = client.start(.client, circle: circle)
        try pump(client, server)
        client.channel.writeAndFlush(LinkMessage.application(ApplicationMessage(type: 1, body: [1, 2, 3])), promise: nil)
        var frame = try #require(try client.channel.readOutbound(as: ByteBuffer.self))
        // Flip one ciphertext byte after the 4-byte length.
        let last = frame.writerIndex - 1
        frame.setInteger(try #require(frame.getInteger(at: last, as: UInt8.self)) ^ 1, at: last)
        _ = try? server.channel.writeInbound(frame)
        #expect(!server.channel.isActive)
        #expect(server.messages.isEmpty)
        let failure = try value(server.handler.ended)?.get()
        #expect(failure is SecretStreamError)
    }

    @Test func aStrangerOfAnotherCircleFailsTheHandshake() throws {
        let client = try LinkEnd()
        let server = try LinkEnd()
        let serverUp = server.start(.server, circle: CircleKey())
        _ = client.start(.client, circle: CircleKey())
        try pump(client, server)
        #expect(!server.channel.isActive)
        #expect(throws: HandshakeError.self) { try value(serverUp)?.get() }
        #expect(try value(server.handler.ended)?.get() is HandshakeError)
    }

    @Test func framesBeforeTheStartAreHeldThenHandledAndTooManyClose() throws {
        let circle = CircleKey()
        let client = try LinkEnd()
        let server = try LinkEnd()
        // The client speaks first; the server starts late and still completes.
        _ = client.start(.client, circle: circle)
        try pump(client, server)
        let serverUp = server.start(.server, circle: circle)
        try pump(client, server)
        #expect(try value(serverUp)?.get() == client.identity.peerID)

        // A peer that sends more frames than a handshake has before it starts is cut off.
        let early = try LinkEnd()
        for _ in 0...PeerLinkHandler.heldFrameLimit {
            var frame = ByteBuffer()
            try FrameEncoder().encode(data: ByteBuffer(bytes: [1, 2, 3]), out: &frame)
            _ = try? early.channel.writeInbound(frame)
        }
        #expect(!early.channel.isActive)
        #expect(try value(early.handler.ended)?.get() is HandshakeError)
    }

    @Test func aRefusedLinkClosesWithoutFailing() throws {
        let circle = CircleKey()
        let client = try LinkEnd()
        let server = try LinkEnd()
        let serverUp = server.start(.server, circle: circle, accept: false)
        _ = client.start(.client, circle: circle)
        try pump(client, server)
        let up = try #require(value(serverUp))
        #expect(try up.get() == nil)
        #expect(!server.channel.isActive)
        let failure = try value(server.handler.ended)?.get()
        #expect(failure == nil)
    }
}

/// Pausing a link's reading is counted: two parts of the application that
/// each work off the loop for one link read again only once both are done.
@Suite struct PausedReadingTests {
    @Test func readingGoesOnOnlyWhenEveryPauseIsResumed() throws {
        // A socket's channel: an embedded one keeps no reading option.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let server = try ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).wait()
        defer { try? server.close().wait() }
        let channel = try ClientBootstrap(group: group).connect(to: try #require(server.localAddress)).wait()
        defer { try? channel.close().wait() }
        let handle = PeerLinkHandle(
            id: 1, peer: SigningIdentity().peerID, channel: channel, reported: NIOLockedValueBox([]), version: NIOLockedValueBox(0),
            heard: NIOLockedValueBox(.now()))
        func reads() throws -> Bool { try channel.getOption(ChannelOptions.autoRead).wait() }
        #expect(try reads())
        handle.pauseReading()
        handle.pauseReading()
        #expect(try !reads())
        handle.resumeReading()
        #expect(try !reads(), "one part's resume undid the other's pause")
        handle.resumeReading()
        #expect(try reads())
        // A resume too many reads on, and a later pause still holds.
        handle.resumeReading()
        handle.pauseReading()
        #expect(try !reads())
    }
}
