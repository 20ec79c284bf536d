// The bytes a peer sends, as the daemon reads them: the frame decoder
// (4-byte big-endian lengths, 16 MiB limit) in a NIO pipeline, fed in pieces
// of input-chosen sizes, with the link's own handler (PeerLinkHandler, a
// server-side handshake) behind it, as in the daemon; and every frame also
// decoded as a peer message and sync message, as after the handshake.
import FuzzSupport
import NIOCore
import NIOEmbedded
import SweeperCrypto
import SweeperMessages
import SweeperSync

@testable import SweeperNet

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPeerFrames(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let piece = Int(input.byte() % 64) + 1
    let bytes = input.rest()
    let configuration = PeerNodeConfiguration()
    let channel = EmbeddedChannel(
        handler: ByteToMessageHandler(
            FrameDecoder(limit: configuration.frameLimit, openingLimit: configuration.handshakeFrameLimit)))
    var frames = 0
    var handshake = SecretHandshake(role: .server, circle: Fixtures.circle, identity: Fixtures.players[0])
    var handshakeFailed = false
    func drain() {
        while let frame = try? channel.readInbound(as: ByteBuffer.self) {
            let message = Array(buffer: frame)
            let limit = frames < FrameDecoder.openingFrameCount ? configuration.handshakeFrameLimit : configuration.frameLimit
            check(!message.isEmpty && message.count <= limit, "frame \(frames) of \(message.count) bytes got through")
            frames += 1
            if !handshakeFailed {
                do { _ = try handshake.receive(message) } catch { handshakeFailed = true }
            }
            guard case .application(let carried)? = try? LinkMessage(decoding: message) else { continue }
            switch try? PeerMessage(type: carried.type, body: carried.body) {
            case .sync(let sync)?: _ = try? SyncMessage(decoding: sync)
            // What decodes is verified as the daemon would: a forged note is refused, never trusted.
            case .presence(let note)?: _ = note.isAuthentic
            case .profile(let note)?: check(note.name.utf8.count <= 64, "a profile name of \(note.name.utf8.count) bytes decoded")
            case .play(let note)?:
                check(note.periods.count <= PlayNote.periodLimit, "a share of played time with \(note.periods.count) periods decoded")
                _ = note.isAuthentic
            default: break
            }
        }
    }
    var offset = 0
    do {
        while offset < bytes.count {
            let end = min(bytes.count, offset + piece)
            try channel.writeInbound(ByteBuffer(bytes: bytes[offset..<end]))
            offset = end
            drain()
        }
    } catch {
        drain()
    }
    _ = try? channel.finish()
    drain()
    linkHandler(bytes, piece: piece, configuration: configuration)
    return 0
}

/// The same bytes through the daemon's pipeline: frame decoder, frame
/// encoder and the link handler in its server handshake. Whatever comes,
/// the handler must end the link with an error or wait for more, never trap,
/// and once the channel closes both of its futures must be complete.
private func linkHandler(_ bytes: [UInt8], piece: Int, configuration: PeerNodeConfiguration) {
    let loop = EmbeddedEventLoop()
    let handler = PeerLinkHandler(eventLoop: loop, pace: KeepAlivePace(tick: .seconds(10), silence: .seconds(30), perSecond: Int.max))
    let channel = EmbeddedChannel(loop: loop)
    do {
        try channel.pipeline.syncOperations.addHandler(
            ByteToMessageHandler(
                FrameDecoder(limit: configuration.frameLimit, openingLimit: configuration.handshakeFrameLimit)))
        try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(FrameEncoder()))
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 7455)).wait()
    } catch {
        check(false, "the pipeline could not be set up: \(error)")
        return
    }
    let handshake = handler.start(SecretHandshake(role: .server, circle: Fixtures.circle, identity: Fixtures.players[0])) { _ in
        PeerLinkHandler.Delivery(application: { _ in }) { _ in }
    }
    var offset = 0
    while offset < bytes.count, channel.isActive {
        let end = min(bytes.count, offset + piece)
        do { try channel.writeInbound(ByteBuffer(bytes: bytes[offset..<end])) } catch { break }
        offset = end
        while (try? channel.readOutbound(as: ByteBuffer.self)) != nil {}
    }
    _ = try? channel.finish()
    loop.run()
    var complete = false
    handshake.assumeIsolated().whenComplete { _ in complete = true }
    check(complete, "the handshake future is still pending after the channel closed")
    complete = false
    handler.ended.assumeIsolated().whenComplete { _ in complete = true }
    check(complete, "the link's end is still pending after the channel closed")
}

@_cdecl("FuzzPeerFrames_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    writeSeedsIfAsked {
        func framed(_ frames: [[UInt8]]) -> [UInt8] {
            var out: [UInt8] = []
            for f in frames {
                var b = ByteBuffer()
                try? FrameEncoder().encode(data: ByteBuffer(bytes: f), out: &b)
                out += Array(buffer: b)
            }
            return out
        }
        var client = SecretHandshake(role: .client, circle: Fixtures.circle, identity: Fixtures.players[1])
        let hello = client.start() ?? []
        let summary = SyncMessage.summary(Fixtures.replica.summary, wantsReply: true).encoded
        return [
            [8] + framed([hello]),
            [1] + framed([hello, [UInt8](repeating: 0, count: SecretHandshake.clientAuthLength)]),
            [63]
                + framed([
                    LinkMessage.hello(PeerHello(protocolVersion: PeerCapabilities.currentVersion, listenPort: 7455, name: "ann")).encoded,
                    LinkMessage.ping(42).encoded,
                ]),
            [3] + framed([PeerMessage.sync(summary).encoded, LinkMessage.pong(7).encoded]),
            [5] + framed([LinkMessage.links(Fixtures.players.map(\.peerID)).encoded, LinkMessage.links([]).encoded]),
            [7]
                + framed([
                    PeerMessage.presence(
                        PresenceNote(
                            signing: Fixtures.players[1], serial: 1_795_000_000_000,
                            spot: PresenceSpot(game: [UInt8](repeating: 7, count: 16), x: 3, y: 4))
                    ).encoded,
                    PeerMessage.presence(PresenceNote(signing: Fixtures.players[1], serial: 1_795_000_000_001, spot: nil)).encoded,
                    PeerMessage.profile(ProfileNote(signing: Fixtures.players[1], serial: 1, name: "Mum", colour: 8)).encoded,
                ]),
            [9]
                + framed(
                    PlayNote(
                        signing: Fixtures.players[1], game: [UInt8](repeating: 7, count: 16), serial: 1_795_000_000_002, earlier: 61_000,
                        periods: [PlayPeriod(start: 1_795_000_000_000, length: 3_000), PlayPeriod(start: 1_795_000_100_000, length: 0)]
                    ).map { [PeerMessage.play($0).encoded] } ?? []),
        ]
    }
    return runFuzzer(argc, argv, fuzzPeerFrames)
}
