import Foundation
import SweeperTestSupport
import Testing

/// The web board as a family of two meets it, in a real browser: each
/// player's letter as the daemon hands it out, a rename shown at once,
/// another player's board of the day asked about before it marks yours,
/// record times to the hundredth, and another racer's place in the race
/// line.
@Suite(.serialized, .enabled(if: Browser.available, "Chromium and chromedriver are not installed (Scripts/debian-packages.txt lists them)"))
struct WebFamilyTests {
    typealias Kit = WebPageKit

    /// Each chip of the players line: its name and its letter.
    static func chips(_ b: Browser) throws -> [String: String] {
        let script = """
            return [...document.querySelectorAll('#players .chip')].map(c => [c.querySelector('.chip-name').textContent, c.querySelector('.pbadge').textContent])
            """
        var out: [String: String] = [:]
        for pair in try b.run(script) as? [[String]] ?? [] where pair.count == 2 { out[pair[0]] = pair[1] }
        return out
    }

    /// The daemon's letter for each player of `game`, by name.
    static func letters(_ h: DaemonHarness, _ game: String) throws -> [String: String] {
        var out: [String: String] = [:]
        for p in try h.json(["show", game])["players"] as? [[String: Any]] ?? [] {
            if let name = p["name"] as? String, let letter = p["letter"] as? String { out[name] = letter }
        }
        return out
    }

    @Test func eachPlayersLetterIsTheDaemonsAndARenameShowsAtOnce() throws {
        let (ann, bob) = try twoDaemonsInOneCircle()
        defer { ann.cleanup(); bob.cleanup() }
        let game = try #require(try ann.json(["new", "--preset", "beginner", "--seed", "21"])["game"] as? String)
        #expect(eventually(20) { (try? bob.json(["show", game]))?["game"] as? String == game }, "bob never got the game")
        let mines = try Kit.mines(ann, game)
        // Both play a cell, so both are players of the game.
        for (h, n) in [(ann, 0), (bob, 1)] {
            let cell = try #require(Kit.covered(try Kit.rows(h, game)).filter { !mines.contains($0) }.dropFirst(n * 7).first)
            #expect(try h.cli(["flag", game, "\(cell[0])", "\(cell[1])"]).status == 0)
        }
        #expect(
            eventually(20) { (try? Self.letters(ann, game))?.count == 2 && (try? Self.letters(bob, game)) == (try? Self.letters(ann, game)) },
            "the daemons do not agree on the letters: \((try? Self.letters(ann, game)) ?? [:]) and \((try? Self.letters(bob, game)) ?? [:])")
        let given = try Self.letters(ann, game)
        let page = try Kit.open(.desktop, ann, game: game)
        defer { page.quit() }
        let shown = try page.wait(10, for: "return document.getElementById('players').innerText") { _ in (try? Self.chips(page)) == given }
        let first = try Self.chips(page)
        #expect(first == given, "the page's letters \(first) are not the daemon's \(given) (\(String(describing: shown)))")
        // Bob takes another name: the page says it at once, with no reload, and the letter is the daemon's still.
        #expect(try bob.cli(["profile", "--name", "Robert"]).status == 0)
        #expect(eventually(10) { (try? Self.letters(ann, game))?["Robert"] != nil }, "ann's daemon never heard of the rename")
        let renamed = try Self.letters(ann, game)
        _ = try page.wait(10, for: "return document.getElementById('players').innerText") { ($0 as? String ?? "").contains("Robert") }
        let after = try Self.chips(page)
        #expect(after == renamed, "after the rename the page shows \(after), the daemon \(renamed)")
        #expect(try page.run("return performance.getEntriesByType('navigation').length") as? Int == 1, "the page was loaded again")
        let errors = try page.consoleErrors()
        #expect(errors.isEmpty, "\(errors)")
    }

    @Test func anotherPlayersBoardOfTodayIsAskedAboutAndItsWinShowsToTheHundredth() throws {
        let (ann, bob) = try twoDaemonsInOneCircle()
        defer { ann.cleanup(); bob.cleanup() }
        // Bob wins his board of the day (looking at its mines: assisted, and still in the table with its time).
        let bobs = try #require(try bob.json(["daily"])["game"] as? String)
        let mines = try Kit.mines(bob, bobs)
        for cell in Kit.covered(try Kit.rows(bob, bobs)) where !mines.contains(cell) {
            guard Kit.cell(try Kit.rows(bob, bobs), cell[0], cell[1]) == "#" else { continue }
            #expect(try bob.cli(["reveal", bobs, "\(cell[0])", "\(cell[1])"]).status == 0)
        }
        #expect(try bob.json(["show", bobs])["status"] as? String == "won")
        func result(_ name: String) -> [String: Any]? {
            let daily = (try? ann.json(["scores", "--daily"]))?["daily"] as? [String: Any]
            return (daily?["results"] as? [[String: Any]] ?? []).first { $0["name"] as? String == name }
        }
        #expect(eventually(30) { result("bob")?["playedMillis"] as? Int != nil }, "bob's win never reached ann's table")
        let millis = try #require(result("bob")?["playedMillis"] as? Int)
        // Ann opens Bob's board before playing hers: the page asks first.
        let url = try #require(try ann.json(["web", "--no-open", "--game", bobs])["url"] as? String)
        let page = try Browser(.desktop, root: ann.root)
        defer { page.quit() }
        try page.open(url)
        let asking = "const e = document.getElementById('confirm-layer'); return e && !e.hidden ? document.getElementById('confirm-text').textContent : null"
        let question =
            try page.wait(15, for: asking) {
                $0 as? String != nil
            } as? String
        #expect(
            (question ?? "").contains("bob's board of the day") && (question ?? "").contains("not ranked"),
            "the page did not ask: \(String(describing: question))")
        // No: nothing is shown, and nothing of Ann's is marked.
        try page.run("document.getElementById('confirm-no').click()")
        // The page has done with the question once it says so.
        let said = try page.wait(5, for: "return document.getElementById('message').textContent") { ($0 as? String) == "Not opened." }
        #expect(said as? String == "Not opened.")
        #expect(try page.run("return window.sweeper.game") as? String != bobs, "declined, and shown anyway")
        #expect(result("ann")?["assisted"] as? Bool != true, "declined, and ann's board was marked")
        // Again (a login address serves once: a new one), yes: Bob's board is shown, and Ann's board of today is marked as having looked.
        try page.open(try #require(try ann.json(["web", "--no-open", "--game", bobs])["url"] as? String))
        _ = try page.wait(15, for: asking) { $0 as? String != nil }
        try page.run("document.getElementById('confirm-yes').click()")
        let opened = try page.wait(15, for: "return window.sweeper.ready ? window.sweeper.game : null") { $0 as? String == bobs }
        #expect(opened as? String == bobs, "looked, and not shown")
        let annsDaily = try #require(try ann.json(["daily"])["game"] as? String)
        #expect(try ann.json(["show", annsDaily])["assisted"] as? Bool == true, "ann looked, and her board of today is not marked")
        // The day's table shows Bob's time to the hundredth, as the daemon has it (once the
        // players' last shares of played time have crossed, the time settles: read both again).
        func hundredths() -> String {
            let ms = result("bob")?["playedMillis"] as? Int ?? millis
            return String(format: "%d:%02d.%02d", ms / 60_000, ms / 1000 % 60, ms % 1000 / 10)
        }
        try page.press("d")
        let table = try page.wait(10, for: "return document.body.innerText") { ($0 as? String ?? "").contains("bob — \(hundredths())") }
        #expect((table as? String ?? "").contains("bob — \(hundredths())"), "no \(hundredths()) for bob in:\n\(table as? String ?? "")")
    }

    @Test func anotherRacersPlaceIsInTheRaceLine() throws {
        let (ann, bob) = try twoDaemonsInOneCircle()
        defer { ann.cleanup(); bob.cleanup() }
        let race = try ann.json(["new", "--race", "--preset", "beginner"])
        let game = try #require(race["game"] as? String)
        #expect(eventually(20) { (try? bob.json(["show", game]))?["game"] as? String == game }, "bob never got the race")
        let page = try Kit.open(.desktop, ann, game: game)
        defer { page.quit() }
        // Bob's viewer looks at 4,2 of his own board.
        let viewer = try ControlLineClient(path: bob.socketPath)
        #expect(viewer.request(["id": 1, "command": "subscribe"])?["ok"] as? Bool == true)
        #expect(viewer.send(#"{"id":0,"command":"cursor","game":"\#(game)","x":4,"y":2}"#))
        let line = try page.wait(15, for: "return document.getElementById('racers').innerText") { ($0 as? String ?? "").contains("at 4,2") }
        #expect((line as? String ?? "").contains("at 4,2"), "the race line: \(line as? String ?? "")")
        let errors = try page.consoleErrors()
        #expect(errors.isEmpty, "\(errors)")
    }
}
