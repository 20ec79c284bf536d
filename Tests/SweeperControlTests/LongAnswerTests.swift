import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import SweeperControl

/// An answer longer than the client reads (16 MiB) fails the requests
/// waiting with a clear error, where the request used to wait for ever.
@Suite struct LongAnswerTests {
    /// Answers every request line with a line of `length` bytes.
    private final class Answerer: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let length: Int
        init(length: Int) { self.length = length }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var line = context.channel.allocator.buffer(capacity: length + 1)
            line.writeRepeatingByte(UInt8(ascii: "x"), count: length)
            line.writeInteger(UInt8(ascii: "\n"))
            context.writeAndFlush(NIOAny(line), promise: nil)
        }
    }

    @Test(.timeLimit(.minutes(1))) func anAnswerTooLongToReadFailsItsRequest() async throws {
        let path = "/tmp/sweeper-long-\(UUID().uuidString.prefix(8)).sock"
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { $0.pipeline.addHandler(Answerer(length: ControlProtocol.maximumAnswerLength + 1)) }
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).get()
        defer { unlink(path) }
        await #expect {
            try await ControlClient.withConnection(socketPath: path) { client in
                try await client.call(Commands.Status.self, Empty())
            }
        } throws: { error in
            guard case ControlClientError.badAnswer(let why) = error else { return false }
            return why.contains("over 16 MiB")
        }
        try await server.close().get()
    }
}
