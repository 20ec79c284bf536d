import NIOCore
import Synchronization

/// One frame of a newline-delimited stream.
public enum LineFrame: Sendable, Equatable {
    /// A complete line, without its newline (and without a trailing `\r`).
    case line(ByteBuffer)
    /// A line longer than the limit was discarded (reported once per line).
    case tooLong
}

/// Splits a byte stream into lines of at most `maximumLength` bytes. A longer
/// line is dropped as it arrives (never buffered whole) and reported once as
/// ``LineFrame/tooLong``; reading goes on with the next line.
public struct LineFramer: ByteToMessageDecoder, Sendable {
    public typealias InboundOut = LineFrame

    /// The longest line passed on, newline excluded.
    public let maximumLength: Int
    private var discarding = false
    /// How many of the readable bytes were searched for a newline already:
    /// a long line that comes in many reads is searched once, not from its
    /// start on every read (which made reading a line of 16 MiB quadratic).
    private var searched = 0

    /// Creates a framer.
    public init(maximumLength: Int) {
        self.maximumLength = maximumLength
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let view = buffer.readableBytesView
        if let newline = view[(view.startIndex + min(searched, view.count))...].firstIndex(of: UInt8(ascii: "\n")) {
            searched = 0
            let length = newline - view.startIndex
            if discarding {
                buffer.moveReaderIndex(forwardBy: length + 1)
                discarding = false
                return .continue
            }
            if length > maximumLength {
                buffer.moveReaderIndex(forwardBy: length + 1)
                context.fireChannelRead(wrapInboundOut(.tooLong))
                return .continue
            }
            guard var line = buffer.readSlice(length: length) else { return .needMoreData }
            buffer.moveReaderIndex(forwardBy: 1)
            if line.readableBytesView.last == UInt8(ascii: "\r") { line.moveWriterIndex(to: line.writerIndex - 1) }
            context.fireChannelRead(wrapInboundOut(.line(line)))
            return .continue
        }
        searched = buffer.readableBytes
        if buffer.readableBytes > maximumLength {
            if !discarding {
                discarding = true
                context.fireChannelRead(wrapInboundOut(.tooLong))
            }
            buffer.moveReaderIndex(to: buffer.writerIndex)
            searched = 0
        }
        return .needMoreData
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        if buffer.readableBytes > 0 {
            if !discarding, let rest = buffer.readSlice(length: buffer.readableBytes) {
                context.fireChannelRead(wrapInboundOut(.line(rest)))
            }
            buffer.moveReaderIndex(to: buffer.writerIndex)
        }
        return .needMoreData
    }
}

/// Hands each line read to a receiver on the connection's loop, in the
/// call that framed it, once one is set; until then lines go on down the
/// pipeline (to the channel's async inbound stream). Through that stream a
/// line would reach its reader a task later: tens of microseconds on an
/// idle machine, on every key and every move a viewer shows. The client
/// takes its answers and events this way, and the daemon a subscribed
/// viewer's cursor lines; lines read before the receiver is set (a refusal
/// the daemon sends on connecting, a cursor sent with the subscription)
/// stay in the stream, for its reader.
public final class LineDelivery: ChannelInboundHandler, Sendable {
    public typealias InboundIn = LineFrame
    public typealias InboundOut = LineFrame

    /// The receiver and whether a line went to it. A struct, not a tuple
    /// or an optional closure as the mutex's value: those the compiler
    /// converts on the way into `withLock` and back, wrapping the closure
    /// in two more thunks each time, so that every line ran through all
    /// the thunks of the lines before it (a viewer's thousandth cursor
    /// line took a thousand pairs, and memory grew with each line).
    private struct Receiver {
        var receive: (@Sendable (LineFrame) -> Void)?
        var handedOver = false
    }
    private let receiver = Mutex(Receiver())

    /// Creates a handler that passes every line on until ``deliver(to:)``.
    public init() {}

    /// Sends every later line to `receive`, on the channel's loop, and no
    /// longer down the pipeline.
    public func deliver(to receive: @escaping @Sendable (LineFrame) -> Void) {
        receiver.withLock { $0.receive = receive }
    }

    /// Whether a line has gone to the receiver: lines still in the stream
    /// then were read before it.
    public var handedOver: Bool { receiver.withLock { $0.handedOver } }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let receive = receiver.withLock { r in
            r.handedOver = r.handedOver || r.receive != nil
            return r.receive
        }
        guard let receive else { return context.fireChannelRead(data) }
        receive(unwrapInboundIn(data))
    }
}
