import FoundationEssentials
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import SweeperControl
import SweeperConventions
import SweeperEventLoop
import SweeperNet
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the daemon does with one request line.
public enum ControlReply: Sendable {
    /// Send this answer line.
    case answer(Data)
    /// Send this answer, then the events, until the connection closes.
    case subscribe(answer: Data, events: EventConnection)
}

/// Turns request lines into replies (the daemon's request router).
public protocol ControlResponder: Sendable {
    /// Answers one request line (without its newline). Never throws: every
    /// failure is an error answer.
    func reply(to line: Data) async -> ControlReply
    /// Handles a line sent on a connection after it subscribed (a viewer's
    /// `cursor`); such lines get no answer. Called on the connection's
    /// event loop, mostly in the call that read the line, so it must not
    /// block: work it starts goes on in its own time.
    func received(_ line: Data, on subscription: EventConnection)
}

extension ControlResponder {
    /// Ignores lines sent after subscribing.
    public func received(_ line: Data, on subscription: EventConnection) {}
}

/// The control-socket server: a Unix socket (directory 0700, socket 0600)
/// served with SwiftNIO, one task per connection, requests answered in order.
/// Callers of another uid get a `permission-denied` answer and are dropped;
/// beyond ``connectionLimit`` open connections, a new one gets a
/// `too-many-connections` answer and is closed.
/// On graceful shutdown it stops accepting, lets each connection finish the
/// request in hand, closes them and removes the socket file.
public struct ControlServer: Service {
    /// The socket path.
    public let socketPath: String
    private let responder: any ControlResponder
    private let logger: Logger
    private let onListening: @Sendable () async -> Void
    private let onShutdown: @Sendable () -> Void
    private let connections = Connections()
    private let eventLoop: any EventLoop

    /// The most control connections open at once (viewers, CLI calls).
    public static let connectionLimit = 256

    /// Creates a server; `onListening` runs once the socket accepts
    /// connections, `onShutdown` when graceful shutdown begins. Its
    /// channels and connection tasks run on `eventLoop`.
    public init(
        socketPath: String, responder: any ControlResponder, logger: Logger,
        eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next(),
        onListening: @escaping @Sendable () async -> Void = {}, onShutdown: @escaping @Sendable () -> Void = {}
    ) {
        self.eventLoop = eventLoop
        self.socketPath = socketPath
        self.responder = responder
        self.logger = logger
        self.onListening = onListening
        self.onShutdown = onShutdown
    }

    /// Makes the socket's directory (0700) if missing and removes a stale
    /// socket file (the caller holds the socket's instance lock).
    public static func prepare(socketPath: String) throws {
        let directory = SweeperPaths.folder(of: socketPath)
        if directory == SweeperPaths.sharedRuntimeDirectory {
            try PrivateDirectory.makeOwned(directory)
        } else {
            try PrivateDirectory.make(directory)
        }
        var st = stat()
        if lstat(socketPath, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFSOCK else {
                throw ControlError(code: "socket-path", message: "\(socketPath) exists and is not a socket; refusing to replace it")
            }
            unlink(socketPath)
        }
    }

    public func run() async throws {
        try await withTaskExecutorPreference(EventLoopTaskExecutor(eventLoop)) {
            try await acceptConnections()
        }
    }

    private func acceptConnections() async throws {
        let connections = self.connections
        let server = try await ServerBootstrap(group: eventLoop)
            .serverChannelOption(.backlog, value: 64)
            // A client that sends its requests and then closes its writing
            // half (`printf '…\n' | socat - UNIX:…`) still gets every answer.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .bind(unixDomainSocketPath: socketPath, cleanupExistingSocketFile: false) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(
                        ByteToMessageHandler(LineFramer(maximumLength: ControlProtocol.maximumLineLength)), LineDelivery())
                    return try NIOAsyncChannel<LineFrame, ByteBuffer>(
                        wrappingChannelSynchronously: channel,
                        configuration: .init(isOutboundHalfClosureEnabled: false))
                }
            }
        chmod(socketPath, 0o600)
        logger.info("control socket listening", metadata: ["socket": "\(socketPath)"])
        await onListening()
        let serverChannel = server.channel
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                do {
                    try await server.executeThenClose { inbound in
                        for try await connection in inbound {
                            group.addTask { await self.serve(connection) }
                        }
                    }
                } catch {
                    logger.debug("control socket accept loop ended", metadata: ["error": "\(error)"])
                }
                // Accepting has stopped; the group waits for every connection to finish.
            }
        } onGracefulShutdown: {
            onShutdown()
            serverChannel.close(promise: nil)
            connections.closeAll()
        }
        unlink(socketPath)
        logger.info("control socket closed")
    }

    private func serve(_ connection: NIOAsyncChannel<LineFrame, ByteBuffer>) async {
        let channel = connection.channel
        let (key, open) = connections.add(channel)
        defer { connections.remove(key) }
        let credentials = await PeerCredentials.of(channel)
        let allowed = credentials.map { $0.uid == getuid() } ?? false
        do {
            try await connection.executeThenClose { inbound, outbound in
                guard allowed else {
                    let uid = credentials.map { String($0.uid) } ?? "unknown"
                    connections.complain(
                        logger, key: "uid \(uid)", "refused a control connection from another user", metadata: ["uid": "\(uid)"])
                    try await Self.refuse(.permissionDenied, inbound, outbound)
                    return
                }
                guard open <= Self.connectionLimit else {
                    connections.complain(
                        logger, key: "too many connections", "refused a control connection: too many open",
                        metadata: ["limit": "\(Self.connectionLimit)"])
                    try await Self.refuse(.tooManyConnections(limit: Self.connectionLimit), inbound, outbound)
                    return
                }
                var iterator = inbound.makeAsyncIterator()
                while let frame = try await iterator.next() {
                    switch frame {
                    case .tooLong:
                        let line = (try? ControlCoding.line(Answer<Empty>.failure(nil, .lineTooLong))) ?? Data()
                        try await outbound.write(ByteBuffer(bytes: line))
                    case let .line(buffer):
                        if buffer.readableBytes == 0 { continue }
                        switch await responder.reply(to: Data(buffer.readableBytesView)) {
                        case let .answer(data):
                            try await outbound.write(ByteBuffer(bytes: data))
                        case let .subscribe(answer, events):
                            // The events follow the answer, written to the
                            // socket by whoever publishes them; lines after
                            // subscribing get no answer (a viewer's cursor),
                            // and the end of input (the client leaving, or
                            // shutdown) ends the subscription.
                            defer { events.end() }
                            try await outbound.write(ByteBuffer(bytes: answer))
                            events.attach(channel)
                            let delivery = try await Self.readOnLoop(channel, responder, events)
                            // Lines read before that, still in the stream, are
                            // older than any line handed over on the loop: a
                            // cursor stands for the latest, so they are dropped
                            // once a newer one has been read.
                            while let next = try await iterator.next() {
                                if case let .line(buffer) = next, buffer.readableBytes > 0, !delivery.handedOver {
                                    responder.received(Data(buffer.readableBytesView), on: events)
                                }
                            }
                            return
                        }
                    }
                }
            }
        } catch {
            logger.debug("control connection ended", metadata: ["error": "\(error)"])
        }
    }
}

extension ControlServer {
    /// Hands a subscribed connection's later lines to `responder` on the
    /// loop, in the call that read them, rather than a task later through
    /// the inbound stream (a viewer's cursor, on its way to the others).
    static func readOnLoop(
        _ channel: any Channel, _ responder: any ControlResponder, _ events: EventConnection
    ) async throws -> LineDelivery {
        let delivery = try await channel.pipeline.handler(type: LineDelivery.self).get()
        delivery.deliver { frame in
            guard case let .line(buffer) = frame, buffer.readableBytes > 0 else { return }
            responder.received(Data(buffer.readableBytesView), on: events)
        }
        return delivery
    }

    /// How long a refused connection is kept open for the client to read why.
    static let refusalLinger: Duration = .seconds(1)

    /// Answers a connection it will not serve with `error`, then lingers
    /// before closing, as HTTP servers do: it reads and drops what the
    /// client sends until the client closes, or for ``refusalLinger`` at
    /// most. Closing at once could fail the client's first write, and the
    /// client would lose the answer explaining why.
    static func refuse(
        _ error: ControlError, _ inbound: NIOAsyncChannelInboundStream<LineFrame>, _ outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    ) async throws {
        let line = (try? ControlCoding.line(Answer<Empty>.failure(nil, error))) ?? Data()
        try await outbound.write(ByteBuffer(bytes: line))
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    for try await _ in inbound {}
                } catch {}
            }
            group.addTask { try? await Task.sleep(for: refusalLinger) }
            await group.next()
            group.cancelAll()
        }
    }
}

/// Open connections, so graceful shutdown can close their input: each then
/// finishes the request it is answering and closes.
final class Connections: Sendable {
    private let state = Mutex<(next: Int, channels: [Int: any Channel], closing: Bool)>((0, [:], false))
    /// Refusals, logged once a minute per kind.
    private let complaints = Mutex(RateLimitedLog())

    /// Adds a connection; returns its key and how many are open with it.
    func add(_ channel: any Channel) -> (key: Int, open: Int) {
        let (key, open, closing) = state.withLock { s in
            s.next += 1
            s.channels[s.next] = channel
            return (s.next, s.channels.count, s.closing)
        }
        if closing { Self.closeInput(channel) }
        return (key, open)
    }

    /// Logs a refusal unless one of this kind was logged in the last minute.
    func complain(_ logger: Logger, key: String, _ message: Logger.Message, metadata: Logger.Metadata) {
        _ = complaints.withLock { $0.log(logger, key: key, message, metadata: metadata) }
    }

    func remove(_ key: Int) {
        _ = state.withLock { $0.channels.removeValue(forKey: key) }
    }

    func closeAll() {
        let channels = state.withLock { s in
            s.closing = true
            return Array(s.channels.values)
        }
        for channel in channels { Self.closeInput(channel) }
    }

    private static func closeInput(_ channel: any Channel) {
        channel.close(mode: .input).whenFailure { _ in channel.close(promise: nil) }
    }
}
