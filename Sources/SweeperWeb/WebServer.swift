import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import ServiceLifecycle
import SweeperControl
import Synchronization

/// Serves the web board on loopback: the page (HTTP) and its WebSocket,
/// which speaks the control protocol. Bound to 127.0.0.1 only; a request
/// must name the board's own host, a WebSocket must come from the board's
/// own page, and both must carry a session cookie from a login address
/// (``WebBoard/login(game:)``). On graceful shutdown it stops accepting and
/// closes every connection.
public struct WebServer: Service {
    /// The port asked for (0: any free port). A port taken by another
    /// program is not swapped for another: the browser sends a session's
    /// cookie to every port of 127.0.0.1, so the board stays where its
    /// bookmarks point, and is not served while another program holds it.
    public let port: Int
    private let board: WebBoard
    private let responder: WebResponder
    private let logger: Logger
    private let eventLoop: any EventLoop
    private let channels = OpenChannels()

    /// The most connections open at once (page loads and WebSockets).
    public static let connectionLimit = 64
    /// The port the board is served on unless configured otherwise.
    public static let defaultPort = 8391

    /// Creates the server; its channels run on `eventLoop`.
    public init(
        port: Int, board: WebBoard, responder: @escaping WebResponder, logger: Logger, eventLoop: any EventLoop
    ) {
        self.port = port
        self.board = board
        self.responder = responder
        self.logger = logger
        self.eventLoop = eventLoop
    }

    public func run() async throws {
        let server: any Channel
        do {
            server = try await bind(port)
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            return await unavailable("port \(port) of 127.0.0.1 is in use by another program (choose another with web_port in the config file)")
        } catch {
            return await unavailable("127.0.0.1:\(port): \(error)")
        }
        let bound = server.localAddress?.port ?? port
        board.set(.serving(port: bound))
        logger.info("web board listening", metadata: ["address": "http://127.0.0.1:\(bound)/"])
        let channels = self.channels
        await withGracefulShutdownHandler {
            try? await server.closeFuture.get()
        } onGracefulShutdown: {
            server.close(promise: nil)
            channels.closeAll()
        }
        board.set(.unavailable("the daemon is stopping"))
    }

    /// Keeps the daemon running without the board, saying why, until it stops.
    private func unavailable(_ why: String) async {
        logger.error("the web board is not served", metadata: ["reason": "\(why)"])
        board.set(.unavailable(why))
        try? await gracefulShutdown()
    }

    private func bind(_ port: Int) async throws -> any Channel {
        let board = self.board
        let responder = self.responder
        let channels = self.channels
        let logger = self.logger
        return try await ServerBootstrap(group: eventLoop)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                guard channels.add(channel) <= Self.connectionLimit else {
                    logger.debug("refused a web connection: too many open")
                    return channel.close()
                }
                guard case let .serving(bound) = board.current else { return channel.close() }
                return Self.configure(channel, origin: WebOrigin(port: bound), access: board.access, responder: responder)
            }
            .bind(host: "127.0.0.1", port: port).get()
    }

    /// Sets up one connection: HTTP, upgraded to the control protocol's
    /// WebSocket at `/ws` for the board's own page with a session.
    static func configure(_ channel: any Channel, origin: WebOrigin, access: WebAccess, responder: @escaping WebResponder) -> EventLoopFuture<Void> {
        let http = WebHTTPHandler(access: access, origin: origin)
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: ControlProtocol.maximumLineLength + 1024,
            shouldUpgrade: { channel, head in
                let (path, _) = WebHTTPHandler.split(head.uri)
                let host = head.headers.first(name: "host")
                let session = WebOrigin.cookie(WebAccess.cookieName, in: head.headers.first(name: "cookie"))
                let allowed =
                    path == "/ws" && origin.admits(origin: head.headers.first(name: "origin"), host: host)
                    && session.map(access.admits(session:)) == true
                // Refused, the request goes on as plain HTTP and gets a 403 saying why.
                return channel.eventLoop.makeSucceededFuture(allowed ? HTTPHeaders() : nil)
            },
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(WebSocketBridge(channel: channel, responder: responder))
                    try sync.addHandler(WebSocketLineWriter())
                }
            })
        let bound = NIOLoopBound(http, eventLoop: channel.eventLoop)
        return channel.eventLoop.makeCompletedFuture {
            let sync = channel.pipeline.syncOperations
            try sync.configureHTTPServerPipeline(
                withServerUpgrade: (
                    upgraders: [upgrader],
                    completionHandler: { context in context.pipeline.syncOperations.removeHandler(bound.value, promise: nil) }
                ))
            try sync.addHandler(http)
        }
    }
}

/// The board's open connections, so that shutdown can close them.
final class OpenChannels: Sendable {
    private let state = Mutex<[ObjectIdentifier: any Channel]>([:])

    /// Adds a channel until it closes; returns how many are open with it.
    func add(_ channel: any Channel) -> Int {
        let key = ObjectIdentifier(channel)
        let count = state.withLock { s in
            s[key] = channel
            return s.count
        }
        channel.closeFuture.whenComplete { _ in self.remove(key) }
        return count
    }

    private func remove(_ key: ObjectIdentifier) {
        _ = state.withLock { $0.removeValue(forKey: key) }
    }

    func closeAll() {
        for channel in state.withLock({ Array($0.values) }) { channel.close(promise: nil) }
    }
}
