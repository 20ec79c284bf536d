import NIOCore

/// Why a peer connection was dropped.
public enum PeerConnectionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A frame's length prefix is over the limit.
    case frameTooLarge(length: Int, limit: Int)
    /// A frame of length zero.
    case emptyFrame
    /// The handshake did not finish in time.
    case handshakeTimedOut
    /// The peer went quiet for too long.
    case idle
    /// The peer closed the connection mid-handshake.
    case closedDuringHandshake
    /// A message could not be decoded.
    case malformedMessage(String)

    public var description: String {
        switch self {
        case .frameTooLarge(let n, let limit): "frame of \(n) bytes is over the \(limit)-byte limit"
        case .emptyFrame: "empty frame"
        case .handshakeTimedOut: "handshake timed out"
        case .idle: "peer silent for too long"
        case .closedDuringHandshake: "peer closed the connection during the handshake"
        case .malformedMessage(let why): "malformed message: \(why)"
        }
    }
}

/// Splits the byte stream into frames: a 4-byte big-endian length, then
/// that many bytes. A length over the limit, or zero, fails the channel
/// before any of the frame is buffered.
///
/// The first ``openingFrameCount`` frames of a connection (the two
/// handshake messages each side receives and the secret-stream header) are
/// held to the much smaller `openingLimit`: a stranger who has proven
/// nothing cannot make the daemon buffer megabytes.
struct FrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer
    /// Frames received before the link is up: two handshake messages and the stream header.
    static let openingFrameCount = 3
    let limit: Int
    let openingLimit: Int
    private var framesSeen = 0

    init(limit: Int, openingLimit: Int) {
        self.limit = limit
        self.openingLimit = min(limit, openingLimit)
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return .needMoreData }
        let n = Int(length)
        let limit = framesSeen < Self.openingFrameCount ? openingLimit : self.limit
        guard n > 0 else { throw PeerConnectionError.emptyFrame }
        guard n <= limit else { throw PeerConnectionError.frameTooLarge(length: n, limit: limit) }
        guard buffer.readableBytes >= 4 + n else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: 4)
        guard let frame = buffer.readSlice(length: n) else { return .needMoreData }
        framesSeen += 1
        context.fireChannelRead(Self.wrapInboundOut(frame))
        return .continue
    }
}

/// Prefixes each outgoing frame with its 4-byte big-endian length.
struct FrameEncoder: MessageToByteEncoder {
    typealias OutboundIn = ByteBuffer

    func encode(data: ByteBuffer, out: inout ByteBuffer) throws {
        out.writeInteger(UInt32(data.readableBytes))
        out.writeImmutableBuffer(data)
    }
}

/// Closes the channel when no byte has arrived for the pace's silence
/// (``KeepAlivePace/silence``: it grows and shrinks with the node's links;
/// a check already scheduled keeps its time, and a byte read schedules the
/// next by the silence of now), counting only
/// time the event loop was free to read. The check runs at the moment the
/// silence would reach `timeout` (so a silent peer is dropped on time, not a
/// polling round later); a check that comes late (the loop was busy with
/// other work, so bytes may be waiting in the socket unread) waits a short
/// round more, in which the loop reads what came first.
final class SilenceWatcher: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let pace: KeepAlivePace
    /// How late a check may run before the loop counts as having been busy.
    private let lateness: TimeAmount
    private var lastRead = NIODeadline.now()
    private var task: Scheduled<Void>?
    /// When the scheduled check runs.
    private var due: NIODeadline?

    /// A watcher of a fixed `timeout`.
    convenience init(timeout: TimeAmount) {
        self.init(pace: KeepAlivePace(tick: timeout, silence: timeout, perSecond: Int.max))
    }

    /// A watcher of `pace`'s silence.
    init(pace: KeepAlivePace) {
        self.pace = pace
        lateness = .nanoseconds(max(pace.silence.nanoseconds / 6, TimeAmount.milliseconds(10).nanoseconds))
    }

    /// How long the peer may stay silent now.
    private var timeout: TimeAmount { pace.silence }

    func handlerAdded(context: ChannelHandlerContext) {
        lastRead = context.eventLoop.now
        schedule(at: lastRead + timeout, context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        task?.cancel()
        task = nil
        due = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastRead = context.eventLoop.now
        // The pace shortened (the node lost links): the check comes sooner.
        if let due, lastRead + timeout < due {
            task?.cancel()
            schedule(at: lastRead + timeout, context)
        }
        context.fireChannelRead(data)
    }

    private func schedule(at deadline: NIODeadline, _ context: ChannelHandlerContext) {
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        due = deadline
        task = context.eventLoop.scheduleTask(deadline: deadline) {
            handler.value.check(bound.value, due: deadline)
        }
    }

    private func check(_ context: ChannelHandlerContext, due: NIODeadline) {
        let now = context.eventLoop.now
        if now - due > lateness {
            schedule(at: now + lateness, context)
            return
        }
        if now - lastRead < timeout {
            schedule(at: lastRead + timeout, context)
            return
        }
        task = nil
        self.due = nil
        context.fireErrorCaught(PeerConnectionError.idle)
        context.close(promise: nil)
    }
}
