import FoundationEssentials
import NIOCore
import NIOPosix
import SweeperConventions
import SweeperEventLoop
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a client call failed without an answer from the daemon.
public enum ControlClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing answers on the socket.
    case noDaemon(socket: String, detail: String)
    /// Nothing answers on the socket yet, but a `sweeperd` of this user
    /// (`pid`) holds its lock: it is starting (a start that reads its games
    /// back from their moves, once after an upgrade, can take a minute).
    case starting(socket: String, pid: Int32)
    /// The connection closed before the answer came.
    case connectionClosed
    /// The daemon's answer could not be read.
    case badAnswer(String)
    /// What serves the socket runs as another user (or would not say who
    /// it is): nothing was sent to it.
    case foreignServer(socket: String, uid: UInt32?)

    /// A stable code for scripts, as a daemon's refusals have
    /// (``ControlError/code``): `no-daemon`, `daemon-starting`,
    /// `connection-closed`, `bad-answer`, `foreign-server`.
    public var code: String {
        switch self {
        case .noDaemon: "no-daemon"
        case .starting: "daemon-starting"
        case .connectionClosed: "connection-closed"
        case .badAnswer: "bad-answer"
        case .foreignServer: "foreign-server"
        }
    }

    public var description: String {
        switch self {
        case let .noDaemon(socket, detail):
            "no sweeperd is answering on \(socket) (\(detail)); start one with `sweeperd &` or `systemctl --user start sweeperd`"
        case let .starting(socket, pid):
            "sweeperd (pid \(pid)) is starting and does not answer on \(socket) yet: a start that reads its games back from their moves (once after an upgrade) can take a minute or more; `systemctl --user status sweeperd` or its log says how far it is. Try again in a moment"
        case .connectionClosed:
            "the daemon closed the connection before answering"
        case let .badAnswer(detail):
            "unreadable answer from the daemon: \(detail)"
        case let .foreignServer(socket, uid?):
            "\(socket) is served by a process of user \(uid), not by your sweeperd (you are user \(getuid())); nothing was sent to it"
        case let .foreignServer(socket, nil):
            "the process serving \(socket) would not say which user it runs as; nothing was sent to it"
        }
    }
}

/// A connection to a daemon's control socket. Calls may run concurrently;
/// answers are matched to requests by id. Use ``withConnection(socketPath:waitingForStart:_:)``.
public final class ControlClient: Sendable {
    private typealias Waiter = CheckedContinuation<Data, any Error>

    private struct State: ~Copyable {
        var nextID: Int64 = 1
        var waiting: [RequestID: Waiter] = [:]
        var closed = false
        /// An error the daemon sent unasked (e.g. `permission-denied`): every call fails with it.
        var refusal: ControlError?
    }

    private let state = Mutex(State())
    /// The connection: requests are written to it directly, on its loop
    /// when called there (a player's key leaves with no task in between).
    private let channel: any Channel
    private let events: AsyncStream<ControlEvent>.Continuation
    private let eventStream: AsyncStream<ControlEvent>
    /// Finished when the connection closes.
    private let ending: AsyncStream<Never>.Continuation
    private let ended: AsyncStream<Never>

    private init(channel: any Channel) {
        self.channel = channel
        (eventStream, events) = AsyncStream.makeStream(of: ControlEvent.self)
        (ended, ending) = AsyncStream.makeStream(of: Never.self)
    }

    /// Whether the connection has closed: a call on it fails at once.
    public var isClosed: Bool { state.withLock { $0.closed } }

    /// Returns when the connection closes (the daemon went away) or the
    /// calling task is cancelled.
    public func waitUntilClosed() async {
        for await _ in ended {}
    }

    /// The default socket path: `$SWEEPER_SOCKET`, else
    /// `$XDG_RUNTIME_DIR/sweeper/control.sock`, else `/tmp/sweeper-UID/control.sock`.
    public static func defaultSocketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        SweeperPaths(environment: environment).socket
    }

    /// How long a call waits for a daemon that is starting (it holds the
    /// socket's lock, its socket is not up yet) before saying none answers:
    /// `sweeperd & sweeper join CODE` in a script works.
    public static let startingDaemonWait: Duration = .seconds(5)

    /// How long a call keeps trying while no daemon holds the lock yet: a
    /// daemon spawned the same instant (`sweeperd & sweeper status`) may
    /// not have taken it when the call starts.
    public static let spawningDaemonGrace: Duration = .milliseconds(750)

    /// Connects to the daemon at `socketPath`, runs `body`, and closes. When
    /// nothing answers but a daemon of this user is starting, it waits for
    /// it up to `waitingForStart`.
    public static func withConnection<T: Sendable>(
        socketPath: String, waitingForStart: Duration = startingDaemonWait,
        _ body: @escaping @Sendable (ControlClient) async throws -> T
    ) async throws -> T {
        let deadline = ContinuousClock.now + waitingForStart
        let grace = ContinuousClock.now + min(spawningDaemonGrace, waitingForStart)
        var channel: NIOAsyncChannel<LineFrame, ByteBuffer>?
        while channel == nil {
            do {
                channel = try await connect(socketPath)
            } catch let error as ControlClientError {
                guard case .noDaemon = error else { throw error }
                let now = ContinuousClock.now
                guard now < deadline, now < grace || startingDaemon(socketPath: socketPath) != nil else {
                    // A daemon that holds the lock is there, only not serving yet: say so, not that there is none.
                    if let pid = startingDaemon(socketPath: socketPath) { throw ControlClientError.starting(socket: socketPath, pid: pid) }
                    throw error
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        guard let channel else { throw ControlClientError.connectionClosed }
        return try await run(channel, body)
    }

    /// The pid of a `sweeperd` of this user that holds the lock of
    /// `socketPath`, if one is running: a daemon takes that lock first and
    /// serves the socket a moment later. Read without taking the lock, so a
    /// daemon starting at the same instant is never refused.
    public static func startingDaemon(socketPath: String) -> Int32? {
        guard let text = try? String(contentsOfFile: socketPath + ".lock", encoding: .utf8),
            let pid = Int32(text.trimmedOfWhitespace), pid > 0, kill(pid, 0) == 0,
            let name = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8),
            name.trimmedOfWhitespace == "sweeperd"
        else { return nil }
        return pid
    }

    /// Connects to `socketPath` and checks, before anything is sent, that
    /// the process serving it runs as this user: a socket another user made
    /// (in a shared directory such as `/tmp`) gets no request, no invite code.
    private static func connect(_ socketPath: String) async throws -> NIOAsyncChannel<LineFrame, ByteBuffer> {
        let channel = try await dial(socketPath)
        let server = await PeerCredentials.of(channel.channel)
        guard let server, server.uid == getuid() else {
            try? await channel.channel.close()
            throw ControlClientError.foreignServer(socket: socketPath, uid: server?.uid)
        }
        return channel
    }

    private static func dial(_ socketPath: String) async throws -> NIOAsyncChannel<LineFrame, ByteBuffer> {
        do {
            return try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(unixDomainSocketPath: socketPath) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers(
                            ByteToMessageHandler(LineFramer(maximumLength: ControlProtocol.maximumAnswerLength)), LineDelivery())
                        return try NIOAsyncChannel<LineFrame, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw ControlClientError.noDaemon(socket: socketPath, detail: Self.describe(error))
        }
    }

    private static func run<T: Sendable>(
        _ channel: NIOAsyncChannel<LineFrame, ByteBuffer>, _ body: @escaping @Sendable (ControlClient) async throws -> T
    ) async throws -> T {
        // The connection's tasks run on its event loop: what the socket
        // reads reaches the task awaiting it with no other thread woken.
        let executor = EventLoopTaskExecutor(channel.channel.eventLoop)
        return try await withTaskExecutorPreference(executor) {
            try await serve(channel, body)
        }
    }

    private static func serve<T: Sendable>(
        _ channel: NIOAsyncChannel<LineFrame, ByteBuffer>,
        _ body: @escaping @Sendable (ControlClient) async throws -> T
    ) async throws -> T {
        try await channel.executeThenClose { inbound, outbound in
            let client = ControlClient(channel: channel.channel)
            // From here on each line read goes to the client where it is read.
            try await channel.channel.pipeline.handler(type: LineDelivery.self).get().deliver(to: { client.receive($0) })
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask {
                    do {
                        for try await frame in inbound { client.receive(frame) }
                    } catch {}
                    client.finish()
                    return nil
                }
                group.addTask { try await body(client) }
                defer { group.cancelAll() }
                while let next = try await group.next() {
                    if let value = next {
                        outbound.finish()
                        return value
                    }
                }
                throw ControlClientError.connectionClosed
            }
        }
    }

    private static func describe(_ error: any Error) -> String {
        if let io = error as? IOError { return String(cString: strerror(io.errnoCode)) }
        return "\(error)"
    }

    /// Sends a command and waits for its answer; an error answer is thrown
    /// as ``ControlError``.
    public func call<C: ControlCommand>(_ command: C.Type, _ arguments: C.Arguments) async throws -> C.Result {
        let data = try await send(command: C.name, arguments: arguments)
        do {
            return try ControlCoding.decoder().decode(ResultBox<C.Result>.self, from: data).result
        } catch {
            throw ControlClientError.badAnswer("\(error)")
        }
    }

    /// Sends any command by name and returns the raw answer line (for tests and scripts).
    public func send(command: String, arguments: some Encodable & Sendable) async throws -> Data {
        let id: RequestID = state.withLock { s in
            defer { s.nextID += 1 }
            return .int(s.nextID)
        }
        // A move's line (a player's key) is written directly; any other by JSONEncoder.
        let line =
            if let move = arguments as? Commands.MoveArguments {
                Data(move.requestLine(command: command, id: id))
            } else {
                try ControlCoding.line(Request(id: id, command: command, arguments: arguments))
            }
        let data: Data = try await withCheckedThrowingContinuation { (waiter: Waiter) in
            let refused: (any Error)? = state.withLock { s in
                if let refusal = s.refusal { return refusal }
                guard !s.closed else { return ControlClientError.connectionClosed }
                s.waiting[id] = waiter
                return nil
            }
            if let refused {
                waiter.resume(throwing: refused)
                return
            }
            channel.writeAndFlush(ByteBuffer(bytes: line)).whenFailure { error in self.fail(id, error) }
        }
        let head: IncomingHead
        do {
            head = try ControlCoding.decoder().decode(IncomingHead.self, from: data)
        } catch {
            throw ControlClientError.badAnswer("\(error)")
        }
        if head.ok != true {
            throw head.error ?? ControlError(code: "unknown", message: "the daemon refused without saying why")
        }
        return data
    }

    /// On a subscribed connection: tells the daemon where this viewer's
    /// cursor is (``Commands/Cursor``), or that it shows no game. No answer comes.
    public func setCursor(_ arguments: Commands.Cursor.Arguments) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: arguments.requestLine)).get()
    }

    /// Subscribes (see ``Commands/Subscribe``) and returns the event stream,
    /// which ends when the connection closes.
    public func subscribe(game: String? = nil) async throws -> AsyncStream<ControlEvent> {
        _ = try await call(Commands.Subscribe.self, .init(game: game))
        return eventStream
    }

    private func fail(_ id: RequestID, _ error: any Error) {
        let (waiter, refusal) = state.withLock { ($0.waiting.removeValue(forKey: id), $0.refusal) }
        waiter?.resume(throwing: refusal ?? ControlClientError.connectionClosed)
    }

    private func receive(_ frame: LineFrame) {
        guard case let .line(buffer) = frame else {
            // A line too long to read is an answer (an event is never this
            // long), but which request's cannot be told for sure (requests
            // are written as their tasks run): every request waiting fails,
            // saying why, and the connection closes.
            let error = ControlClientError.badAnswer(
                "an answer of the daemon's was over \(ControlProtocol.maximumAnswerLength >> 20) MiB, more than this client reads")
            let waiters = state.withLock { s in
                s.closed = true
                defer { s.waiting = [:] }
                return Array(s.waiting.values)
            }
            for waiter in waiters { waiter.resume(throwing: error) }
            channel.close(promise: nil)
            return
        }
        // A move's or a cursor's event, read without JSONDecoder; any other
        // line, as JSONDecoder reads it.
        if let event = buffer.withUnsafeReadableBytes({ ControlEvent(jsonLine: $0) }) {
            events.yield(event)
            return
        }
        let data = Data(buffer.readableBytesView)
        guard let head = try? ControlCoding.decoder().decode(IncomingHead.self, from: data) else { return }
        if head.event != nil {
            if let event = try? ControlCoding.decoder().decode(ControlEvent.self, from: data) { events.yield(event) }
            return
        }
        guard let id = head.id else {
            // An error answer to no request: the daemon refuses this connection.
            if head.ok == false, let error = head.error {
                let waiters = state.withLock { s in
                    s.refusal = error
                    defer { s.waiting = [:] }
                    return Array(s.waiting.values)
                }
                for w in waiters { w.resume(throwing: error) }
            }
            return
        }
        let waiter = state.withLock { $0.waiting.removeValue(forKey: id) }
        waiter?.resume(returning: data)
    }

    private func finish() {
        let (waiters, refusal) = state.withLock { s in
            s.closed = true
            defer { s.waiting = [:] }
            return (Array(s.waiting.values), s.refusal)
        }
        for w in waiters { w.resume(throwing: refusal ?? ControlClientError.connectionClosed) }
        events.finish()
        ending.finish()
    }
}
