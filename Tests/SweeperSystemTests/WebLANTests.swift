import Foundation
import SweeperTestSupport
import Testing

/// The web board on the home network: served over TLS with the daemon's
/// own certificate (its fingerprint what the CLI prints), only to browsers
/// paired with a one-time code, guesses limited, paired browsers listed
/// and revoked (their WebSockets closed at once), and off again.
@Suite(
    .serialized,
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl"), "curl and openssl are not installed"))
struct WebLANTests {
    /// `curl -k` to the board: status, headers (lower-cased names) and body.
    static func curl(_ url: String, headers: [String] = [], timeout: Int = 5) throws -> (status: Int, headers: [String: String], body: String) {
        let argv = ["/usr/bin/curl", "-k", "-s", "-i", "--max-time", "\(timeout)"] + headers.flatMap { ["-H", $0] } + [url]
        let out = try runProcess(argv)
        let text = out.stdout.replacing("\r\n", with: "\n")
        guard let split = text.range(of: "\n\n") else { return (0, [:], text) }
        let head = text[..<split.lowerBound].split(separator: "\n")
        var fields: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let status = Int(head.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, fields, String(text[split.upperBound...]))
    }

    /// The SHA-256 fingerprint of the certificate served at 127.0.0.1:`port`.
    static func servedFingerprint(_ port: Int) throws -> String {
        let shell = "/usr/bin/openssl s_client -connect 127.0.0.1:\(port) </dev/null 2>/dev/null | /usr/bin/openssl x509 -fingerprint -sha256 -noout"
        let out = try runProcess(["/bin/sh", "-c", shell]).stdout
        return String(out.split(separator: "=", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func onlyAPairedBrowserGetsInAndARevokedOneIsOutAtOnce() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start(name: "Mum")
        // Off by default: no pairing.
        #expect(try h.cli(["web", "pair"]).status == 1)
        let lan = try h.json(["web", "--lan"])
        #expect(lan["enabled"] as? Bool == true, "\(lan)")
        let port = try #require(lan["port"] as? Int)
        let fingerprint = try #require(lan["fingerprint"] as? String)
        #expect(try Self.servedFingerprint(port) == fingerprint, "the CLI prints another fingerprint than the one served")
        let base = "https://127.0.0.1:\(port)"
        // Not paired: the pairing page, with the fingerprint, and nothing else.
        let unpaired = try Self.curl(base + "/")
        #expect(unpaired.status == 403 && unpaired.body.contains("Pair this browser") && unpaired.body.contains(fingerprint))
        #expect(try Self.curl(base + "/app.js").status == 403)
        #expect(try Self.curl(base + "/", headers: ["Host: attacker.example:\(port)"]).status == 421, "DNS rebinding")
        #expect(try Self.curl("http://127.0.0.1:\(port)/").status != 200, "served without TLS")
        // A wrong code pairs nothing; the right one pairs once.
        let pair = try h.json(["web", "pair"])
        let code = try #require(pair["code"] as? String)
        #expect(pair["fingerprint"] as? String == fingerprint)
        #expect(try Self.curl(base + "/?pair=ZZZZ-ZZZZ").status == 403)
        let paired = try Self.curl(base + "/?pair=" + code)
        #expect(paired.status == 200 && paired.body.contains("http-equiv=\"refresh\""))
        let setCookie = try #require(paired.headers["set-cookie"])
        #expect(setCookie.contains("Secure") && setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"))
        let cookie = try #require(setCookie.split(separator: ";").first.map(String.init))
        #expect(try Self.curl(base + "/?pair=" + code).status == 403, "a pairing code worked twice")
        let page = try Self.curl(base + "/", headers: ["Cookie: " + cookie])
        #expect(page.status == 200 && page.body.contains("id=\"board\""))
        #expect(page.headers["strict-transport-security"] != nil)
        // Listed; its WebSocket opens from the board's own origin only.
        let devices = try h.json(["web", "devices"])["devices"] as? [[String: Any]] ?? []
        #expect(devices.count == 1)
        let id = try #require(devices.first?["device"] as? String)
        let upgrade = [
            "Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Cookie: " + cookie,
        ]
        #expect(try Self.curl(base + "/ws", headers: upgrade + ["Origin: http://attacker.example"], timeout: 2).status == 403)
        #expect(try Self.curl(base + "/ws", headers: upgrade + ["Origin: http://127.0.0.1:\(port)"], timeout: 2).status == 403, "http origin on https")
        // An open WebSocket closes at once when its browser is revoked.
        let socket = try TLSWebSocket(port: port, cookie: cookie)
        #expect(socket.status == 101)
        #expect(socket.isOpen(after: 0.3), "the socket closed by itself")
        #expect(try h.cli(["web", "revoke", String(id.prefix(3))]).status == 0)
        #expect(socket.closes(within: 3), "a revoked browser's WebSocket stayed open")
        #expect(try Self.curl(base + "/", headers: ["Cookie: " + cookie]).status == 403)
        #expect((try h.json(["web", "devices"])["devices"] as? [Any] ?? [1]).isEmpty)
        #expect(try h.cli(["web", "revoke", id]).status == 1)
        // Ten wrong codes stop every code for a minute, the right one too.
        let next = try #require(try h.json(["web", "pair"])["code"] as? String)
        for _ in 0..<10 { _ = try Self.curl(base + "/?pair=ZZZZ-ZZZZ") }
        #expect(try Self.curl(base + "/?pair=" + next).status == 429)
        // Off again: nothing listens; on after a restart it is what was chosen.
        #expect(try h.json(["web", "--no-lan"])["enabled"] as? Bool == false)
        #expect(try Self.curl(base + "/", timeout: 2).status == 0)
        h.stop()
        try h.start(name: "Mum")
        #expect(try h.cli(["web", "pair"]).status == 1, "the home network was served again after a restart")
    }

    @Test(.enabled(if: Browser.available, "Chromium and chromedriver are not installed"))
    func aPhonePairedWithTheCodePlaysByTouch() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start(name: "Mum")
        let game = try #require(try h.json(["new", "--preset", "beginner", "--seed", "7"])["game"] as? String)
        let port = try #require(try h.json(["web", "--lan"])["port"] as? Int)
        let code = try #require(try h.json(["web", "pair"])["code"] as? String)
        let phone = try Browser(.phone, root: h.root, insecure: true)
        defer { phone.quit() }
        try phone.open("https://127.0.0.1:\(port)/?pair=\(code)")
        let shown = try phone.wait(15, for: "return window.sweeper && window.sweeper.ready ? window.sweeper.game : null") { ($0 as? String) == game }
        #expect(shown as? String == game, "the paired phone does not show the game")
        let mines = try WebPageKit.mines(h, game)
        let rows = try WebPageKit.rows(h, game)
        let target = try #require(WebPageKit.covered(rows).first { !mines.contains($0) })
        let (x, y) = try WebPageKit.centre(phone, target[0], target[1], width: 9, height: 9)
        try phone.touch(x, y)
        #expect(try WebPageKit.waitForCell(phone, target[0], target[1]) { $0 != "#" } != "#")
        #expect(WebPageKit.cell(try WebPageKit.rows(h, game), target[0], target[1]) != "#", "the phone's tap did not reach the daemon")
        // Listed by what its browser says it is (headless Chromium says Linux).
        let name = (try h.json(["web", "devices"])["devices"] as? [[String: Any]] ?? []).first?["name"] as? String
        #expect(name?.hasPrefix("Chrome on ") == true, "\(String(describing: name))")
    }
}

/// A WebSocket over TLS through `openssl s_client`, enough to see it open
/// and close.
final class TLSWebSocket {
    let process = Process()
    private let output = Pipe()
    private let input = Pipe()
    private(set) var status = 0

    init(port: Int, cookie: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["s_client", "-quiet", "-connect", "127.0.0.1:\(port)"]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let request =
            "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: https://127.0.0.1:\(port)\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
            + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nCookie: \(cookie)\r\n\r\n"
        input.fileHandleForWriting.write(Data(request.utf8))
        var head = Data()
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, !String(decoding: head, as: UTF8.self).contains("\r\n\r\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            head.append(chunk)
        }
        status = Int(String(decoding: head, as: UTF8.self).split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    deinit {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    /// Whether the connection is still open `seconds` from now.
    func isOpen(after seconds: Double) -> Bool {
        usleep(useconds_t(seconds * 1_000_000))
        return process.isRunning
    }

    /// Whether the server closes the connection within `seconds` (openssl then exits).
    func closes(within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if !process.isRunning { return true }
            usleep(20_000)
        }
        return !process.isRunning
    }
}
