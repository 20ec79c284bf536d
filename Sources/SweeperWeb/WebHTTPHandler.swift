import NIOCore
import NIOHTTP1

/// Answers the board's plain HTTP requests: the login address, the page's
/// files, and a plain refusal for everything else. Nothing is served to a
/// request that names another host, and only the page's files (and the
/// login) to a browser without a session.
final class WebHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let access: WebAccess
    private let origin: WebOrigin
    private var head: HTTPRequestHead?

    init(access: WebAccess, origin: WebOrigin) {
        self.access = access
        self.origin = origin
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(request):
            head = request
        case .body:
            break  // No request of the board has a body; it is read and dropped.
        case .end:
            guard let request = head else { return }
            head = nil
            respond(to: request, context: context)
        }
    }

    /// What a request gets, as status, headers and body.
    struct Response {
        var status: HTTPResponseStatus
        var headers: [(String, String)] = []
        var body: [UInt8] = []
        var contentType = "text/plain; charset=utf-8"

        static func text(_ status: HTTPResponseStatus, _ message: String) -> Response {
            Response(status: status, body: Array((message + "\n").utf8))
        }
    }

    private func respond(to request: HTTPRequestHead, context: ChannelHandlerContext) {
        let response = Self.response(
            to: request.method, uri: request.uri, host: request.headers.first(name: "host"),
            cookie: request.headers.first(name: "cookie"), access: access, origin: origin)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: response.contentType)
        headers.add(name: "Content-Length", value: String(response.body.count))
        for (name, value) in WebPage.securityHeaders { headers.add(name: name, value: value) }
        for (name, value) in response.headers { headers.add(name: name, value: value) }
        let keepAlive = request.isKeepAlive
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: response.status, headers: headers))), promise: nil)
        if request.method != .HEAD, !response.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
        }
        let done = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: done)
        if !keepAlive {
            let channel = context.channel
            done.futureResult.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    /// The answer to one request (pure, so that tests can ask it directly).
    static func response(
        to method: HTTPMethod, uri: String, host: String?, cookie: String?, access: WebAccess, origin: WebOrigin
    ) -> Response {
        guard origin.admits(host: host) else {
            return .text(
                .misdirectedRequest,
                "This Sweeper board answers only at \(origin.hosts.map { "http://" + $0 + "/" }.joined(separator: " or ")).")
        }
        guard method == .GET || method == .HEAD else {
            var r = Response.text(.methodNotAllowed, "Only GET and HEAD are served here.")
            r.headers.append(("Allow", "GET, HEAD"))
            return r
        }
        let (path, query) = Self.split(uri)
        if let secret = query["key"] {
            guard let (session, game) = access.redeem(secret) else {
                return .text(
                    .forbidden,
                    "This login address was used already or is older than ten minutes. Run `sweeper web` on this computer for a new one.")
            }
            var r = Response(status: .seeOther)
            let target = game.map { "/?game=" + $0 } ?? "/"
            r.headers.append(("Location", target))
            r.headers.append(("Set-Cookie", "\(WebAccess.cookieName)=\(session); Path=/; HttpOnly; SameSite=Strict"))
            return r
        }
        guard let session = WebOrigin.cookie(WebAccess.cookieName, in: cookie), access.admits(session: session) else {
            return .text(
                .forbidden,
                "Not logged in. Run `sweeper web` on this computer: it opens the board in your browser, or prints an address to open.")
        }
        if path == "/ws" {
            return .text(.forbidden, "A WebSocket here must come from the board's own page.")
        }
        guard let asset = WebPage.asset(at: path) else {
            return .text(.notFound, "Nothing here: the board is at /.")
        }
        return Response(status: .ok, body: asset.bytes, contentType: asset.contentType)
    }

    /// A request target's path and its query's members (not percent-decoded:
    /// the board's own values are hex).
    static func split(_ uri: String) -> (path: String, query: [String: String]) {
        guard let mark = uri.firstIndex(of: "?") else { return (uri, [:]) }
        var query: [String: String] = [:]
        for pair in uri[uri.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard let key = parts.first, query[String(key)] == nil else { continue }
            query[String(key)] = parts.count > 1 ? String(parts[1]) : ""
        }
        return (String(uri[..<mark]), query)
    }
}
