import Foundation
import NIOCore
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
}
