import FoundationEssentials
import NIOCore
import NIOWebSocket
import SweeperControl
import SweeperEventLoop

/// What the daemon does with a request line from a web page: the control
/// protocol's own answer, or its subscription.
public enum WebReply: Sendable {
    /// Send this answer line.
    case answer(Data)
    /// Send this answer, then attach the subscription's events to the
    /// channel; later lines go to `received` (a viewer's `cursor`), and
    /// `end` runs when the page goes.
    case subscribe(
        answer: Data, attach: @Sendable (any Channel) -> Void, received: @Sendable (Data) async -> Void, end: @Sendable () -> Void)
}

/// Answers one request line (without its newline), as the control socket
/// does, for the player the browser plays as (a hosted player's id; nil:
/// the device's own player).
public typealias WebResponder = @Sendable (Data, String?) async -> WebReply

/// Answers one request line of one browser, whose player is known already.
typealias WebLineResponder = @Sendable (Data) async -> WebReply

/// One WebSocket of the board: each text message is a control-protocol
/// request line, each answer and event goes back as one text message.
/// Requests are answered in order; commands kept for the device's owner
/// (``ControlProtocol/webCommands``) get a `not-from-the-web` answer
/// without reaching the daemon. Binary messages, and messages over the
/// request line limit, close the socket.
final class WebSocketBridge: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// The most request lines waiting for their answers before the page
    /// counts as flooding and is dropped.
    static let waitingLimit = 256

    private let lines: AsyncStream<Data>.Continuation
    private var message: ByteBuffer?
    private var closing = false

    init(channel: any Channel, responder: @escaping WebLineResponder) {
        let (stream, continuation) = AsyncStream.makeStream(of: Data.self, bufferingPolicy: .bufferingOldest(Self.waitingLimit))
        lines = continuation
        Self.start(stream, channel: channel, responder: responder)
    }

    private static func start(_ stream: AsyncStream<Data>, channel: any Channel, responder: @escaping WebLineResponder) {
        Task(executorPreference: EventLoopTaskExecutor(channel.eventLoop)) {
            await serve(stream, channel: channel, responder: responder)
        }
    }

    /// Answers each line in turn. An answer is written whole before the
    /// next line is read (a page that asks and never reads holds one answer
    /// here, then its lines wait until ``waitingLimit`` drops it), and a
    /// socket that closed (its device revoked) runs none of the lines it
    /// left waiting.
    private static func serve(_ stream: AsyncStream<Data>, channel: any Channel, responder: WebLineResponder) async {
        var subscription: (received: @Sendable (Data) async -> Void, end: @Sendable () -> Void)?
        func send(_ data: Data) async -> Bool {
            (try? await channel.writeAndFlush(ByteBuffer(bytes: data)).get()) != nil
        }
        lines: for await line in stream {
            guard channel.isActive else { break }
            if let subscription {
                await subscription.received(line)
                continue
            }
            if let refusal = refusal(of: line) {
                guard await send(refusal) else { break lines }
                continue
            }
            switch await responder(line) {
            case let .answer(data):
                guard await send(data) else { break lines }
            case let .subscribe(answer, attach, received, end):
                subscription = (received, end)
                guard await send(answer) else { break lines }
                attach(channel)
            }
        }
        subscription?.end()
    }

    /// The answer to a line a web page may not send: a command kept for
    /// the device's owner, or a line whose command cannot be read as the
    /// daemon would read it. Nil when the line goes to the daemon.
    static func refusal(of line: Data) -> Data? {
        let fields = line.withUnsafeBytes { JSONLineReader.value($0)?.object }
        guard let fields, let head = RequestHead(members: fields) else {
            return try? ControlCoding.line(Answer<Empty>.failure(nil, .malformed("not a JSON object with an id and a command")))
        }
        guard let command = head.command else { return nil }  // the daemon answers that itself
        guard ControlProtocol.webCommands.contains(command) else {
            return try? ControlCoding.line(Answer<Empty>.failure(head.id, .notFromTheWeb(command)))
        }
        return nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            message = frame.unmaskedData
            if frame.fin { finishMessage(context) }
        case .continuation:
            guard var held = message else { return close(context, .protocolError) }
            var part = frame.unmaskedData
            held.writeBuffer(&part)
            message = held
            if frame.fin { finishMessage(context) }
        case .binary:
            close(context, .unacceptableData)
        case .ping:
            // A page that pings and never reads gets no pongs piled up for it.
            guard context.channel.isWritable else { break }
            var payload = frame.unmaskedData
            let pong = WebSocketFrame(fin: true, opcode: .pong, data: context.channel.allocator.buffer(buffer: payload))
            payload.moveReaderIndex(to: payload.writerIndex)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            close(context, .normalClosure)
        default:
            break
        }
        if let held = message, held.readableBytes > ControlProtocol.maximumLineLength {
            close(context, .messageTooLarge)
        }
    }

    private func finishMessage(_ context: ChannelHandlerContext) {
        guard let held = message else { return }
        message = nil
        guard held.readableBytes <= ControlProtocol.maximumLineLength else { return close(context, .messageTooLarge) }
        if held.readableBytes == 0 { return }
        if case .dropped = lines.yield(Data(held.readableBytesView)) {
            close(context, .policyViolation)
        }
    }

    private func close(_ context: ChannelHandlerContext, _ code: WebSocketErrorCode) {
        guard !closing else { return }
        closing = true
        message = nil
        var data = context.channel.allocator.buffer(capacity: 2)
        data.write(webSocketErrorCode: code)
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
        let channel = context.channel
        // A page that reads nothing never takes the closing frame: it goes
        // at once when answers wait to be sent, else once the frame is sent
        // or after ``closingGrace``, whichever comes first.
        guard channel.isWritable else { return channel.close(promise: nil) }
        context.writeAndFlush(wrapOutboundOut(frame)).whenComplete { _ in channel.close(promise: nil) }
        context.eventLoop.scheduleTask(in: Self.closingGrace) { channel.close(promise: nil) }
    }

    /// How long a closing frame may wait to be sent before the socket closes without it.
    static let closingGrace: TimeAmount = .seconds(5)

    func channelInactive(context: ChannelHandlerContext) {
        lines.finish()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        lines.finish()
    }
}

/// Turns each line written to the channel (an answer or an event, ending
/// in a newline) into one WebSocket text message.
final class WebSocketLineWriter: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = WebSocketFrame

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var line = unwrapOutboundIn(data)
        if line.readableBytesView.last == 0x0A { line.moveWriterIndex(to: line.writerIndex - 1) }
        context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: line)), promise: promise)
    }
}
