import Foundation
import SweeperTestSupport
import Testing

/// The web board served by a real `sweeperd`: what it refuses (no login,
/// another host, another origin, a used login address, a command kept for
/// the device's owner), and the control protocol over its WebSocket.
@Suite(.serialized) struct WebBoardTests {
    /// A daemon with a game, and a login address for its board.
    static func daemonWithAGame() throws -> (DaemonHarness, game: String) {
        let h = try DaemonHarness()
        try h.start(name: "Mum")
        let game = try #require(try h.json(["new", "--preset", "beginner", "--seed", "7"])["game"] as? String)
        return (h, game)
    }

    /// A fresh login address from `sweeper web`.
    static func login(_ h: DaemonHarness, game: String? = nil) throws -> (url: String, port: Int) {
        let answer = try h.json(["web", "--no-open"] + (game.map { ["--game", $0] } ?? []))
        let url = try #require(answer["url"] as? String)
        return (url, try #require(WebTestClient.port(of: url)))
    }

    /// Logs in with a fresh address; the session cookie (`name=value`).
    static func session(_ h: DaemonHarness) throws -> (cookie: String, port: Int) {
        let (url, port) = try login(h)
        let response = try WebTestClient(port: port).request(
            "GET", WebTestClient.target(of: url), headers: [("Host", "127.0.0.1:\(port)")])
        let cookie = try #require(response.headers["set-cookie"]?.split(separator: ";").first.map(String.init))
        return (cookie, port)
    }

    @Test func theBoardRefusesStrangersAndOtherSites() throws {
        let (h, _) = try Self.daemonWithAGame()
        defer { h.cleanup() }
        let (url, port) = try Self.login(h)
        #expect(url.hasPrefix("http://127.0.0.1:\(port)/?key="))
        let host = "127.0.0.1:\(port)"
        func get(_ target: String, host: String = host, cookie: String? = nil) throws -> WebTestClient.Response {
            try WebTestClient(port: port).request("GET", target, headers: [("Host", host)] + (cookie.map { [("Cookie", $0)] } ?? []))
        }
        // No login: nothing is served, the page's files neither.
        for target in ["/", "/app.js", "/board.js", "/board-input.js", "/play.js", "/panels.js", "/keys.js", "/style.css"] {
            let r = try get(target)
            #expect(r.status == 403, "\(target) without a session: \(r.status)")
            #expect(!r.body.contains("<canvas"))
        }
        #expect(try get("/").body.contains("sweeper web"))
        // Another host (DNS rebinding: a site whose name resolves to 127.0.0.1), with the secret even.
        let rebound = try get(WebTestClient.target(of: url), host: "attacker.example:\(port)")
        #expect(rebound.status == 421)
        // The login: once.
        let first = try get(WebTestClient.target(of: url))
        #expect(first.status == 200 && first.body.contains("http-equiv=\"refresh\""))
        let setCookie = try #require(first.headers["set-cookie"])
        #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"))
        let cookie = try #require(setCookie.split(separator: ";").first.map(String.init))
        #expect(try get(WebTestClient.target(of: url)).status == 403, "a login address worked twice")
        let page = try get("/", cookie: cookie)
        #expect(page.status == 200 && page.body.contains("id=\"board\""))
        #expect(page.headers["content-security-policy"]?.contains("default-src 'none'") == true)
        #expect(page.headers["x-frame-options"] == "DENY")
        #expect(try get("/", host: "attacker.example:\(port)", cookie: cookie).status == 421)
        // The WebSocket: the board's own origin with a session, and nothing else.
        let origin = "http://" + host
        #expect(try WebTestClient(port: port).upgrade(host: host, origin: origin, cookie: nil).status == 403, "no session")
        #expect(try WebTestClient(port: port).upgrade(host: host, origin: "http://attacker.example", cookie: cookie).status == 403)
        #expect(try WebTestClient(port: port).upgrade(host: host, origin: "http://127.0.0.1:9", cookie: cookie).status == 403, "a page on another port")
        #expect(try WebTestClient(port: port).upgrade(host: host, origin: nil, cookie: cookie).status == 403, "no origin")
        #expect(
            try WebTestClient(port: port).upgrade(host: "attacker.example:\(port)", origin: "http://attacker.example:\(port)", cookie: cookie).status != 101)
        #expect(try WebTestClient(port: port).upgrade(host: host, origin: origin, cookie: "sweeper-session=00").status == 403, "a made-up session")
        #expect(try WebTestClient(port: port).upgrade(host: host, origin: origin, cookie: cookie).status == 101)
        // After a restart every browser logs in again.
        h.stop()
        try h.start(name: "Mum")
        let port2 = try Self.login(h).port
        #expect(try WebTestClient(port: port2).request("GET", "/", headers: [("Host", "127.0.0.1:\(port2)"), ("Cookie", cookie)]).status == 403)
    }

    @Test func theWebSocketSpeaksTheControlProtocolAndKeepsTheCircleForTheOwner() throws {
        let (h, game) = try Self.daemonWithAGame()
        defer { h.cleanup() }
        let (cookie, port) = try Self.session(h)
        let host = "127.0.0.1:\(port)"
        let requests = try WebTestClient(port: port)
        #expect(try requests.upgrade(host: host, origin: "http://" + host, cookie: cookie).status == 101)
        try requests.sendText(#"{"id": 1, "command": "show"}"#)
        let shown = try #require(try requests.readJSON())
        #expect(shown["id"] as? Int == 1 && shown["ok"] as? Bool == true)
        #expect((shown["result"] as? [String: Any])?["game"] as? String == game)
        // A command kept for the owner is answered with a refusal, and not done.
        let invitationsBefore = try h.json(["invite", "--list"])
        try requests.sendText(#"{"id": 2, "command": "invite"}"#)
        let refused = try #require(try requests.readJSON())
        #expect(refused["id"] as? Int == 2 && refused["ok"] as? Bool == false)
        #expect((refused["error"] as? [String: Any])?["code"] as? String == "not-from-the-web")
        try requests.sendText(#"{"id": 3, "command": "web"}"#)
        #expect(((try requests.readJSON())?["error"] as? [String: Any])?["code"] as? String == "not-from-the-web")
        #expect(
            NSDictionary(dictionary: try h.json(["invite", "--list"])) == NSDictionary(dictionary: invitationsBefore), "an invitation was made from the web")
        // A move from the page is a move: the CLI sees it.
        let before = try #require(try h.json(["show"])["board"] as? [String])
        let covered = before.enumerated().flatMap { y, row in row.enumerated().filter { $0.element == "#" }.map { (x: $0.offset, y: y) } }
        #expect(covered.count >= 2)
        try requests.sendText(#"{"id": 4, "command": "flag", "x": \#(covered[0].x), "y": \#(covered[0].y)}"#)
        let flagged = try #require(try requests.readJSON())
        #expect(flagged["ok"] as? Bool == true, "\(flagged)")
        let rows = try #require(try h.json(["show"])["board"] as? [String])
        #expect(Array(rows[covered[0].y])[covered[0].x] == "F")
        // A subscribed socket gets the CLI's moves as events.
        let events = try WebTestClient(port: port)
        #expect(try events.upgrade(host: host, origin: "http://" + host, cookie: cookie).status == 101)
        try events.sendText(#"{"id": "events", "command": "subscribe"}"#)
        #expect(try events.readJSON()?["ok"] as? Bool == true)
        #expect(try h.cli(["flag", game, "\(covered[1].x)", "\(covered[1].y)"]).status == 0)
        var cells: [String: Any]?
        for _ in 0..<20 {
            guard let event = try events.readJSON() else { break }
            if event["event"] as? String == "cells" {
                cells = event
                break
            }
        }
        #expect((cells?["cells"] as? [[String: Any]])?.first?["x"] as? Int == covered[1].x)
        // A binary message closes the socket.
        try requests.sendFrame(opcode: 0x2, [1, 2, 3])
        let close = try requests.readFrame()
        #expect(close?.opcode == 0x8)
    }

    /// A page that asks and never reads what comes back: each answer is
    /// written whole before the next request is read, so once the sockets'
    /// buffers are full the requests wait, and when too many wait the page
    /// is dropped. Nothing piles up in the daemon.
    @Test func aPageThatAsksAndNeverReadsIsDroppedNotBuffered() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start(name: "Mum")
        // A big board: each answer is some tens of kilobytes.
        let game = try #require(try h.json(["new", "--width", "120", "--height", "120", "--mines", "2000", "--seed", "7"])["game"] as? String)
        let (cookie, port) = try Self.session(h)
        let host = "127.0.0.1:\(port)"
        let page = try WebTestClient(port: port)
        #expect(try page.upgrade(host: host, origin: "http://" + host, cookie: cookie).status == 101)
        let show = #"{"id": 1, "command": "show", "game": "\#(game)"}"#
        // The attempt: a request is answered; how long that takes sets the pace.
        let started = Date()
        try page.sendText(show)
        #expect(try page.readJSON()?["ok"] as? Bool == true)
        let pace = useconds_t(min(0.05, 2 * Date().timeIntervalSince(started)) * 1_000_000)
        // Then requests at half the pace the daemon answers them, none read: a
        // daemon that buffered its answers would take them all (some 100 MB).
        let asked = 1_500
        var sent = 0
        do {
            while sent < asked {
                try page.sendText(show)
                sent += 1
                usleep(pace)
            }
        } catch {}
        // A send fails once the daemon has dropped the page.
        #expect(sent < asked, "the page that never read was answered into buffers, never dropped")
        #expect(try h.cli(["show", game]).status == 0)
    }

    /// `sweeper web` opens the login address through a file that forwards
    /// to it (the secret stays off the command line): a navigation that
    /// another site (a file) started. The session's cookie is SameSite
    /// Strict, so the board must still come up logged in.
    @Test(.enabled(if: Browser.available, "Chromium and chromedriver are not installed"))
    func theLoginAddressOpenedThroughAFileLogsTheBrowserIn() throws {
        let (h, game) = try Self.daemonWithAGame()
        defer { h.cleanup() }
        let url = try #require(try h.json(["web", "--no-open", "--game", game])["url"] as? String)
        let file = h.root + "/web-login.html"
        try #"<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=\#(url)"><title>Sweeper</title>"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        let page = try Browser(.desktop, root: h.root)
        defer { page.quit() }
        try page.open("file://" + file)
        let shown = try page.wait(15, for: "return window.sweeper && window.sweeper.ready ? window.sweeper.game : document.body.innerText") {
            $0 as? String == game
        }
        #expect(shown as? String == game, "the board did not come up logged in: \(String(describing: shown))")
    }

    @Test func aPortInUseLeavesTheDaemonPlayingAndSaysWhy() throws {
        // Another program holds the port first.
        let (holder, taken) = try loopbackSocket(listening: true)
        defer { close(holder) }
        let h = try DaemonHarness()
        defer { h.cleanup() }
        h.webPort = taken
        try h.start(name: "Mum")
        let web = try h.cli(["web", "--no-open"])
        #expect(web.status == 1)
        #expect(web.stderr.contains("port \(taken)") && web.stderr.contains("in use by another program"), "\(web.stderr)")
        #expect(try h.cli(["new"]).status == 0, "the daemon stopped playing")
        #expect(h.log().contains("the web board is not served"))
    }
}
