import NIOCore
import NIOHTTP1

/// Answers the board's plain HTTP requests: the login address (loopback),
/// pairing (the home network), the page's files, and a plain refusal for
/// everything else. Nothing is served to a request that names another
/// host, and nothing but the way in to a browser without a session.
final class WebHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let rules: WebRules
    private let deadline: TimeAmount
    private var head: HTTPRequestHead?
    private var closing: Scheduled<Void>?

    /// Answers requests by `rules`; each whole request must come within
    /// `deadline` of the connection's start or of the answer before it
    /// (a byte now and then holds no connection).
    init(rules: WebRules, deadline: TimeAmount) {
        self.rules = rules
        self.deadline = deadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        armDeadline(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        closing?.cancel()
        closing = nil
    }

    private func armDeadline(_ context: ChannelHandlerContext) {
        closing?.cancel()
        let channel = context.channel
        closing = context.eventLoop.scheduleTask(in: deadline) { channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(request):
            head = request
        case .body:
            break  // No request of the board has a body; it is read and dropped (within the deadline).
        case .end:
            guard let request = head else { return }
            head = nil
            respond(to: request, context: context)
            armDeadline(context)
        }
    }

    /// What a request gets, as status, headers and body.
    struct Response {
        var status: HTTPResponseStatus
        var headers: [(String, String)] = []
        var body: [UInt8] = []
        var contentType = "text/plain; charset=utf-8"
        /// Whether the answer holds a form that sends to the board (pairing).
        var form = false

        static func text(_ status: HTTPResponseStatus, _ message: String) -> Response {
            Response(status: status, body: Array((message + "\n").utf8))
        }
    }

    private func respond(to request: HTTPRequestHead, context: ChannelHandlerContext) {
        let response = Self.response(
            to: request.method, uri: request.uri, host: request.headers.first(name: "host"),
            cookie: request.headers.first(name: "cookie"), userAgent: request.headers.first(name: "user-agent"),
            address: WebClientAddress.key(of: context.channel.remoteAddress), rules: rules)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: response.contentType)
        headers.add(name: "Content-Length", value: String(response.body.count))
        for (name, value) in WebPage.securityHeaders {
            headers.add(name: name, value: response.form && name == "Content-Security-Policy" ? WebPage.pairingPolicy : value)
        }
        if rules.origin.lan { headers.add(name: "Strict-Transport-Security", value: "max-age=31536000") }
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

    /// The answer to one request (pure but for the sessions it starts, so
    /// that tests can ask it directly); `address` is where it came from
    /// (``WebClientAddress``).
    static func response(
        to method: HTTPMethod, uri: String, host: String?, cookie: String?, userAgent: String? = nil, address: String = "", rules: WebRules
    ) -> Response {
        let origin = rules.origin
        guard origin.admits(host: host) else {
            let hint = origin.lan ? "an address of this computer on the home network" : origin.hosts.map { "http://" + $0 + "/" }.joined(separator: " or ")
            return .text(.misdirectedRequest, "This Sweeper board answers only at \(hint).")
        }
        guard method == .GET || method == .HEAD else {
            var r = Response.text(.methodNotAllowed, "Only GET and HEAD are served here.")
            r.headers.append(("Allow", "GET, HEAD"))
            return r
        }
        let (path, query) = Self.split(uri)
        if origin.lan, let code = query["pair"] {
            do {
                let (_, token) = try rules.pairing.pair(code: code, name: WebPairing.describe(userAgent: userAgent), from: address)
                var r = forward(to: "/")
                r.headers.append(("Set-Cookie", "\(WebPairing.cookieName)=\(token); Path=/; Max-Age=31536000; HttpOnly; Secure; SameSite=Strict"))
                return r
            } catch .rateLimited(let seconds) {
                return pairingPage(.tooManyRequests, "Too many wrong codes: try again in \(seconds) seconds.", rules)
            } catch {
                return pairingPage(.forbidden, "That code is wrong, was used already, or is older than five minutes.", rules)
            }
        }
        if !origin.lan, let secret = query["key"] {
            guard let (session, game) = rules.access.redeem(secret) else {
                return .text(
                    .forbidden,
                    "This login address was used already or is older than ten minutes. Run `sweeper web` on this computer for a new one.")
            }
            var r = forward(to: game.map { "/?game=" + $0 } ?? "/")
            r.headers.append(("Set-Cookie", "\(WebAccess.cookieName)=\(session); Path=/; HttpOnly; SameSite=Strict"))
            return r
        }
        guard rules.session(cookie: cookie) != nil else {
            if origin.lan { return pairingPage(.forbidden, "This browser is not paired with this computer's Sweeper.", rules) }
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

    /// A page that goes on to `location` on the board at once. A login or
    /// pairing address answers with it, not with a redirect: the address
    /// is often opened from elsewhere (`sweeper web` opens it through a
    /// file, a phone from its camera), and a browser sends a SameSite
    /// Strict cookie on no navigation another site began, redirects
    /// included; the board's own page going on is of the board's site.
    static func forward(to location: String) -> Response {
        let escaped = location.replacing("&", with: "&amp;").replacing("\"", with: "&quot;").replacing("<", with: "&lt;")
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=\(escaped)">
            <link rel="icon" href="/icon.svg"><title>Sweeper</title></head><body><p><a href="\(escaped)">Open the board</a></p></body></html>

            """
        return Response(status: .ok, body: Array(html.utf8), contentType: "text/html; charset=utf-8")
    }

    /// The page that pairs a browser on the home network: a code to type,
    /// and the certificate's fingerprint to compare.
    static func pairingPage(_ status: HTTPResponseStatus, _ message: String, _ rules: WebRules) -> Response {
        let fingerprint = rules.fingerprint ?? "unknown"
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Pair with Sweeper</title></head>
            <body><h1>Pair this browser with Sweeper</h1>
            <p>\(message)</p>
            <p>On the computer that runs Sweeper, run <code>sweeper web pair</code> and type the code it prints
            (or scan its QR code).</p>
            <form method="get" action="/"><p><label>Code <input name="pair" autocomplete="one-time-code"
            autocapitalize="characters" spellcheck="false" required></label> <button>Pair</button></p></form>
            <p>First check that your browser shows this certificate, as <code>sweeper web pair</code> prints it
            (SHA-256 fingerprint):</p>
            <p><code id="fingerprint">\(fingerprint)</code></p>
            </body></html>

            """
        return Response(status: status, body: Array(html.utf8), contentType: "text/html; charset=utf-8", form: true)
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
