import Foundation
import SweeperTestSupport
import Testing

/// The web board in a real browser (Debian's Chromium, headless, driven
/// over WebDriver and the DevTools protocol): at a phone's size by touch,
/// at a desktop's size by mouse, and two browsers on two daemons playing
/// one game. The page's contract for such checks: the element `#board`
/// spans exactly the board's cells when the whole board fits, and
/// `window.sweeper` holds the shown game's state.
@Suite(.serialized, .enabled(if: Browser.available, "Chromium and chromedriver are not installed (Scripts/debian-packages.txt lists them)"))
struct WebBrowserTests {
    /// A browser logged in to `h`'s board, showing `game`, drawn.
    static func open(_ device: Browser.Device, _ h: DaemonHarness, game: String) throws -> Browser {
        let answer = try h.json(["web", "--no-open", "--game", game])
        let url = try #require(answer["url"] as? String)
        let browser = try Browser(device, root: h.root)
        do {
            try browser.open(url)
            let ready = try browser.wait(10, for: "return window.sweeper && window.sweeper.ready && window.sweeper.game") { ($0 as? String) == game }
            guard (ready as? String) == game else { throw ProcessError("the page did not show \(game): \(String(describing: ready))") }
        } catch {
            browser.quit()
            throw error
        }
        return browser
    }

    /// The centre of cell (x, y) on the page, from `#board`'s rectangle.
    static func centre(_ b: Browser, _ x: Int, _ y: Int, width: Int, height: Int) throws -> (Double, Double) {
        let r = try #require(try b.rect(of: "board"))
        return (r.x + (Double(x) + 0.5) * r.width / Double(width), r.y + (Double(y) + 0.5) * r.height / Double(height))
    }

    /// The board as the page shows it.
    static func rows(_ b: Browser) throws -> [String] {
        try b.run("return window.sweeper.board") as? [String] ?? []
    }

    /// The board as the daemon holds it.
    static func rows(_ h: DaemonHarness, _ game: String) throws -> [String] {
        try h.json(["show", game])["board"] as? [String] ?? []
    }

    static func cell(_ rows: [String], _ x: Int, _ y: Int) -> Character? {
        guard y < rows.count else { return nil }
        let row = Array(rows[y])
        return x < row.count ? row[x] : nil
    }

    @Test func thePageLoadsWithoutErrors() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start(name: "Mum")
        let game = try #require(try h.json(["new", "--preset", "beginner", "--seed", "7"])["id"] as? String)
        let b = try Self.open(.phone, h, game: game)
        defer { b.quit() }
        let r = try #require(try b.rect(of: "board"))
        #expect(r.width > 200 && r.width <= 390)
        #expect(try b.consoleErrors().isEmpty)
    }
}
