import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SweeperCrypto

/// An established link as the sync layer sees it.
public struct PeerLinkHandle: Sendable, Hashable {
    /// Unique for the life of the node.
    public let id: UInt64
    /// The peer at the other end.
    public let peer: PeerID
    let channel: any Channel
    let reported: NIOLockedValueBox<Set<PeerID>>
    /// The peer's protocol version, from its hello (0 until it arrives).
    let version: NIOLockedValueBox<UInt8>
    /// Why the application closed the link, when it did (``close(because:)``).
    let closeReason = NIOLockedValueBox<String?>(nil)
    /// When the link's handler last read a message of the peer's, on the
    /// loop's clock (``PeerLinkHandler/heard``).
    let heard: NIOLockedValueBox<NIODeadline>
    /// How many parts of the application have paused reading (``pauseReading()``).
    let pauses = NIOLockedValueBox(0)

    /// The peers this peer last said it is linked to (``LinkMessage/links(_:)``);
    /// empty until it says, and always for peers of protocol version 1.
    public var reportedLinks: Set<PeerID> { reported.withLockedValue { $0 } }

    /// The peer's protocol version from its hello; 0 until the hello arrives.
    public var peerVersion: UInt8 { version.withLockedValue { $0 } }

    /// Sends an application message to the peer; never blocks. On the
    /// link's event loop the message is sealed and handed to the socket at
    /// once; from elsewhere it is sent in the loop's next turn. While more
    /// than ``PeerNodeConfiguration/sendBufferLimit`` bytes wait to be sent,
    /// a `droppable` message (one the application can do without, such as
    /// a catch-up that anti-entropy repairs) is dropped; any other waits its
    /// turn, since the link is a stream that loses nothing.
    public func send(_ message: ApplicationMessage, droppable: Bool = false) {
        guard !droppable || channel.isWritable else { return }
        send(.application(message))
    }

    /// Whether the link is up: false from the moment it starts to close.
    public var isOpen: Bool { channel.isActive }

    /// Whether the link takes more messages now: fewer than
    /// ``PeerNodeConfiguration/sendBufferLimit`` bytes wait to be sent.
    public var isWritable: Bool { channel.isWritable }

    /// Stops reading the peer's messages until ``resumeReading()``: what it
    /// sends waits in the socket's buffers, and its sending slows down as
    /// they fill. Messages already read still come. Pauses are counted:
    /// reading goes on once each has been resumed, so that two parts of the
    /// application that each work off the loop for the link do not undo
    /// each other's.
    public func pauseReading() {
        guard
            pauses.withLockedValue({ count in
                count += 1
                return count == 1
            })
        else { return }
        channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
    }

    /// Reads the peer's messages again after ``pauseReading()``, once every pause is resumed.
    public func resumeReading() {
        guard
            pauses.withLockedValue({ count in
                count = max(0, count - 1)
                return count == 0
            })
        else { return }
        channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
    }

    /// Sends a transport message.
    func send(_ message: LinkMessage) {
        channel.writeAndFlush(message, promise: nil)
    }

    /// Drops the link (a peer that sent something malformed), saying why:
    /// the node's "peer unlinked" line gives the reason.
    public func close(because reason: String? = nil) {
        if let reason { closeReason.withLockedValue { $0 = $0 ?? reason } }
        channel.close(promise: nil)
    }

    public static func == (a: PeerLinkHandle, b: PeerLinkHandle) -> Bool { a.id == b.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// What the application above the transport does with links.
///
/// Every call comes on the node's event loop, synchronously, from the
/// code that read the message off the socket (as do the calls of each
/// link's ``LinkReceiver``); so they must not block, and work that waits
/// belongs in a task of its own. Calls for one link come in order:
/// established, any number of its receiver's and hellos, closed.
public protocol PeerNodeDelegate: Sendable {
    /// A link to a peer is up (after the handshake): returns where its
    /// application messages go (``LinkReceiver``). None of its messages is
    /// handed on before this returns.
    func linkEstablished(_ link: PeerLinkHandle) -> LinkReceiver
    /// The link is gone.
    func linkClosed(_ link: PeerLinkHandle)
    /// A device whose handshake proved an invitation asks to be admitted;
    /// its request's signature is checked. Asked from the node's loop, which
    /// goes on while the answer is made (admitting writes the circle's
    /// records, which may wait for a writer under way).
    func admissionRequested(_ request: AdmissionRequest, from peer: PeerID) async -> AdmissionReply
    /// The peer introduced itself; `dialBack` is its address and listening
    /// port (`host:port`), when it listens.
    func helloReceived(_ hello: PeerHello, dialBack: String?, on link: PeerLinkHandle)
    /// What `sweeper peers` shows of a peer of this circle changed (a link
    /// came up or closed, a hello gave its name): its snapshot now, after
    /// the node's own state was updated.
    func peerChanged(_ snapshot: PeerSnapshot)
}

/// Where one link's application messages go: the link's handler calls it
/// with each, on the node's loop, in the call that read its frame, in
/// order; the link's next frame is read when it returns. Throw to refuse a
/// message the application cannot read (an unknown type, a body that does
/// not decode): the link is dropped, and the error logged, as for a frame
/// that does not decode.
public typealias LinkReceiver = @Sendable (ApplicationMessage) throws -> Void

extension PeerNodeDelegate {
    /// Ignores hellos.
    public func helloReceived(_ hello: PeerHello, dialBack: String?, on link: PeerLinkHandle) {}
    /// Ignores changes of peers' state.
    public func peerChanged(_ snapshot: PeerSnapshot) {}
    /// Admits nobody.
    public func admissionRequested(_ request: AdmissionRequest, from peer: PeerID) async -> AdmissionReply { .refused(.unavailable) }
}

/// What a member answers a joining device.
public enum AdmissionReply: Sendable, Equatable {
    /// Admitted: the application's messages that go first (the circle's
    /// membership records, its admission among them), then the circle's
    /// keys, the first one first.
    case admitted(messages: [ApplicationMessage], keys: [CircleKey])
    /// Not admitted.
    case refused(AdmissionRefusal)
}

/// What a joining device got from the member it reached.
public enum AdmissionAnswer: Sendable, Equatable {
    /// Admitted by `member`, with the application's messages that came
    /// first (the circle's records) and the circle's keys.
    case admitted(member: PeerID, messages: [ApplicationMessage], keys: [CircleKey])
    /// Refused by `member`.
    case refused(member: PeerID, AdmissionRefusal)
    /// No member of the invitation's circle answered.
    case noAnswer(tried: Int)
}

/// A connection as the node holds it: the channel, its protocol handler
/// (touched only on the channel's loop) and when it ended.
struct LinkChannel: Sendable {
    let channel: any Channel
    let handler: NIOLoopBound<PeerLinkHandler>
    /// Completes when the connection closes, with the error that closed it.
    let ended: EventLoopFuture<(any Error)?>
}

extension LinkChannel {
    /// Closes `channel` once its peer stays silent for the idle timeout of
    /// the node's `pace` (a live peer is heard every interval), counting
    /// only time the loop was free to read (``SilenceWatcher``). Call on
    /// the channel's loop when the link is up.
    static func watchSilence(_ channel: any Channel, _ pace: KeepAlivePace) {
        try? channel.pipeline.syncOperations.addHandler(SilenceWatcher(pace: pace), position: .first)
    }

    /// Sets up a connection's pipeline: frames and the link's protocol
    /// handler. The silence timeout comes once the link is up
    /// (``watchSilence(_:_:)``); until then the handshake timeout governs.
    static func configure(_ channel: any Channel, _ configuration: PeerNodeConfiguration, _ pace: KeepAlivePace) -> EventLoopFuture<LinkChannel> {
        channel.eventLoop.makeCompletedFuture {
            let ops = channel.pipeline.syncOperations
            try ops.addHandler(
                ByteToMessageHandler(
                    FrameDecoder(limit: configuration.frameLimit, openingLimit: configuration.handshakeFrameLimit)))
            try ops.addHandler(MessageToByteHandler(FrameEncoder()))
            let handler = PeerLinkHandler(eventLoop: channel.eventLoop, pace: pace)
            try ops.addHandler(handler)
            let limit = max(configuration.sendBufferLimit, 2)
            try channel.syncOptions?.setOption(.writeBufferWaterMark, value: ChannelOptions.Types.WriteBufferWaterMark(low: limit / 2, high: limit))
            return LinkChannel(channel: channel, handler: NIOLoopBound(handler, eventLoop: channel.eventLoop), ended: handler.ended)
        }
    }
}

/// `host:port`, or `[host]:port` for an IPv6 address: how peers'
/// addresses are written, shown and logged.
public func hostPortText(host: String, port: Int) -> String {
    // An IPv4 peer reached on a dual-stack socket shows as `::ffff:a.b.c.d`:
    // one peer, one address, so it is written as the IPv4 address it is.
    let lower = host.lowercased()
    if lower.hasPrefix("::ffff:"), lower.dropFirst(7).allSatisfy({ $0.isNumber || $0 == "." }), lower.dropFirst(7).split(separator: ".").count == 4 {
        return "\(lower.dropFirst(7)):\(port)"
    }
    return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
}

extension SocketAddress {
    /// `ip:port`, or `[ip]:port` for IPv6: how peers' addresses are shown and logged.
    public var hostPortText: String {
        guard let ip = ipAddress, let port else { return "\(self)" }
        return SweeperNet.hostPortText(host: ip, port: port)
    }
}
