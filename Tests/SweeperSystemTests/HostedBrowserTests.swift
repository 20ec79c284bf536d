import Foundation
import SweeperTestSupport
import Testing

private typealias Kit = WebPageKit

/// Players hosted by one daemon, in real browsers: two phones paired on
/// the home network as Ann and Ben to the family laptop's daemon, and Dad
/// at a daemon of his own, play one game to its end; each move is
/// attributed to its player on every device; removing Ben logs his phone
/// out, and what it sends afterwards changes nothing.
@Suite(.serialized) struct HostedBrowserTests {
    /// A phone paired by opening `url` (a pairing address of `player add`),
    /// showing `game`.
    static func pairedPhone(_ url: String, _ h: DaemonHarness, game: String) throws -> Browser {
        let phone = try Browser(.phone, root: h.root, insecure: true)
        do {
            try phone.open(url)
            let ready = try phone.wait(15, for: "return window.sweeper && window.sweeper.ready ? window.sweeper.game : null") {
                ($0 as? String) == game
            }
            guard (ready as? String) == game else { throw ProcessError("the paired phone did not show \(game): \(String(describing: ready))") }
        } catch {
            phone.quit()
            throw error
        }
        return phone
    }

    @Test func twoPhonesOfOneHostAndADaemonOfItsOwnPlayOneGameEachAsThemselves() throws {
        let (laptop, dad) = try HostedPlayersTests.laptopAndDad()
        defer {
            laptop.cleanup()
            dad.cleanup()
        }
        #expect(try laptop.json(["web", "--lan"])["enabled"] as? Bool == true)
        let ann = try laptop.json(["player", "add", "Ann", "--colour", "green"])
        let ben = try laptop.json(["player", "add", "Ben", "--colour", "red"])
        let annURL = try #require(ann["url"] as? String)
        let benURL = try #require(ben["url"] as? String)
        #expect(annURL.hasPrefix("https://") && annURL.contains("?pair="), "not a pairing address: \(annURL)")
        let annID = try #require((ann["player"] as? [String: Any])?["peer"] as? String)
        let benID = try #require((ben["player"] as? [String: Any])?["peer"] as? String)
        let dadID = try #require(try dad.json(["status"])["peer"] as? String)

        let game = try #require(try laptop.json(["new", "--preset", "beginner", "--seed", "11"])["game"] as? String)
        #expect(eventually(20) { (try? dad.json(["show", game]))?["game"] as? String == game }, "Dad never got the game")
        let mines = try Kit.mines(laptop, game)
        let annPhone = try Self.pairedPhone(annURL, laptop, game: game)
        defer { annPhone.quit() }
        let benPhone = try Self.pairedPhone(benURL, laptop, game: game)
        defer { benPhone.quit() }
        // A pairing code works once.
        let again = try WebLANTests.curl(annURL)
        #expect(again.status == 403, "Ann's pairing code paired a second browser: \(again.status) \(again.body)")
        // Each phone says whom it plays as.
        #expect(try annPhone.run("return window.sweeper.me") as? String == annID)
        #expect(try benPhone.run("return window.sweeper.me") as? String == benID)
        #expect(try annPhone.run("return document.title") as? String == "Sweeper · Ann")

        // Ann taps, Ben taps, Dad types, in turn, each a safe cell, to the end.
        var turn = 0
        for _ in 0..<81 {
            guard try laptop.json(["show", game])["status"] as? String == "playing" else { break }
            let rows = try Kit.rows(laptop, game)
            guard let target = Kit.covered(rows).first(where: { !mines.contains($0) }) else { break }
            switch turn % 3 {
            case 0, 1:
                let phone = turn % 3 == 0 ? annPhone : benPhone
                let (x, y) = try Kit.centre(phone, target[0], target[1], width: 9, height: 9)
                try phone.touch(x, y, holding: 0.05)
            default:
                #expect(try dad.cli(["reveal", game, "\(target[0])", "\(target[1])"]).status == 0)
            }
            turn += 1
            for phone in [annPhone, benPhone] {
                #expect(try Kit.waitForCell(phone, target[0], target[1]) { $0 != "#" } != "#", "\(target) not shown open")
            }
            #expect(eventually(5) { Kit.cell(try Kit.rows(dad, game), target[0], target[1]) != "#" }, "\(target) not open at Dad's")
        }
        #expect(turn >= 3, "the game ended before each had a move")
        #expect(try laptop.json(["show", game])["status"] as? String == "won")

        // Every device attributes the moves alike: the replays and the endings'
        // parts (the laptop's own player looked at the mines, for the test).
        func authors(_ h: DaemonHarness, _ game: String = game) throws -> Set<String> {
            let moves = ((try h.json(["replay", game])["moves"] as? [[String: Any]]) ?? []).filter { $0["kind"] as? String != "peek" }
            return Set(moves.compactMap { $0["authorPeer"] as? String })
        }
        #expect(eventually(10) { try authors(dad) == [annID, benID, dadID] }, "Dad's replay: \((try? authors(dad)) ?? [])")
        #expect(try authors(laptop) == [annID, benID, dadID])
        func parts(_ h: DaemonHarness) throws -> [String] {
            (((try h.json(["show", game])["ending"] as? [String: Any])?["parts"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }.sorted()
        }
        #expect(eventually(10) { try parts(dad) == ["Ann", "Ben", "Dad", "Laptop"] }, "Dad's ending: \((try? parts(dad)) ?? [])")
        #expect(try parts(laptop) == ["Ann", "Ben", "Dad", "Laptop"])
        let script = "const e = document.getElementById('ending'); return e ? e.innerText : ''"
        for phone in [annPhone, benPhone] {
            let ending = try phone.wait(10, for: script) { text in ["Ann", "Ben", "Dad"].allSatisfy { (text as? String ?? "").contains($0) } }
            #expect(["Ann", "Ben", "Dad"].allSatisfy { (ending as? String ?? "").contains($0) }, "a phone's ending: \(ending ?? "")")
        }

        // Ben is removed: his phone is logged out, and its taps change nothing anywhere.
        let next = try #require(try laptop.json(["new", "--preset", "beginner", "--seed", "12"])["game"] as? String)
        #expect(eventually(20) { (try? dad.json(["show", next]))?["game"] as? String == next })
        let removed = try laptop.json(["player", "remove", "Ben", "--yes"])
        #expect(removed["removedFromCircle"] as? Bool == true)
        #expect(eventually(10) { ((try dad.json(["circle"])["removed"] as? [[String: Any]]) ?? []).contains { $0["peer"] as? String == benID } })
        // Ben's page, left open, says it is logged out; its tap goes nowhere.
        let target = try #require(Kit.covered(try Kit.rows(laptop, next)).first)
        let notice = try benPhone.wait(10, for: "const c = document.getElementById('conn'); return c && !c.hidden ? c.textContent : ''") {
            ($0 as? String ?? "").contains("no longer logged in")
        }
        #expect((notice as? String ?? "").contains("no longer logged in"), "Ben's page does not say it was logged out: \(notice ?? "")")
        let (x, y) = try Kit.centre(benPhone, target[0], target[1], width: 9, height: 9)
        try benPhone.touch(x, y, holding: 0.05)
        // Ann's tap on the same game does count: the attempt reaches the daemon when it may.
        let annTarget = try #require(Kit.covered(try Kit.rows(laptop, next)).last)
        try annPhone.open(annURL.components(separatedBy: "?").first.map { $0 + "?game=" + next } ?? annURL)
        _ = try annPhone.wait(15, for: "return window.sweeper && window.sweeper.ready ? window.sweeper.game : null") { ($0 as? String) == next }
        let (ax, ay) = try Kit.centre(annPhone, annTarget[0], annTarget[1], width: 9, height: 9)
        try annPhone.touch(ax, ay, holding: 0.8)
        #expect(eventually(5) { Kit.cell(try Kit.rows(dad, next), annTarget[0], annTarget[1]) == "F" }, "Ann's flag did not reach Dad")
        #expect(Kit.cell(try Kit.rows(laptop, next), target[0], target[1]) == "#", "Ben's tap after his removal changed the board")
        #expect(Kit.cell(try Kit.rows(dad, next), target[0], target[1]) == "#")
        let nextAuthors = try authors(dad, next)
        #expect(nextAuthors == [annID], "the moves of the game after Ben's removal: \(nextAuthors)")
    }

    @Test func twoPhonesOfOneHostRaceEachOnTheirOwnBoardToOneTable() throws {
        let (laptop, dad) = try HostedPlayersTests.laptopAndDad()
        defer {
            laptop.cleanup()
            dad.cleanup()
        }
        #expect(try laptop.json(["web", "--lan"])["enabled"] as? Bool == true)
        let ann = try laptop.json(["player", "add", "Ann"])
        let ben = try laptop.json(["player", "add", "Ben"])
        let annID = try #require((ann["player"] as? [String: Any])?["peer"] as? String)
        let benID = try #require((ben["player"] as? [String: Any])?["peer"] as? String)
        // Ann makes the race against Ben (from a page of hers), and looks at her mines, for the test.
        var annSocket = try HostedPlayersTests.Browser(url: try #require(try laptop.json(["web", "--no-open", "--player", "Ann"])["url"] as? String))
        let made = try annSocket.ask("new", #""preset": "beginner", "seed": 21, "race": true, "players": ["Ben"]"#)
        let race = try #require((made["result"] as? [String: Any])?["game"] as? String, "\(made)")
        let layout = try #require(((try annSocket.ask("show", #""game": "\#(race)", "peek": true"#))["result"] as? [String: Any])?["mineLayout"] as? [String])
        let mines = Set(layout.enumerated().flatMap { y, row in row.enumerated().filter { $0.element == "*" }.map { [$0.offset, y] } })
        #expect(mines.count == 10)
        let annPhone = try Self.pairedPhone(try #require(ann["url"] as? String), laptop, game: race)
        defer { annPhone.quit() }
        let benPhone = try Self.pairedPhone(try #require(ben["url"] as? String), laptop, game: race)
        defer { benPhone.quit() }
        #expect(try annPhone.run("return window.sweeper.me") as? String == annID)
        // Ben taps a mine: his board ends; Ann's does not.
        let mine = try #require(mines.sorted { ($0[1], $0[0]) < ($1[1], $1[0]) }.first)
        let (mx, my) = try Kit.centre(benPhone, mine[0], mine[1], width: 9, height: 9)
        try benPhone.touch(mx, my, holding: 0.05)
        #expect(try benPhone.wait(5, for: "return window.sweeper.status") { ($0 as? String) == "lost" } as? String == "lost", "Ben's board did not end")
        #expect(try annPhone.run("return window.sweeper.status") as? String == "playing")
        // Ann opens every safe cell of her own board by touch.
        for _ in 0..<81 {
            guard try annPhone.run("return window.sweeper.status") as? String == "playing" else { break }
            guard let target = Kit.covered(try Kit.rows(annPhone)).first(where: { !mines.contains($0) }) else { break }
            let (x, y) = try Kit.centre(annPhone, target[0], target[1], width: 9, height: 9)
            try annPhone.touch(x, y, holding: 0.05)
            try Kit.waitForCell(annPhone, target[0], target[1]) { $0 != "#" }
        }
        #expect(try annPhone.wait(5, for: "return window.sweeper.status") { ($0 as? String) == "won" } as? String == "won")
        // One table everywhere: both daemons and both phones.
        func table(_ h: DaemonHarness) throws -> [String: Any]? { try h.json(["show", race])["race"] as? [String: Any] }
        #expect(eventually(10) { try table(dad)?["over"] as? Bool == true }, "Dad's daemon never saw the race end")
        let here = try #require(try table(laptop))
        let there = try #require(try table(dad))
        #expect(
            here["winnerName"] as? String == "Ann" && there["winnerName"] as? String == "Ann",
            "winners: \(here["winnerName"] ?? "none") / \(there["winnerName"] ?? "none")")
        func standings(_ t: [String: Any]) -> [String] {
            ((t["racers"] as? [[String: Any]]) ?? []).map { "\($0["peer"] ?? "")=\($0["status"] ?? "")" }.sorted()
        }
        #expect(
            standings(here) == ["\(annID)=won", "\(benID)=lost"].sorted() && standings(here) == standings(there), "\(standings(here)) / \(standings(there))")
        let script = "return document.getElementById('race-head').innerText"
        for phone in [annPhone, benPhone] {
            let head = try phone.wait(10, for: script) { ($0 as? String ?? "").contains("Ann won") }
            #expect((head as? String ?? "").contains("Ann won"), "a phone's race: \(head ?? "")")
        }
    }
}
