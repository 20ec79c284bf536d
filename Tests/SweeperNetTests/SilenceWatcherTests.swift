import Foundation
import NIOCore
import NIOEmbedded
import NIOPosix
import SweeperTestSupport
import Testing

@testable import SweeperNet

/// A link is closed for silence only when its peer was silent while the
/// event loop was free to read: a loop busy with other work for longer
/// than the timeout does not drop a peer whose pings wait in the socket.
@Suite(.serialized) struct SilenceWatcherTests {
    final class Ends: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let closed: EventLoopPromise<Void>
        init(_ promise: EventLoopPromise<Void>) { closed = promise }
        func channelInactive(context: ChannelHandlerContext) { closed.succeed(()) }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
    }

    @Test func aBusyLoopDropsNoPeerThatKeptTalkingButSilenceDoes() throws {
        let serverGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer {
            try? clientGroup.syncShutdownGracefully()
            try? serverGroup.syncShutdownGracefully()
        }
        let loop = serverGroup.next()
        let accepted = loop.makePromise(of: (any Channel).self)
        let closed = loop.makePromise(of: Void.self)
        let server = try ServerBootstrap(group: serverGroup)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(SilenceWatcher(timeout: .milliseconds(400)))
                    try channel.pipeline.syncOperations.addHandler(Ends(closed))
                    accepted.succeed(channel)
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        defer { try? server.close().wait() }
        let client = try ClientBootstrap(group: clientGroup).connect(to: try #require(server.localAddress)).wait()
        defer { try? client.close().wait() }
        _ = try accepted.futureResult.wait()
        // The peer pings every 100 ms; the server's loop is busy for 1 s,
        // more than twice the timeout.
        let pings = client.eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(50), delay: .milliseconds(100)) { _ in
            client.writeAndFlush(ByteBuffer(bytes: [0]), promise: nil)
        }
        try loop.submit { Thread.sleep(forTimeInterval: 1) }.wait()
        let serverSide = try accepted.futureResult.wait()
        #expect(holds(0.5, every: 0.05) { serverSide.isActive }, "a busy loop dropped a peer whose pings were waiting")
        // Now the peer falls silent: the link closes.
        pings.cancel()
        let start = Date()
        try closed.futureResult.wait()
        let took = Date().timeIntervalSince(start)
        print("silence: a silent peer dropped \(String(format: "%.3f", took)) s after its last ping could have come")
        // Not before the timeout less the one ping interval it may have
        // last spoken in, and on time: the check runs when the silence
        // reaches the timeout, not a polling round later.
        #expect(took >= 0.3 - 0.02, "dropped after \(took) s, before 400 ms of silence")
        #expect(took < 1.5, "dropped after \(took) s")
    }

    /// The silence a link may keep follows the node's pace: long while the
    /// node holds many links, and once it loses most of them, short again
    /// from the next byte heard (until then the check keeps its time: the
    /// peer may still ping at the slower pace it was asked for).
    @Test func theSilenceFollowsThePaceAndShortensOnlyOnceThePeerIsHeard() throws {
        let pace = KeepAlivePace(tick: .milliseconds(100), silence: .milliseconds(300), perSecond: 10)
        pace.setLinks(30)
        #expect(pace.interval == .seconds(3) && pace.silence == .seconds(9))
        let channel = EmbeddedChannel()
        let loop = try #require(channel.eventLoop as? EmbeddedEventLoop)
        try channel.pipeline.syncOperations.addHandler(SilenceWatcher(pace: pace))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 7455)).wait()
        // 6 s without a byte: inside 9 s.
        for _ in 0..<60 { loop.advanceTime(by: .milliseconds(100)) }
        #expect(channel.isActive, "closed inside the silence of a node of many links")
        // The node keeps one link: 300 ms from now on, but not before the peer is heard again.
        pace.setLinks(1)
        for _ in 0..<10 { loop.advanceTime(by: .milliseconds(100)) }
        #expect(channel.isActive, "closed before the peer was heard at the new pace")
        try channel.writeInbound(ByteBuffer(bytes: [1]))
        for _ in 0..<2 { loop.advanceTime(by: .milliseconds(100)) }
        #expect(channel.isActive)
        for _ in 0..<3 { loop.advanceTime(by: .milliseconds(100)) }
        #expect(!channel.isActive, "still open 500 ms after the last byte, at a silence of 300 ms")
    }
}
