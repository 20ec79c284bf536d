import FoundationEssentials
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Synchronization
import Testing

@testable import SweeperWeb

/// Who may use the web board: one-time login secrets, sessions, the
/// board's own host names and origin, and what each request gets.
@Suite struct WebAccessTests {
    final class FakeClock: Sendable {
        let now = Mutex<Int64>(1_000_000)
        func advance(_ millis: Int64) { now.withLock { $0 += millis } }
        var read: @Sendable () -> Int64 { { self.now.withLock { $0 } } }
    }

    @Test func aLoginSecretWorksOnceAndOnlyWithinItsLifetime() throws {
        let clock = FakeClock()
        let access = WebAccess(clock: clock.read)
        let (secret, expires) = access.issueLogin(game: "ab12")
        #expect(secret.count == 64 && secret.allSatisfy(\.isHexDigit))
        #expect(expires == 1_000_000 + WebAccess.loginLifetimeMillis)
        let first = try #require(access.redeem(secret))
        #expect(first.game == "ab12")
        #expect(access.admits(session: first.session))
        #expect(access.redeem(secret) == nil, "a used secret logged a second browser in")
        let (late, _) = access.issueLogin()
        clock.advance(WebAccess.loginLifetimeMillis)
        #expect(access.redeem(late) == nil, "an expired secret logged a browser in")
        #expect(!access.admits(session: secret), "the login secret itself is not a session")
        #expect(!access.admits(session: ""))
    }

    @Test func aLoginForAHostedPlayerStartsASessionOfThatPlayerUntilItIsLoggedOut() throws {
        let access = WebAccess()
        let own = try #require(access.redeem(access.issueLogin().secret)).session
        let ann = try #require(access.redeem(access.issueLogin(player: "ANN").secret)).session
        let ben = try #require(access.redeem(access.issueLogin(player: "BEN").secret)).session
        let benLater = access.issueLogin(player: "BEN").secret
        #expect(access.player(ofSession: own) == .some(nil))
        #expect(access.player(ofSession: ann) == .some("ANN"))
        #expect(access.player(ofSession: ben) == .some("BEN"))
        #expect(access.player(ofSession: "nobody") == nil)
        // Ben is logged out: his session and his unused login end; the others stay.
        #expect(access.logOut(player: "BEN") == 1)
        #expect(!access.admits(session: ben))
        #expect(access.redeem(benLater) == nil)
        #expect(access.admits(session: ann) && access.admits(session: own))
    }

    @Test func sessionsAreBoundedAndTheLeastRecentlyUsedGoesFirst() throws {
        let clock = FakeClock()
        let access = WebAccess(clock: clock.read)
        var sessions: [String] = []
        for _ in 0..<WebAccess.sessionLimit {
            clock.advance(1)
            sessions.append(try #require(access.redeem(access.issueLogin().secret)).session)
        }
        clock.advance(1)
        #expect(access.admits(session: sessions[0]))  // used now: the second is the least recent
        clock.advance(1)
        let extra = try #require(access.redeem(access.issueLogin().secret)).session
        #expect(access.admits(session: extra))
        #expect(access.admits(session: sessions[0]))
        #expect(!access.admits(session: sessions[1]))
        access.endSessions()
        #expect(!access.admits(session: extra))
    }

    @Test func onlyTheBoardsOwnHostAndOriginAreAdmitted() {
        let origin = WebOrigin(port: 8391)
        #expect(origin.admits(host: "127.0.0.1:8391"))
        #expect(origin.admits(host: "localhost:8391"))
        #expect(origin.admits(host: "[::1]:8391"))
        for host in ["evil.example:8391", "127.0.0.1", "127.0.0.1:8392", "127.0.0.1.evil.example:8391", ""] {
            #expect(!origin.admits(host: host), "\(host)")
        }
        #expect(!origin.admits(host: nil))
        #expect(origin.admits(origin: "http://127.0.0.1:8391", host: "127.0.0.1:8391"))
        #expect(!origin.admits(origin: "http://localhost:8391", host: "127.0.0.1:8391"), "another name of the board is another origin")
        #expect(!origin.admits(origin: "http://127.0.0.1:9000", host: "127.0.0.1:8391"), "a page on another port of this machine")
        #expect(!origin.admits(origin: "https://evil.example", host: "127.0.0.1:8391"))
        #expect(!origin.admits(origin: "null", host: "127.0.0.1:8391"))
        #expect(!origin.admits(origin: nil, host: "127.0.0.1:8391"))
        #expect(WebOrigin.cookie("a", in: "b=1; a=2; c=3") == "2")
        #expect(WebOrigin.cookie("a", in: "ab=1") == nil)
        #expect(WebOrigin.cookie("a", in: nil) == nil)
    }

    @Test func eachRequestGetsWhatItsHostCookieAndPathAllow() throws {
        let access = WebAccess()
        let origin = WebOrigin(port: 8391)
        let rules = WebRules(origin: origin, access: access, pairing: WebPairing(keeper: WebPairingTests.Kept()), fingerprint: nil)
        func ask(_ uri: String, method: HTTPMethod = .GET, host: String? = "127.0.0.1:8391", cookie: String? = nil) -> WebHTTPHandler.Response {
            WebHTTPHandler.response(to: method, uri: uri, host: host, cookie: cookie, rules: rules)
        }
        #expect(ask("/", host: "evil.example:8391").status == .misdirectedRequest)
        #expect(ask("/").status == .forbidden)
        #expect(ask("/app.js").status == .forbidden, "a page's file was served without a session")
        #expect(ask("/?key=00").status == .forbidden)
        let (secret, _) = access.issueLogin(game: "0123abcd")
        let login = ask("/?key=" + secret)
        // A page that goes on to the board: the cookie is sent on a navigation the board's own page begins.
        #expect(login.status == .ok && login.contentType.hasPrefix("text/html"))
        #expect(String(decoding: login.body, as: UTF8.self).contains(#"<meta http-equiv="refresh" content="0;url=/?game=0123abcd">"#))
        #expect(ask("/?pair=AAAA-AAAA").status == .forbidden, "pairing is the home network's, not loopback's")
        let setCookie = try #require(login.headers.first { $0.0 == "Set-Cookie" }?.1)
        #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && setCookie.contains("Path=/"))
        let cookie = String(setCookie.prefix { $0 != ";" })
        #expect(ask("/?key=" + secret).status == .forbidden, "a login secret was used twice")
        let page = ask("/?game=0123abcd", cookie: cookie)
        #expect(page.status == .ok && page.contentType.hasPrefix("text/html"))
        #expect(String(decoding: page.body, as: UTF8.self).contains("id=\"board\""))
        #expect(ask("/app.js", cookie: cookie).contentType.hasPrefix("text/javascript"))
        #expect(ask("/nothing", cookie: cookie).status == .notFound)
        #expect(ask("/", method: .POST, cookie: cookie).status == .methodNotAllowed)
        #expect(ask("/ws", cookie: cookie).status == .forbidden, "a WebSocket refused goes on as HTTP and is refused there")
        #expect(ask("/", host: "evil.example:8391", cookie: cookie).status == .misdirectedRequest, "DNS rebinding with a session")
    }

    @Test func eachRequestMustComeWholeWithinItsDeadlineNotAByteAtATime() throws {
        let rules = WebRules(origin: WebOrigin(port: 8391), access: WebAccess(), pairing: WebPairing(keeper: WebPairingTests.Kept()), fingerprint: nil)
        let head = HTTPServerRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/", headers: ["Host": "127.0.0.1:8391"]))
        // A request trickled in, a byte of body every 20 s: closed 30 s after the connection came.
        let loop = EmbeddedEventLoop()
        let trickle = EmbeddedChannel(handler: WebHTTPHandler(rules: rules, deadline: .seconds(30)), loop: loop)
        try trickle.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 50_000)).wait()
        try trickle.writeInbound(head)
        for _ in 0..<2 {
            #expect(trickle.isActive)
            loop.advanceTime(by: .seconds(20))
            if trickle.isActive { try trickle.writeInbound(HTTPServerRequestPart.body(ByteBuffer(bytes: [0]))) }
        }
        #expect(!trickle.isActive, "a request sent a byte at a time held its connection past the deadline")
        // A keep-alive connection has the whole deadline again after each answer.
        let kept = EmbeddedChannel(handler: WebHTTPHandler(rules: rules, deadline: .seconds(30)), loop: loop)
        try kept.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 50_001)).wait()
        loop.advanceTime(by: .seconds(25))
        try kept.writeInbound(head)
        try kept.writeInbound(HTTPServerRequestPart.end(nil))
        guard case .head(let answer)? = try kept.readOutbound(as: HTTPServerResponsePart.self) else {
            Issue.record("no answer")
            return
        }
        #expect(answer.status == .forbidden)
        loop.advanceTime(by: .seconds(25))
        #expect(kept.isActive, "an answered connection was closed before its next deadline")
        loop.advanceTime(by: .seconds(6))
        #expect(!kept.isActive)
    }

    @Test func thePageIsSmallAndLoadsNothingFromOutside() throws {
        #expect(WebPage.weight > 0 && WebPage.weight < 150_000, "the page weighs \(WebPage.weight) bytes")
        let csp = try #require(WebPage.securityHeaders.first { $0.0 == "Content-Security-Policy" }?.1)
        #expect(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'") && !csp.contains("unsafe"))
        for path in WebPage.files {
            // An SVG names its XML namespace by a URL that nothing fetches.
            let text = String(decoding: try #require(WebPage.asset(at: path)).bytes, as: UTF8.self)
                .replacing("xmlns=\"http://www.w3.org/2000/svg\"", with: "")
            for outside in ["http://", "https://", "//cdn", "@import"] where text.contains(outside) {
                Issue.record("\(path) names \(outside)")
            }
        }
    }

    @Test func aCommandKeptForTheOwnerIsRefusedBeforeTheDaemon() throws {
        for (line, code) in [
            (#"{"id": 3, "command": "invite"}"#, "not-from-the-web"), (#"{"id": 4, "command": "circle-remove", "device": "x"}"#, "not-from-the-web"),
            (#"{"id": 5, "command": "web"}"#, "not-from-the-web"), (#"{"id": 6, "command": "forget", "game": "a"}"#, "not-from-the-web"),
            // A page of the board must never write files on this computer, nor copy its secret key.
            (#"{"id": 8, "command": "backup", "path": "/tmp/x"}"#, "not-from-the-web"),
            ("not json", "malformed-request"), (#"{"id": 7, "command": 3}"#, "malformed-request"),
        ] {
            let answer = try #require(WebSocketBridge.refusal(of: Data(line.utf8)), "\(line)")
            #expect(String(decoding: answer, as: UTF8.self).contains("\"code\":\"\(code)\""), "\(line)")
        }
        for line in [#"{"id": 1, "command": "show"}"#, #"{"id": 2, "command": "reveal", "x": 1, "y": 1}"#, #"{"id": 2}"#] {
            #expect(WebSocketBridge.refusal(of: Data(line.utf8)) == nil, "\(line)")
        }
    }
}
