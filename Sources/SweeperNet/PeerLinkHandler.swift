import Dispatch
import FoundationEssentials
import NIOConcurrencyHelpers
import NIOCore
import SweeperCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One peer connection's protocol, run on its channel's event loop: the
/// secret handshake, then a secret stream each way (its header first), then
/// ``LinkMessage``s.
///
/// Inbound it takes whole frames (from the frame decoder); outbound it takes
/// ``LinkMessage``s and seals each, in the order written, into a frame. A
/// message is handed on, decrypted and decoded, in the same call that read
/// its frame: an application message straight to the application's
/// ``LinkReceiver``, the others to the node. No task and no queue stand
/// between the socket and the application, so a peer's move reaches the
/// game and the viewers without waiting for the loop's next turn.
/// Keep-alive pings are answered here; pings are sent every
/// `pingInterval` once the link is up, by one side of an idle link (see
/// ``ping()``).
///
/// Whatever goes wrong (a frame that fails to decrypt or decode, a failed
/// handshake, a frame decoder or idle error) closes the connection; the
/// first such error is what ``ended`` reports.
final class PeerLinkHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = LinkMessage
    typealias OutboundOut = ByteBuffer

    /// Called on the loop when the handshake succeeds, with its result;
    /// returns where the link's messages go from then on, or nil to close
    /// the connection (a duplicate link, or a node shutting down). A
    /// message that its receiver refuses (by throwing) closes the
    /// connection, as a frame that does not decode does.
    typealias Establish = (HandshakeResult) -> Delivery?

    /// Where an established link's messages go: application messages
    /// straight to the application's ``LinkReceiver`` when there is one (a
    /// member's link), everything else to the node (`transport`).
    struct Delivery {
        var application: LinkReceiver?
        var transport: @Sendable (LinkMessage) throws -> Void
    }

    /// The most frames held before ``start(_:establish:)``: the peer's first
    /// handshake message is all that can legitimately come that early.
    static let heldFrameLimit = FrameDecoder.openingFrameCount

    private let pace: KeepAlivePace
    private let handshakeDone: EventLoopPromise<PeerID?>
    private let endedPromise: EventLoopPromise<(any Error)?>
    private var context: ChannelHandlerContext?
    private var started = false
    private var closed = false
    private var held: [ByteBuffer] = []
    private var handshake: SecretHandshake?
    private var establish: Establish?
    private var sender: SecretStreamSender?
    private var receiveKey: SecretBytes?
    private var receiver: SecretStreamReceiver?
    private var deliver: Delivery?
    /// When a message of the peer's was last read, on the loop's clock
    /// (set as each is read once the link is up): the node shows it as when
    /// the peer was last heard from.
    let heard = NIOLockedValueBox(NIODeadline.uptimeNanoseconds(0))
    private var failure: (any Error)?
    private var pings: RepeatedTask?
    /// When the peer's last ping came: a link whose peer pings already
    /// hears this side's pongs, so this side's own pings are mostly left out.
    private var peerPinged: NIODeadline?
    /// When this side last pinged or left a ping out: the next is due an
    /// interval after it.
    private var lastRound: NIODeadline?
    /// The pings left out since this side last sent one; it starts where
    /// the next one goes, so the first always goes (to time the round trip).
    private var pingsLeftOut = PeerLinkHandler.roundTripEvery - 1
    /// Every how many intervals a side whose peer pings sends one of its own
    /// anyway, to time the round trip again.
    static let roundTripEvery = 10

    /// Completes when the connection has closed, with the error that closed
    /// it (nil for a plain close by either side).
    let ended: EventLoopFuture<(any Error)?>

    /// Creates the handler of a channel on `eventLoop`, pinging at `pace`.
    init(eventLoop: any EventLoop, pace: KeepAlivePace) {
        self.pace = pace
        handshakeDone = eventLoop.makePromise()
        endedPromise = eventLoop.makePromise()
        ended = endedPromise.futureResult
    }

    /// Starts the handshake (frames that came before are handled now).
    /// Returns a future of the proven peer, nil when `establish` refused
    /// the link; it fails with the handshake's error or when the
    /// connection closes first. Call once, on the loop.
    func start(_ handshake: consuming SecretHandshake, establish: @escaping Establish) -> EventLoopFuture<PeerID?> {
        guard !started, !closed, let context else {
            if !closed { fail(PeerConnectionError.closedDuringHandshake) }
            return handshakeDone.futureResult
        }
        started = true
        self.establish = establish
        var handshake = handshake
        if let first = handshake.start() { writeFrame(first, context: context) }
        self.handshake = consume handshake
        let early = held
        held = []
        for frame in early where !closed { handle(frame, context: context) }
        return handshakeDone.futureResult
    }

    // MARK: ChannelHandler

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        finish()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard !closed else { return }
        guard started else {
            held.append(frame)
            if held.count > Self.heldFrameLimit { fail(HandshakeError.outOfTurn) }
            return
        }
        handle(frame, context: context)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish()
        context.fireChannelInactive()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let message = unwrapOutboundIn(data)
        guard let sender, !closed else {
            promise?.fail(ChannelError.inappropriateOperationForState)
            return
        }
        context.write(wrapOutboundOut(ByteBuffer(bytes: sender.seal(message.encoded))), promise: promise)
    }

    // MARK: The protocol

    private func handle(_ frame: ByteBuffer, context: ChannelHandlerContext) {
        do {
            if let deliver {
                guard let receiver else {
                    guard let receiveKey else { return }
                    receiver = try SecretStreamReceiver(key: receiveKey, header: Array(buffer: frame))
                    self.receiveKey = nil
                    return
                }
                let message = try LinkMessage(decoding: receiver.open(frame.readableBytesView))
                let now = context.eventLoop.now
                heard.withLockedValue { $0 = now }
                switch message {
                case .application(let body) where deliver.application != nil:
                    do {
                        try deliver.application?(body)
                    } catch {
                        throw PeerConnectionError.malformedMessage("\(error)")
                    }
                case .ping(let token):
                    peerPinged = now
                    context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: sealed(.pong(token)))), promise: nil)
                    try deliver.transport(message)
                default:
                    try deliver.transport(message)
                }
            } else if var handshake = handshake.take() {
                switch try handshake.receive(Array(buffer: frame)) {
                case .send(let reply):
                    self.handshake = consume handshake
                    writeFrame(reply, context: context)
                case .finish(let reply, let result):
                    if let reply { writeFrame(reply, context: context) }
                    established(result, context: context)
                }
            }
            // After a refused link nothing is read any more.
        } catch {
            fail(error)
        }
    }

    private func established(_ result: HandshakeResult, context: ChannelHandlerContext) {
        let sender = SecretStreamSender(key: result.sendKey)
        self.sender = sender
        receiveKey = result.receiveKey
        writeFrame(sender.header, context: context)
        guard let deliver = establish?(result) else {
            establish = nil
            handshakeDone.succeed(nil)
            closed = true
            context.close(promise: nil)
            return
        }
        establish = nil
        self.deliver = deliver
        handshakeDone.succeed(result.peer)
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        lastRound = context.eventLoop.now
        pings = context.eventLoop.scheduleRepeatedTask(initialDelay: pace.tick, delay: pace.tick) { _ in
            bound.value.ping()
        }
    }

    /// Sends a keep-alive once an interval of the node's pace has passed
    /// (looked at every tick: the interval grows with the node's links),
    /// unless the peer pinged within it: then each side already hears the
    /// other every interval (its pings one way, the pongs the other), and
    /// this side's ping would only double the traffic of an idle link. One
    /// side pings then, the other sends one every ``roundTripEvery``
    /// intervals to time the round trip; once the peer's pings stop, this
    /// side's go every interval again, so a peer gone silent is found as soon.
    private func ping() {
        guard let context, !closed else { return }
        let now = context.eventLoop.now
        let interval = pace.interval
        // A quarter tick early counts as on time: the tick's own timer drifts.
        if let lastRound, now - lastRound + .nanoseconds(pace.tick.nanoseconds / 4) < interval { return }
        lastRound = now
        if pingsLeftOut < Self.roundTripEvery - 1, let heard = peerPinged, now - heard < interval + .nanoseconds(pace.tick.nanoseconds / 4) {
            pingsLeftOut += 1
            return
        }
        pingsLeftOut = 0
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: sealed(.ping(DispatchTime.now().uptimeNanoseconds)))), promise: nil)
    }

    private func sealed(_ message: LinkMessage) -> [UInt8] {
        sender?.seal(message.encoded) ?? []
    }

    private func writeFrame(_ bytes: [UInt8], context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes)), promise: nil)
    }

    /// Records the first error and closes the connection.
    private func fail(_ error: any Error) {
        if failure == nil { failure = error }
        guard !closed else { return }
        closed = true
        context?.close(promise: nil)
    }

    /// The connection is gone: stops the pings and completes both futures.
    private func finish() {
        closed = true
        pings?.cancel()
        pings = nil
        held = []
        deliver = nil
        establish = nil
        handshakeDone.fail(failure ?? PeerConnectionError.closedDuringHandshake)
        endedPromise.succeed(failure)
    }
}
