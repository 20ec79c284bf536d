import FoundationEssentials
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import ServiceLifecycle
import SweeperControl

/// Serves the web board: the page (HTTP) and its WebSocket, which speaks
/// the control protocol, on 127.0.0.1 always and, when the player opts in,
/// over TLS to the home network. A request must name the board's own host,
/// a WebSocket must come from the board's own page, and both must carry a
/// session: on loopback from a login address (``WebBoard/login(game:)``),
/// on the home network from pairing (``WebPairing``). On graceful shutdown
/// it stops accepting and closes every connection.
///
/// A port taken by another program is not swapped for another: the browser
/// sends a session's cookie to every port of 127.0.0.1, so the board stays
/// where its bookmarks point, and is not served while another program
/// holds it.
public struct WebServer: Service {
    private let board: WebBoard
    private let lanAtStart: Bool

    /// The most connections open at once on each listener (page loads and WebSockets).
    public static let connectionLimit = 64
    /// The most connections open at once on the home network's listener
    /// from one address (``WebClientAddress``): a phone's page loads and
    /// its board's WebSocket, several times over: half the listener's, so that a guest leaves the family the other half.
    public static let connectionsPerAddress = 32
    /// The loopback port unless configured otherwise.
    public static let defaultPort = 8391
    /// The home network's port unless configured otherwise.
    public static let defaultLANPort = 8392
    /// How long a connection that is not a WebSocket has for each whole
    /// request, from its start or from the answer before: then it is
    /// closed (a browser's idle keep-alive, or a client that would hold
    /// one of the connections by sending a byte now and then).
    static let requestDeadline: TimeAmount = .seconds(30)

    /// Creates the server of `board`; `lan` serves the home network from the start.
    public init(board: WebBoard, lan: Bool) {
        self.board = board
        self.lanAtStart = lan
    }

    public func run() async throws {
        await board.serveLoopback()
        if lanAtStart { try? await board.serveLAN(true) }
        try? await gracefulShutdown()
        board.closeAll()
    }

    /// Sets up one connection: TLS on the home network, then HTTP,
    /// upgraded to the control protocol's WebSocket at `/ws` for the
    /// board's own page with a session.
    static func configure(_ channel: any Channel, rules: WebRules, tls: NIOSSLContext?, responder: @escaping WebResponder) -> EventLoopFuture<Void> {
        let http = WebHTTPHandler(rules: rules, deadline: requestDeadline)
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: ControlProtocol.maximumLineLength + 1024,
            shouldUpgrade: { channel, head in
                let (path, _) = WebHTTPHandler.split(head.uri)
                let allowed =
                    path == "/ws" && rules.origin.admits(origin: head.headers.first(name: "origin"), host: head.headers.first(name: "host"))
                    && rules.session(cookie: head.headers.first(name: "cookie")) != nil
                // Refused, the request goes on as plain HTTP and gets a 403 saying why.
                return channel.eventLoop.makeSucceededFuture(allowed ? HTTPHeaders() : nil)
            },
            upgradePipelineHandler: { channel, head in
                channel.eventLoop.makeCompletedFuture {
                    // Read again: a device revoked (or a session ended) since the upgrade was allowed gets nothing.
                    guard let session = rules.session(cookie: head.headers.first(name: "cookie")) else { return channel.close(promise: nil) }
                    if case let .device(id, _) = session { rules.pairing.track(channel, device: id) }
                    let player = session.player
                    if let player { rules.access.track(channel, player: player) }
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(WebSocketBridge(channel: channel, responder: { line in await responder(line, player) }))
                    try sync.addHandler(WebSocketLineWriter())
                }
            })
        let bound = NIOLoopBound(http, eventLoop: channel.eventLoop)
        return channel.eventLoop.makeCompletedFuture {
            let sync = channel.pipeline.syncOperations
            if let tls { try sync.addHandler(NIOSSLServerHandler(context: tls)) }
            try sync.configureHTTPServerPipeline(
                withServerUpgrade: (
                    upgraders: [upgrader],
                    completionHandler: { context in
                        // A WebSocket may be quiet for as long as the game is.
                        context.pipeline.syncOperations.removeHandler(bound.value, promise: nil)
                    }
                ))
            try sync.addHandler(http)
        }
    }
}

/// The rules of one listener: the host and origin it answers to, and whose
/// cookie makes a session there.
struct WebRules: Sendable {
    /// A session a request carries.
    enum Session: Equatable {
        /// A browser logged in on loopback, as a hosted player (by id) or the device's own.
        case loopback(player: String?)
        /// A paired device on the home network, by id, and the hosted player it plays as.
        case device(String, player: String?)

        /// The hosted player the browser plays as (nil: the device's own).
        var player: String? {
            switch self {
            case let .loopback(player), let .device(_, player): player
            }
        }
    }

    var origin: WebOrigin
    var access: WebAccess
    var pairing: WebPairing
    /// The certificate's fingerprint (the home network's).
    var fingerprint: String?

    /// The session a `Cookie` header carries on this listener, if any.
    func session(cookie header: String?) -> Session? {
        if origin.lan {
            guard let token = WebOrigin.cookie(WebPairing.cookieName, in: header), let device = pairing.device(for: token) else { return nil }
            return .device(device.id, player: device.player)
        }
        guard let token = WebOrigin.cookie(WebAccess.cookieName, in: header), let player = access.player(ofSession: token) else { return nil }
        return .loopback(player: player)
    }
}
