import Foundation
import SweeperTestSupport
import Testing

/// The web board in a real browser (Debian's Chromium, headless, driven
/// over WebDriver and the DevTools protocol): at a phone's size by touch,
/// at a desktop's size by mouse, and two browsers on two daemons playing
/// one game to its ending. The page's contract for such checks: the
/// element `#board` spans exactly the board's cells when the whole board
/// fits, and `window.sweeper` holds the shown game's state.
@Suite(.serialized, .enabled(if: Browser.available, "Chromium and chromedriver are not installed (Scripts/debian-packages.txt lists them)"))
struct WebBrowserTests {
    typealias Kit = WebPageKit

    /// A daemon with a beginner game of a known seed.
    static func daemonWithAGame(name: String = "Mum") throws -> (DaemonHarness, String) {
        let h = try DaemonHarness()
        do {
            try h.start(name: name)
            let game = try #require(try h.json(["new", "--preset", "beginner", "--seed", "7"])["game"] as? String)
            return (h, game)
        } catch {
            h.cleanup()
            throw error
        }
    }

    @Test func onAPhoneATapRevealsAHoldFlagsAndAShortTapNeverFlags() throws {
        let (h, game) = try Self.daemonWithAGame()
        defer { h.cleanup() }
        let mines = try Kit.mines(h, game)
        let b = try Kit.open(.phone, h, game: game)
        defer { b.quit() }
        let r = try #require(try b.rect(of: "board"))
        #expect(r.width <= 390 && r.width > 250, "a 9×9 board fills a phone's width: \(r)")
        #expect(abs(r.width - r.height) < 1, "cells are square: \(r)")
        let rows = try Kit.rows(h, game)
        #expect(try Kit.rows(b) == rows, "the page shows another board than the daemon")
        let covered = Kit.covered(rows)
        let safe = covered.filter { !mines.contains($0) }
        let mine = try #require(covered.first { mines.contains($0) })
        // Press and hold on a covered cell: a flag, on the page and in the daemon.
        let (hx, hy) = try Kit.centre(b, mine[0], mine[1], width: 9, height: 9)
        try b.touch(hx, hy, holding: 0.8)
        #expect(try Kit.waitForCell(b, mine[0], mine[1]) { $0 == "F" } == "F", "a hold did not flag")
        #expect(Kit.cell(try Kit.rows(h, game), mine[0], mine[1]) == "F")
        // A short tap on a covered safe cell reveals it, and never flags.
        let target = try #require(safe.first)
        let (tx, ty) = try Kit.centre(b, target[0], target[1], width: 9, height: 9)
        try b.touch(tx, ty, holding: 0.05)
        let shown = try Kit.waitForCell(b, target[0], target[1]) { $0 != nil && $0 != "#" }
        #expect(shown != "F" && shown != "#" && shown != nil, "a short tap showed \(String(describing: shown))")
        #expect(!["#", "F"].contains(Kit.cell(try Kit.rows(h, game), target[0], target[1])))
        // A slow tap of 150 ms, well short of a hold, flags nothing either.
        let later = try Kit.rows(h, game)
        if let other = safe.first(where: { Kit.cell(later, $0[0], $0[1]) == "#" }) {
            let (ox, oy) = try Kit.centre(b, other[0], other[1], width: 9, height: 9)
            try b.touch(ox, oy, holding: 0.15)
            let look = try Kit.waitForCell(b, other[0], other[1]) { $0 != "#" }
            #expect(look != "F", "a 150 ms touch flagged")
        }
        let errors = try b.consoleErrors()
        #expect(errors.isEmpty, "\(errors)")
    }

    @Test func onAPhoneATapOnANumberChords() throws {
        let (h, game) = try Self.daemonWithAGame()
        defer { h.cleanup() }
        let mines = try Kit.mines(h, game)
        let rows = try Kit.rows(h, game)
        // A revealed number with a covered safe cell beside it: flag its mines, then tap it.
        var found: (number: [Int], safe: [Int])?
        for y in 0..<9 {
            for x in 0..<9 where found == nil {
                guard let c = Kit.cell(rows, x, y), c.isNumber, c != "0" else { continue }
                let around = Kit.neighbours(x, y, width: 9, height: 9)
                if let s = around.first(where: { Kit.cell(rows, $0[0], $0[1]) == "#" && !mines.contains($0) }) { found = ([x, y], s) }
            }
        }
        let (number, safe) = try #require(found, "no number beside a covered safe cell on this board")
        for m in Kit.neighbours(number[0], number[1], width: 9, height: 9) where mines.contains(m) {
            #expect(try h.cli(["flag", game, "\(m[0])", "\(m[1])"]).status == 0)
        }
        let b = try Kit.open(.phone, h, game: game)
        defer { b.quit() }
        let (x, y) = try Kit.centre(b, number[0], number[1], width: 9, height: 9)
        try b.touch(x, y, holding: 0.05)
        let look = try Kit.waitForCell(b, safe[0], safe[1]) { $0 != "#" }
        #expect(look != "#" && look != "F", "the chord did not open \(safe): \(String(describing: look))")
        #expect(Kit.cell(try Kit.rows(h, game), safe[0], safe[1]) != "#")
    }

    @Test func onADesktopTheMouseRevealsFlagsAndChords() throws {
        let (h, game) = try Self.daemonWithAGame()
        defer { h.cleanup() }
        let mines = try Kit.mines(h, game)
        let b = try Kit.open(.desktop, h, game: game)
        defer { b.quit() }
        let rows = try Kit.rows(h, game)
        let covered = Kit.covered(rows)
        let mine = try #require(covered.first { mines.contains($0) })
        let (mx, my) = try Kit.centre(b, mine[0], mine[1], width: 9, height: 9)
        try b.click(mx, my, button: "right")
        #expect(try Kit.waitForCell(b, mine[0], mine[1]) { $0 == "F" } == "F", "a right click did not flag")
        let safe = try #require(covered.first { !mines.contains($0) })
        let (sx, sy) = try Kit.centre(b, safe[0], safe[1], width: 9, height: 9)
        try b.click(sx, sy)
        #expect(try Kit.waitForCell(b, safe[0], safe[1]) { $0 != "#" } != "#", "a left click did not reveal")
        // A middle click on a number whose mines are flagged opens the rest around it.
        let now = try Kit.rows(h, game)
        var chorded = false
        for y in 0..<9 {
            for x in 0..<9 where !chorded {
                guard let c = Kit.cell(now, x, y), c.isNumber else { continue }
                let around = Kit.neighbours(x, y, width: 9, height: 9)
                guard let s = around.first(where: { Kit.cell(now, $0[0], $0[1]) == "#" && !mines.contains($0) }) else { continue }
                for m in around where mines.contains(m) && Kit.cell(now, m[0], m[1]) != "F" {
                    _ = try h.cli(["flag", game, "\(m[0])", "\(m[1])", "--mark", "flag"])
                }
                let (nx, ny) = try Kit.centre(b, x, y, width: 9, height: 9)
                try b.click(nx, ny, button: "middle")
                #expect(try Kit.waitForCell(b, s[0], s[1]) { $0 != "#" } != "#", "a middle click on \(x),\(y) did not chord")
                chorded = true
            }
        }
        #expect(chorded, "no number to chord on this board")
        let errors = try b.consoleErrors()
        #expect(errors.isEmpty, "\(errors)")
    }

    @Test func aMoveMadeWithTheCommandLineShowsOnThePageWithinASecond() throws {
        let (h, game) = try Self.daemonWithAGame()
        defer { h.cleanup() }
        let mines = try Kit.mines(h, game)
        let b = try Kit.open(.phone, h, game: game)
        defer { b.quit() }
        let rows = try Kit.rows(h, game)
        let covered = Kit.covered(rows)
        let target = try #require(covered.first { !mines.contains($0) })
        let start = Date()
        #expect(try h.cli(["flag", game, "\(target[0])", "\(target[1])", "--mark", "flag"]).status == 0)
        let look = try Kit.waitForCell(b, target[0], target[1], seconds: 1) { $0 == "F" }
        let took = Date().timeIntervalSince(start)
        print("web: a move made with the command line drawn on the page \(String(format: "%.3f", took)) s after the command started")
        #expect(look == "F", "not shown within a second")

        // The frame around the board follows what changed, and only that:
        // the counter after the flag, a badge the game gains (archived
        // from the command line), the badges it had (assisted, by the
        // peek at the mines) kept through both.
        let label = try b.wait(2, for: "return document.getElementById('mines-left').getAttribute('aria-label')") { ($0 as? String) == "9 mines left" }
        #expect(label as? String == "9 mines left")
        let badges = "return [...document.querySelectorAll('#badges .tag')].map((e) => e.textContent).join(',')"
        #expect((try b.run(badges) as? String)?.contains("Assisted") == true)
        #expect(try h.cli(["archive", game]).status == 0)
        let shown = try b.wait(5, for: badges) { ($0 as? String)?.contains("Archived") == true } as? String
        #expect(shown?.contains("Archived") == true && shown?.contains("Assisted") == true, "badges: \(shown ?? "none")")
        #expect((try b.run(badges) as? String)?.components(separatedBy: "Assisted").count == 2, "one Assisted badge")
    }

    @Test func twoBrowsersOnTwoDaemonsPlayOneGameToItsEndingAndShowTheSameFigures() throws {
        let ann = try DaemonHarness()
        let bob = try DaemonHarness()
        defer {
            ann.cleanup()
            bob.cleanup()
        }
        try ann.start(name: "ann")
        try bob.start(name: "bob")
        #expect(try bob.join(ann).status == 0)
        let game = try #require(try ann.json(["new", "--preset", "beginner", "--seed", "11"])["game"] as? String)
        #expect(eventually(20) { (try? bob.json(["show", game]))?["game"] as? String == game }, "bob never got the game")
        let mines = try Kit.mines(ann, game)
        let phone = try Kit.open(.phone, ann, game: game)
        defer { phone.quit() }
        let desktop = try Kit.open(.desktop, bob, game: game)
        defer { desktop.quit() }
        // Each in turn opens a safe cell, by touch on ann's phone, by mouse on bob's desktop.
        var turn = 0
        for _ in 0..<81 {
            let rows = try Kit.rows(ann, game)
            guard try ann.json(["show", game])["status"] as? String == "playing" else { break }
            guard let target = Kit.covered(rows).first(where: { !mines.contains($0) }) else { break }
            let browser = turn % 2 == 0 ? phone : desktop
            let (x, y) = try Kit.centre(browser, target[0], target[1], width: 9, height: 9)
            if turn % 2 == 0 { try browser.touch(x, y, holding: 0.05) } else { try browser.click(x, y) }
            turn += 1
            // Both pages show the cell open before the next move.
            for page in [phone, desktop] {
                #expect(try Kit.waitForCell(page, target[0], target[1]) { $0 != "#" } != "#", "\(target) not shown open")
            }
        }
        #expect(turn >= 2, "the game needed no move from the pages")
        #expect(try ann.json(["show", game])["status"] as? String == "won")
        // Both pages say won and show the ending's figures, the same on both
        // once the players' last shares of played time have crossed (a
        // page shows its ending at once, and again when the time settles).
        for page in [phone, desktop] {
            let status = try page.wait(5, for: "return document.body.dataset.status") { ($0 as? String) == "won" }
            #expect(status as? String == "won")
        }
        let script = "const e = document.getElementById('ending'); return e ? e.innerText : ''"
        var endings = ["", "-"]
        _ = eventually(10, every: 0.2) {
            endings = [try phone.run(script) as? String ?? "", try desktop.run(script) as? String ?? ""]
            return endings[0].contains("3BV") && endings[0] == endings[1]
        }
        #expect(endings[0].contains("3BV") && endings[0] == endings[1], "the endings differ:\n\(endings[0])\n---\n\(endings[1])")
        #expect(endings[0].contains("ann") && endings[0].contains("bob"), "each player's part: \(endings[0])")
        // The ending's `r` replays the game: Home shows the opening, each step one move more, as `replay` has them.
        let replay = try bob.json(["replay", game])
        let opening = try #require(replay["opening"] as? [String])
        let moves = try #require(replay["moves"] as? [[String: Any]])
        try desktop.press("r")
        try desktop.press("Home")
        let start = try desktop.wait(5, for: "return window.sweeper.board") { ($0 as? [String]) == opening }
        #expect(start as? [String] == opening, "Home in the replay does not show the opening")
        var expected = opening.map { Array($0) }
        for step in 0..<min(3, moves.count) {
            for c in moves[step]["changed"] as? [[String: Any]] ?? [] {
                if let x = c["x"] as? Int, let y = c["y"] as? Int, let v = (c["value"] as? String)?.first { expected[y][x] = v }
            }
            let want = expected.map { String($0) }
            try desktop.press("ArrowRight")
            let shown = try desktop.wait(5, for: "return window.sweeper.board") { ($0 as? [String]) == want }
            #expect(shown as? [String] == want, "replay step \(step + 1) shows another board")
        }
        try desktop.press("ArrowLeft")
        let back = try desktop.wait(5, for: "return window.sweeper.board") { ($0 as? [String]) != expected.map { String($0) } }
        #expect(back as? [String] != expected.map { String($0) }, "a step back changed nothing")
    }
}
