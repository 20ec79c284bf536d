import Foundation
import SweeperTestSupport
import Testing

/// `archive` hides a game on every device: on a terminal it names the game
/// and asks first; a script (no terminal) or `--yes` goes on as before.
@Suite(.serialized) struct ArchiveAskTests {
    func environment(_ h: DaemonHarness) -> [String: String] {
        ["PATH": "/usr/bin:/bin", "HOME": h.root, "LANG": "C.UTF-8", "TERM": "tmux-256color", "USER": "tester"]
    }

    func listed(_ h: DaemonHarness) throws -> [String] {
        (try h.json(["games"])["games"] as? [[String: Any]] ?? []).compactMap { $0["game"] as? String }
    }

    @Test func onATerminalArchiveAsksFirst() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start()
        let game = try #require(try h.json(["new", "--preset", "beginner"])["game"] as? String)
        let line = "\(DaemonHarness.sweeper) --socket \(h.socketPath) archive \(game.prefix(8)); echo \"archive exited $?\"; sleep 600"

        // Asked, and answered no: nothing archived.
        let no = try TmuxPane(width: 100, height: 24, command: line, environment: environment(h))
        defer { no.kill() }
        let asked = no.waitFor("[y/N]").joined(separator: "\n")
        #expect(asked.contains("Archive \(game.prefix(8)) (9×9 (10), playing ") && asked.contains("%) on every device? [y/N]"), "\(asked)")
        no.send("n", "Enter")
        #expect(no.waitFor("archive exited 1").joined(separator: "\n").contains("Nothing archived."))
        #expect(try listed(h).contains(game))

        // Asked, and answered yes: archived.
        let yes = try TmuxPane(width: 100, height: 24, command: line, environment: environment(h))
        defer { yes.kill() }
        yes.waitFor("[y/N]")
        yes.send("y", "Enter")
        #expect(yes.waitFor("archive exited 0").joined(separator: "\n").contains("Archived \(game.prefix(8)) on every device"))
        #expect(try !listed(h).contains(game))

        // No terminal (a script): it goes on without asking, as it always did.
        let undone = try h.cli(["archive", "--undo", game])
        #expect(undone.status == 0)
        #expect(try listed(h).contains(game))
        let scripted = try h.cli(["archive", game])
        #expect(scripted.status == 0 && !scripted.stderr.contains("[y/N]"), "\(scripted.stderr)")
        #expect(try !listed(h).contains(game))
    }
}
