import Foundation
import SweeperTestSupport
import Testing

/// A tmux server of our own (its own socket name, no config file) with one
/// session of a fixed size. `kill()` stops that server and nothing else.
final class TmuxPane {
    let server: String
    let session = "play"

    init(width: Int, height: Int, command: String, environment: [String: String]) throws {
        server = "sweeper-tui-" + UUID().uuidString.prefix(8).lowercased()
        let env = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.quote($0.value))" }.joined(separator: " ")
        // The server this starts keeps whatever descriptors it was given: no pipes, or reading them never ends.
        let o = try tmux(
            ["new-session", "-d", "-s", session, "-x", "\(width)", "-y", "\(height)", "env -i \(env) sh -c \(Self.quote(command))"],
            collect: false)
        guard o.status == 0 else { throw HarnessError.notReady("tmux new-session exited \(o.status)") }
        _ = try tmux(["set-option", "-t", session, "remain-on-exit", "on"])
    }

    static func quote(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// Runs a tmux command against our server (posix_spawn helpers: Foundation's Process may never see these exit).
    @discardableResult
    func tmux(_ arguments: [String], collect: Bool = true) throws -> Outcome {
        // -u: UTF-8 whatever the test's own locale, so the pane keeps the viewer's glyphs.
        let argv = ["/usr/bin/tmux", "-u", "-L", server, "-f", "/dev/null"] + arguments
        if collect { return try runProcess(argv) }
        // Output to /dev/null, and a bounded wait for the client to finish.
        let pid = try spawnDetached(argv)
        _ = eventually(10, every: 0.05) { hasExited(pid) }
        return Outcome(status: 0, stdout: "", stderr: "")
    }

    /// What a person sees in the pane, one string per row.
    func capture() -> [String] {
        guard let o = try? tmux(["capture-pane", "-p", "-t", session]) else { return [] }
        return o.stdout.components(separatedBy: "\n")
    }

    /// Sends keys (tmux key names, or literal text with `literal`).
    func send(_ keys: String..., literal: Bool = false) {
        _ = try? tmux(["send-keys", "-t", session] + (literal ? ["-l"] : []) + keys)
    }

    /// A tmux format value of the pane (e.g. `#{alternate_on}`).
    func format(_ f: String) -> String {
        ((try? tmux(["display-message", "-p", "-t", session, f]))?.stdout ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func resize(width: Int, height: Int) {
        _ = try? tmux(["resize-window", "-t", session, "-x", "\(width)", "-y", "\(height)"])
    }

    /// Waits (at most 10 s, looking every 50 ms) until the screen satisfies `test`; returns the last screen.
    @discardableResult
    func waitFor(_ what: String = "", _ test: ([String]) -> Bool) -> [String] {
        var screen: [String] = []
        if eventually(
            10, every: 0.05,
            {
                screen = capture(); return test(screen)
            })
        {
            return screen
        }
        Issue.record("timed out waiting for \(what); the pane shows:\n\(screen.joined(separator: "\n"))")
        return screen
    }

    @discardableResult
    func waitFor(_ text: String) -> [String] { waitFor(text) { $0.joined(separator: "\n").contains(text) } }

    /// The processes directly under the pane's shell.
    func childPIDs() -> [Int32] {
        guard let shell = Int32(format("#{pane_pid}")),
            let text = try? String(contentsOfFile: "/proc/\(shell)/task/\(shell)/children", encoding: .utf8)
        else { return [] }
        return text.split(separator: " ").compactMap { Int32($0) }
    }

    /// The one process under the pane's shell (the player), waiting a bounded time for it.
    func playPID() -> Int32? {
        var children: [Int32] = []
        if eventually(
            5, every: 0.05,
            {
                children = childPIDs(); return children.count == 1
            })
        {
            return children[0]
        }
        Issue.record("no single process under the pane's shell: \(childPIDs())")
        return nil
    }

    func kill() {
        _ = try? tmux(["kill-server"], collect: false)
        unlink("/tmp/tmux-\(getuid())/\(server)")
    }
}

/// `sweeper play` in tmux against a real daemon.
@Suite(.serialized) struct PlayInTmuxTests {
    /// The pane's environment: a UTF-8 locale, our XDG dirs, nothing else.
    func environment(_ h: DaemonHarness, extra: [String: String] = [:]) -> [String: String] {
        var env = [
            "PATH": "/usr/bin:/bin", "HOME": h.root, "LANG": "C.UTF-8", "TERM": "tmux-256color", "USER": "tester",
            "XDG_STATE_HOME": h.root + "/xdg-state", "XDG_RUNTIME_DIR": h.root + "/xdg-run", "XDG_CONFIG_HOME": h.root + "/config",
        ]
        for (k, v) in extra { env[k] = v }
        return env
    }

    /// A shell line that notes the terminal mode, plays, and notes it again.
    /// `sweeper replay GAME` in a pane, as `playCommand` runs `play`.
    func replayCommand(_ h: DaemonHarness, _ game: String) -> String {
        "\(DaemonHarness.sweeper) --socket \(h.socketPath) replay \(game); echo \"play exited $?\"; sleep 600"
    }

    func playCommand(_ h: DaemonHarness, _ arguments: String) -> String {
        "stty -g > \(h.root)/stty-before; printf 'before play\\n'; \(DaemonHarness.sweeper) --socket \(h.socketPath) play \(arguments); "
            + "echo \"play exited $?\"; stty -g > \(h.root)/stty-after; sleep 600"
    }

    /// A terminal mode the pane's shell saved with `stty -g`, once it is written in full (bounded wait).
    func savedMode(_ pane: TmuxPane, _ path: String) -> String {
        var text = ""
        pane.waitFor("\(path) written") { _ in
            text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            return text.hasSuffix("\n")
        }
        return text
    }

    func board(_ h: DaemonHarness, _ game: String) throws -> [String] {
        try h.json(["show", game])["board"] as? [String] ?? []
    }

    /// The screen column and row of a board cell (small boards are not scrolled).
    func at(_ screen: [String], x: Int, y: Int) -> Character? {
        let row = 2 + y
        guard row < screen.count else { return nil }
        let chars = Array(screen[row])
        return 1 + 2 * x < chars.count ? chars[1 + 2 * x] : nil
    }

    func firstCovered(_ board: [String]) -> (x: Int, y: Int)? {
        for (y, row) in board.enumerated() { if let x = Array(row).firstIndex(of: "#") { return (x, y) } }
        return nil
    }

    @Test func playsShowsOutsideMovesResizesAndQuitsCleanly() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start()
        let game = try #require(try h.json(["new", "--width", "9", "--height", "9", "--mines", "10", "--seed", "7"])["game"] as? String)
        let pane = try TmuxPane(width: 80, height: 24, command: playCommand(h, ""), environment: environment(h))
        defer { pane.kill() }

        // The most recent game in progress opens, with its status line.
        var screen = pane.waitFor("Mines left 10")
        #expect(screen[0].contains("game " + String(game.prefix(8))))
        #expect(screen.contains { $0.contains("9×9, 10 mines") })
        #expect(pane.format("#{alternate_on}") == "1")

        // A move made with the CLI from outside appears in the pane.
        let cell = try #require(firstCovered(try board(h, game)))
        let flagged = try h.cli(["flag", game, "\(cell.x)", "\(cell.y)"])
        #expect(flagged.status == 0)
        screen = pane.waitFor("the flag from outside") { self.at($0, x: cell.x, y: cell.y) == "⚑" }
        pane.waitFor("Mines left 9")

        // Keys: walk from the centre to another covered cell and flag it.
        let rows = try board(h, game)
        var target: (x: Int, y: Int)?
        for (y, row) in rows.enumerated() {
            for (x, c) in Array(row).enumerated() where c == "#" && (x, y) != (cell.x, cell.y) { target = (x, y) }
        }
        let t = try #require(target)
        let dx = t.x - 4, dy = t.y - 4
        if dx != 0 { pane.send("\(abs(dx))\(dx > 0 ? "l" : "h")", literal: true) }
        if dy != 0 { pane.send("\(abs(dy))\(dy > 0 ? "j" : "k")", literal: true) }
        pane.send("f", literal: true)
        pane.waitFor("Mines left 8")
        #expect(Array(try board(h, game)[t.y])[t.x] == "F")

        // Help overlay opens and any key closes it.
        pane.send("?", literal: true)
        pane.waitFor("any key closes this")
        pane.send("Escape")
        pane.waitFor("help closed") { !$0.joined().contains("any key closes this") }

        // A resize redraws at once, at the new size; too small says so.
        pane.resize(width: 100, height: 30)
        screen = pane.waitFor("the status line at the new bottom") { $0.count >= 30 && $0[27].contains("Mines left 8") }
        pane.resize(width: 20, height: 6)
        pane.waitFor("Terminal too small")
        pane.resize(width: 80, height: 24)
        screen = pane.waitFor("the board again") { $0.count >= 24 && $0[21].contains("Mines left 8") }
        #expect(self.at(screen, x: cell.x, y: cell.y) == "⚑")

        // q leaves the terminal as it was.
        pane.send("q", literal: true)
        screen = pane.waitFor("play exited 0")
        #expect(screen.contains("before play"))
        #expect(!screen.joined().contains("Mines left"))
        #expect(pane.format("#{alternate_on}") == "0")
        #expect(pane.format("#{mouse_sgr_flag}#{mouse_standard_flag}") == "00")
        #expect(pane.format("#{cursor_flag}") == "1")
        let before = savedMode(pane, h.root + "/stty-before")
        let after = savedMode(pane, h.root + "/stty-after")
        #expect(before == after)
    }

    /// `play` with a game nobody has ends at once, with the daemon's
    /// words and status 1, the terminal as it was; in a game, n starts another.
    @Test func anUnknownGameEndsPlayAndNStartsOne() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start()
        let unknown = try TmuxPane(width: 80, height: 24, command: playCommand(h, "ffffffff"), environment: environment(h))
        defer { unknown.kill() }
        let said = unknown.waitFor("play exited 1")
        #expect(said.joined(separator: "\n").contains("no game has an id starting with 'ffffffff'"), "\(said)")
        let game = try #require(try h.json(["new", "--preset", "beginner", "--seed", "2"])["game"] as? String)
        let pane = try TmuxPane(width: 80, height: 24, command: playCommand(h, game), environment: environment(h))
        defer { pane.kill() }
        pane.waitFor("Mines left 10")
        pane.send("n", literal: true)
        pane.waitFor("New game")
        // The form's choice as it stands: enter, and another game is shown.
        pane.send("Enter")
        pane.waitFor("another game") { screen in
            let title = screen.first ?? ""
            return title.contains("· game ") && !title.contains("game \(game.prefix(8))")
        }
        pane.send("q", literal: true)
        pane.waitFor("play exited 0")
    }

    @Test func mouseClicksRevealAndFlag() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start()
        let game = try #require(try h.json(["new", "--width", "9", "--height", "9", "--mines", "10", "--seed", "11"])["game"] as? String)
        let pane = try TmuxPane(width: 80, height: 24, command: playCommand(h, game), environment: environment(h))
        defer { pane.kill() }
        pane.waitFor("Mines left 10")
        let cell = try #require(firstCovered(try board(h, game)))
        // tmux passes SGR mouse reports through as typed: right click at the cell's screen position (1-based).
        pane.send("\u{1B}[<2;\(2 + 2 * cell.x);\(3 + cell.y)M", literal: true)
        pane.waitFor("Mines left 9")
        #expect(Array(try board(h, game)[cell.y])[cell.x] == "F")
        pane.send("q", literal: true)
        pane.waitFor("play exited 0")
    }

    @Test func daemonGoingAwayIsSaidAndSurvived() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start()
        _ = try h.json(["new", "--preset", "beginner", "--seed", "3"])
        let pane = try TmuxPane(width: 80, height: 24, command: playCommand(h, "--no-start-daemon"), environment: environment(h))
        defer { pane.kill() }
        pane.waitFor("Mines left 10")
        h.stop()
        pane.waitFor("The daemon went away; retrying")
        // It never gives up (a minute of attempts used to end it), and n says why no game starts.
        pane.send("n")
        pane.waitFor("No new game while the daemon is away")
        // It tries again and again, with a growing pause, and stays.
        pane.waitFor("the fourth attempt") { $0.joined().filter { !$0.isWhitespace }.contains("(attempt4)") }
        #expect(pane.capture().joined(separator: "\n").contains("retrying"))
        #expect(pane.playPID() != nil)
        try h.start()
        pane.waitFor("Reconnected to the daemon.")
        // SIGTERM restores the terminal too.
        Foundation.kill(try #require(pane.playPID()), SIGTERM)
        let screen = pane.waitFor("play exited 143")
        #expect(screen.contains("before play"))
        #expect(pane.format("#{alternate_on}") == "0")
        #expect(savedMode(pane, h.root + "/stty-before") == savedMode(pane, h.root + "/stty-after"))
    }

    @Test func aDaemonItStartedIsStartedAgainWhenItDies() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        // The daemon play started is stopped by its pid once the pane is gone.
        defer { if let pid = try? h.json(["status"])["pid"] as? Int { Foundation.kill(pid_t(pid), SIGTERM) } }
        // No daemon: play starts one (its state under the pane's XDG_STATE_HOME).
        let pane = try TmuxPane(width: 80, height: 24, command: playCommand(h, "--preset beginner --seed 4"), environment: environment(h))
        defer { pane.kill() }
        pane.waitFor("Mines left 10")
        let first = try #require(try h.json(["status"])["pid"] as? Int)
        Foundation.kill(pid_t(first), SIGKILL)
        let screen = pane.waitFor("Reconnected to the daemon.").joined(separator: "\n")
        let second = try #require(try h.json(["status"])["pid"] as? Int)
        #expect(second != first)
        #expect(screen.contains("Restarted sweeperd (pid \(second))"), "\(screen)")
        #expect(pane.capture().joined(separator: "\n").contains("Mines left 10"))
        // The killed daemon was the viewer's child: reaped, not left a zombie while the viewer runs on.
        let stat = (try? String(contentsOfFile: "/proc/\(first)/stat", encoding: .utf8)) ?? ""
        let state = stat.split(separator: ")").last?.split(separator: " ").first
        #expect(state != "Z", "the first daemon is a zombie: \(stat)")
    }

    @Test func aCrashOrHangupRestoresTheTerminal() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start()
        _ = try h.json(["new", "--preset", "beginner", "--seed", "4"])
        let play = "\(DaemonHarness.sweeper) --socket \(h.socketPath) play"
        let command =
            "stty -g > \(h.root)/stty-before; printf 'before play\\n'; SWIFT_BACKTRACE=enable=no \(play); "
            + "echo \"play exited $?\"; stty -g > \(h.root)/stty-1; read go; \(play); echo \"again exited $?\"; stty -g > \(h.root)/stty-2; sleep 600"
        let pane = try TmuxPane(width: 80, height: 24, command: command, environment: environment(h))
        defer { pane.kill() }
        let before = savedMode(pane, h.root + "/stty-before")

        // A crash (SIGSEGV): the handler restores, then the process dies of the signal.
        pane.waitFor("Mines left 10")
        Foundation.kill(try #require(pane.playPID()), SIGSEGV)
        var screen = pane.waitFor("play exited 139")
        #expect(pane.format("#{alternate_on}#{mouse_sgr_flag}#{cursor_flag}") == "001")
        #expect(savedMode(pane, h.root + "/stty-1") == before)
        #expect(!screen.joined().contains("Mines left"))

        // The terminal hanging up (SIGHUP).
        pane.send("Enter")
        pane.waitFor("Mines left 10")
        Foundation.kill(try #require(pane.playPID()), SIGHUP)
        screen = pane.waitFor("again exited 129")
        #expect(pane.format("#{alternate_on}#{mouse_sgr_flag}#{cursor_flag}") == "001")
        #expect(savedMode(pane, h.root + "/stty-2") == before)
    }

    /// Ann's and bob's daemons in one circle, linked on loopback, with a
    /// beginner game of ann's that bob's daemon holds too.
    func linkedPair() throws -> (ann: DaemonHarness, bob: DaemonHarness, game: String) {
        let a = try DaemonHarness()
        let b = try DaemonHarness()
        do {
            try a.start(name: "ann")
            try b.start(name: "bob")
            #expect(try b.join(a).status == 0)
            let game = try #require(try a.json(["new", "--preset", "beginner", "--seed", "9"])["game"] as? String)
            // Bounded wait for the game to reach bob's daemon.
            _ = eventually(10, every: 0.05) { try b.cli(["show", game]).status == 0 }
            return (a, b, game)
        } catch {
            a.cleanup()
            b.cleanup()
            throw error
        }
    }

    @Test func aPeersMovesAppearWithTheirMarkerAndSyncState() throws {
        let (a, b, game) = try linkedPair()
        defer { a.cleanup(); b.cleanup() }
        let pane = try TmuxPane(width: 80, height: 24, command: playCommand(a, game), environment: environment(a))
        defer { pane.kill() }
        pane.waitFor("Peers: bob in sync")
        let cell = try #require(firstCovered(try board(b, game)))
        #expect(try b.cli(["flag", game, "\(cell.x)", "\(cell.y)"]).status == 0)
        // Bob's flag appears with his marker beside it, and he joins the players.
        let screen = pane.waitFor("bob's flag and marker") { s in
            guard 2 + cell.y < s.count else { return false }
            let row = Array(s[2 + cell.y])
            return 2 + 2 * cell.x < row.count && row[1 + 2 * cell.x] == "⚑" && row[2 + 2 * cell.x] == "b"
        }
        #expect(screen.contains { $0.contains("Players:") && $0.contains("bob") })

        // Bob opens a cell with no mine around it: the cells it floods
        // include ones before it, and his marker goes to the cell he named.
        let mines = try #require(try b.json(["show", game, "--peek"])["mineLayout"] as? [String])
        let covered = try board(b, game)
        func isMine(_ x: Int, _ y: Int) -> Bool { y >= 0 && y < mines.count && x >= 0 && x < mines[y].count && Array(mines[y])[x] == "*" }
        func isCovered(_ x: Int, _ y: Int) -> Bool { y >= 0 && y < covered.count && x >= 0 && x < covered[y].count && Array(covered[y])[x] == "#" }
        /// A covered safe cell with no mine around it and a covered cell above it.
        func opensCellsBefore(_ x: Int, _ y: Int) -> Bool {
            guard isCovered(x, y), !isMine(x, y) else { return false }
            for dy in -1...1 { for dx in -1...1 where isMine(x + dx, y + dy) { return false } }
            return isCovered(x - 1, y - 1) || isCovered(x, y - 1) || isCovered(x + 1, y - 1)
        }
        let cells: [(x: Int, y: Int)] = (0..<81).map { (x: $0 % 9, y: $0 / 9) }
        let zero = try #require(cells.first { opensCellsBefore($0.x, $0.y) }, "no covered zero on the board")
        #expect(try b.cli(["reveal", game, "\(zero.x)", "\(zero.y)"]).status == 0)
        pane.waitFor("bob's marker on the cell he opened") { s in
            guard 2 + zero.y < s.count else { return false }
            let row = Array(s[2 + zero.y])
            return 2 + 2 * zero.x < row.count && row[2 + 2 * zero.x] == "b" && row[1 + 2 * zero.x] != "■"
        }
        // One marker per player: none is left by the flag.
        let after = pane.capture()
        #expect(after.dropFirst(2).prefix(9).map { $0.filter { $0 == "b" }.count }.reduce(0, +) == 1, "\(after.joined(separator: "\n"))")
        pane.send("q", literal: true)
        pane.waitFor("play exited 0")
    }

    /// Ann's move trips a mine while both viewers are open: each shows
    /// the ending within a second, and once the shares of time have come,
    /// the same figures word for word.
    @Test func bothViewersShowTheSameEndingWithinASecond() throws {
        let (a, b, game) = try linkedPair()
        defer { a.cleanup(); b.cleanup() }
        let mines = try #require(try b.json(["show", game, "--peek"])["mineLayout"] as? [String])
        let mine = try #require(
            mines.enumerated().lazy.compactMap { y, row in
                row.firstIndex(of: "*").map { (x: row.distance(from: row.startIndex, to: $0), y: y) }
            }.first)
        let annPane = try TmuxPane(width: 100, height: 30, command: playCommand(a, game), environment: environment(a))
        defer { annPane.kill() }
        let bobPane = try TmuxPane(width: 100, height: 30, command: playCommand(b, game), environment: environment(b))
        defer { bobPane.kill() }
        annPane.waitFor("Peers: bob in sync")
        bobPane.waitFor("Peers: ann in sync")
        let moved = ContinuousClock.now
        #expect(try a.cli(["reveal", game, "\(mine.x)", "\(mine.y)"]).status == 0)
        for (name, pane) in [("ann", annPane), ("bob", bobPane)] {
            pane.waitFor("the ending on \(name)'s screen") { $0.joined(separator: "\n").contains("Lost in") }
            let took = ContinuousClock.now - moved
            print("ending: shown on \(name)'s screen \(took) after the move")
            #expect(took < .seconds(1), "the ending took \(took) to show on \(name)'s screen")
        }
        /// The ending's lines on a screen, without the board beside them and the box's frame.
        func ending(_ screen: [String]) -> [String] {
            screen.compactMap { row in
                row.split(separator: "│").map { $0.trimmingCharacters(in: .whitespaces) }
                    .first { $0.hasPrefix("Lost in") || $0.contains("tripped the mine") || $0.contains(" cells, 3BV ") }
            }
        }
        var ann: [String] = [], bob: [String] = []
        let same = eventually(5, every: 0.2) {
            ann = ending(annPane.capture())
            bob = ending(bobPane.capture())
            return !ann.isEmpty && ann == bob
        }
        #expect(same, "ann's ending:\n\(ann.joined(separator: "\n"))\nbob's:\n\(bob.joined(separator: "\n"))")
        #expect(ann.contains { $0.contains("ann tripped the mine at \(mine.x),\(mine.y)") }, "\(ann)")
        // show prints the same figures.
        let shown = try b.cli(["show", game]).stdout
        #expect(!ann.isEmpty && ann.allSatisfy { shown.contains($0) }, "\(ann)\n\(shown)")
        annPane.send("q", literal: true)
        bobPane.send("q", literal: true)
    }

    /// Ann and bob flag three cells between them; the replay, stepped one
    /// move at a time, shows each move's author in the status line and
    /// their mark beside the cell they flagged; --json lists the same.
    @Test func aReplayShowsTheRightAuthorAtTheRightCellAtEachStep() throws {
        let (a, b, game) = try linkedPair()
        defer { a.cleanup(); b.cleanup() }
        var cells: [(x: Int, y: Int)] = []
        for (who, mover) in [("ann", a), ("bob", b), ("ann", a)] {
            let cell = try #require(firstCovered(try board(mover, game)))
            #expect(try mover.cli(["flag", game, "\(cell.x)", "\(cell.y)"]).status == 0, "\(who)")
            cells.append(cell)
            #expect(
                eventually(10) {
                    (try? a.json(["show", game]))?["flags"] as? Int == cells.count && (try? b.json(["show", game]))?["flags"] as? Int == cells.count
                })
        }
        let moves = try #require(try a.json(["replay", game])["moves"] as? [[String: Any]])
        #expect(moves.map { $0["name"] as? String } == ["ann", "bob", "ann"] && moves.allSatisfy { $0["kind"] as? String == "flag" }, "\(moves)")
        #expect(moves.map { ($0["x"] as? Int ?? -1, $0["y"] as? Int ?? -1) }.elementsEqual(cells.map { ($0.x, $0.y) }, by: ==))

        let pane = try TmuxPane(width: 80, height: 24, command: replayCommand(a, game), environment: environment(a))
        defer { pane.kill() }
        pane.waitFor("replay")
        pane.send("Home", literal: false)
        pane.waitFor("move 0/3")
        for (i, (who, cell)) in zip(["ann", "bob", "ann"], cells).enumerated() {
            pane.send("Right", literal: false)
            let screen = pane.waitFor("step \(i + 1): \(who) at \(cell.x),\(cell.y)") { s in
                guard 2 + cell.y < s.count else { return false }
                let row = Array(s[2 + cell.y])
                return s.joined(separator: "\n").contains("move \(i + 1)/3") && 2 + 2 * cell.x < row.count
                    && row[2 + 2 * cell.x] == Character(String(who.prefix(1)))
            }
            #expect(screen.joined(separator: "\n").contains("\(who) flag at \(cell.x),\(cell.y)"))
        }
        // q leaves the replay for the game as it is now; q there quits.
        pane.send("q", literal: true)
        pane.waitFor("the live game") { s in !(s.first ?? "").contains("replay") && s.joined().contains("Mines left") }
        pane.send("q", literal: true)
        pane.waitFor("play exited 0")
    }

    @Test func eachViewerSeesTheOtherPlayersCursorMoveAndGo() throws {
        let (a, b, game) = try linkedPair()
        defer { a.cleanup(); b.cleanup() }
        let annPane = try TmuxPane(width: 80, height: 24, command: playCommand(a, game), environment: environment(a))
        defer { annPane.kill() }
        let bobPane = try TmuxPane(width: 80, height: 24, command: playCommand(b, game), environment: environment(b))
        defer { bobPane.kill() }

        /// Whether `screen` shows `initial` as another player's cursor on cell (x, y).
        func cursor(_ screen: [String], _ initial: Character, x: Int, y: Int) -> Bool {
            guard 2 + y < screen.count else { return false }
            let row = Array(screen[2 + y])
            return 2 + 2 * x < row.count && row[2 + 2 * x] == initial
        }
        // Both cursors start on the centre of the 9×9 board; each viewer draws the other's.
        annPane.waitFor("bob's cursor on ann's screen") { cursor($0, "B", x: 4, y: 4) && $0.joined().contains("looking: B bob 4,4") }
        bobPane.waitFor("ann's cursor on bob's screen") { cursor($0, "A", x: 4, y: 4) && $0.joined().contains("looking: A ann 4,4") }
        // The CLI says who looks where.
        let presence = try a.json(["peers"])["presence"] as? [[String: Any]] ?? []
        #expect(presence.contains { $0["name"] as? String == "bob" && $0["game"] as? String == game && $0["x"] as? Int == 4 })
        #expect(presence.contains { $0["name"] as? String == "ann" && $0["own"] as? Bool == true })

        // Bob moves two cells right: ann sees it within a second.
        let moved = ContinuousClock.now
        bobPane.send("l", "l", literal: true)
        annPane.waitFor("bob's cursor moved") { cursor($0, "B", x: 6, y: 4) && $0.joined().contains("B bob 6,4") }
        let took = ContinuousClock.now - moved
        print("presence: bob's cursor move shown on ann's screen after \(took)")
        #expect(took < .seconds(1), "the move took \(took) to show")

        // Bob quits: his cursor and his name leave ann's screen.
        bobPane.send("q", literal: true)
        bobPane.waitFor("play exited 0")
        annPane.waitFor("bob gone") { !cursor($0, "B", x: 6, y: 4) && !$0.joined().contains("looking:") }
        annPane.send("q", literal: true)
        annPane.waitFor("play exited 0")
    }

    @Test func aPointShowsOnTheOtherScreen() throws {
        let (a, b, game) = try linkedPair()
        defer { a.cleanup(); b.cleanup() }
        let annPane = try TmuxPane(width: 80, height: 24, command: playCommand(a, game), environment: environment(a))
        defer { annPane.kill() }
        let bobPane = try TmuxPane(width: 80, height: 24, command: playCommand(b, game), environment: environment(b))
        defer { bobPane.kill() }
        annPane.waitFor("bob's cursor on ann's screen") { $0.joined().contains("looking: B bob 4,4") }
        bobPane.send("l", "l", literal: true)
        annPane.waitFor("bob's cursor moved") { $0.joined().contains("B bob 6,4") }
        // Bob points with `'`: the cell flashes on ann's screen, a `!` beside it, and she reads who.
        let pressed = ContinuousClock.now
        bobPane.send("'", literal: true)
        annPane.waitFor("bob's point on ann's screen") { s in
            guard 2 + 4 < s.count else { return false }
            let row = Array(s[2 + 4])
            return 2 + 2 * 6 < row.count && row[2 + 2 * 6] == "!" && s.joined().contains("bob: look here (6,4)")
        }
        print("point: bob's point shown on ann's screen after \(ContinuousClock.now - pressed)")
        bobPane.waitFor("You point at 6,4.")
        // It fades after a few seconds.
        annPane.waitFor("the point faded") { s in !s.joined().contains("look here") && !Array(s[2 + 4]).contains("!") }
        // From the command line too; a cell off the board is refused, saying why.
        #expect(try b.cli(["point", game, "1", "2"]).status == 0)
        annPane.waitFor("bob: look here (1,2)")
        let off = try b.cli(["point", game, "99", "0"])
        #expect(off.status != 0 && off.stderr.contains("9×9"), "\(off.stderr)")
        annPane.send("q", literal: true)
        annPane.waitFor("play exited 0")
    }

    /// Ann races Bob: each plays the layout on a board of their own. Bob's
    /// progress shows on Ann's screen (not on her board), Bob gives up from
    /// his viewer, Ann clears her board, and both hosts show one result.
    @Test func aRaceShowsTheOtherRacersProgressAndOneResultEverywhere() throws {
        let a = try DaemonHarness(), b = try DaemonHarness()
        defer { a.cleanup(); b.cleanup() }
        try a.start(name: "ann")
        try b.start(name: "bob")
        #expect(try b.join(a).status == 0)
        // Without --players the members here (linked now) race.
        let race = try a.json(["new", "--race", "--preset", "beginner"])
        let game = try #require(race["game"] as? String)
        _ = eventually(10, every: 0.05) { try b.cli(["show", game]).status == 0 }
        let names = ((race["race"] as? [String: Any])?["racers"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(names.sorted() == ["ann", "bob"], "\(race)")
        let annPane = try TmuxPane(width: 80, height: 24, command: playCommand(a, game), environment: environment(a))
        defer { annPane.kill() }
        let bobPane = try TmuxPane(width: 80, height: 24, command: playCommand(b, game), environment: environment(b))
        defer { bobPane.kill() }
        // Both boards begin with the opening: the same share opened. (Where
        // the other racer's cursor is follows their share: "bob 74% at 4,4".)
        let begun = #"Race: ann ([0-9]+)%( at [0-9]+,[0-9]+)?, bob ([0-9]+)%"#
        let first = annPane.waitFor("the race line") { $0.joined().range(of: begun, options: .regularExpression) != nil }.joined()
        let startLine = try #require(first.range(of: begun, options: .regularExpression).map { String(first[$0]) })
        let shares = startLine.split(separator: " ").filter { $0.hasSuffix("%") || $0.hasSuffix("%,") }.map { $0.filter(\.isNumber) }
        #expect(shares.count == 2 && shares[0] == shares[1], "\(startLine)")
        let startShare = "Race: ann \(shares.first ?? "")%"
        let sameShares = "Race: ann \(shares.first ?? "")%( at [0-9]+,[0-9]+)?, bob \(shares.last ?? "")%"
        bobPane.waitFor(startLine) { $0.joined().range(of: sameShares, options: .regularExpression) != nil }
        // The mines, as Bob's peek shows them: his board is assisted, not Ann's.
        let mines = try #require(try b.json(["show", game, "--peek"])["mineLayout"] as? [String])
        let opening = try board(b, game)
        var safe: [(x: Int, y: Int)] = []
        for (y, row) in mines.enumerated() {
            for (x, c) in row.enumerated() where c != "*" && Array(opening[y])[x] == "#" { safe.append((x, y)) }
        }
        let cell = try #require(safe.first)
        // Bob opens a cell: his progress reaches Ann's screen, and her board keeps the cell covered.
        let moved = ContinuousClock.now
        #expect(try b.cli(["reveal", game, "\(cell.x)", "\(cell.y)"]).status == 0)
        let annScreen = annPane.waitFor("bob's progress on ann's screen") { s in
            !s.joined().contains(startShare) && s.joined().contains("Race: bob ")
        }
        print("race: bob's progress on ann's screen after \(ContinuousClock.now - moved)")
        #expect(at(annScreen, x: cell.x, y: cell.y) == "■", "Bob's move opened Ann's board")
        #expect(try board(a, game)[cell.y].dropFirst(cell.x).first == "#")
        #expect(try board(b, game)[cell.y].dropFirst(cell.x).first != "#")
        // Bob gives up from his viewer (asked first).
        bobPane.send("G", literal: true)
        bobPane.waitFor("Give up your board in this race?")
        bobPane.send("y", literal: true)
        annPane.waitFor("bob gave up")
        // Ann clears her board: the race is over, and hers.
        for c in safe where try board(a, game)[c.y].dropFirst(c.x).first == "#" {
            #expect(try a.cli(["reveal", game, "\(c.x)", "\(c.y)"]).status == 0)
        }
        annPane.waitFor("Race over: ann won.")
        bobPane.waitFor("ann wins")
        // One table on both hosts, and in the text of `show`.
        func table(_ h: DaemonHarness) -> [String] {
            let view = (try? h.json(["show", game])) ?? [:]
            let race = view["race"] as? [String: Any]
            return (race?["racers"] as? [[String: Any]] ?? []).map { "\($0["name"] ?? "") \($0["status"] ?? "")" } + ["\(race?["winnerName"] ?? "-")"]
        }
        #expect(eventually(20) { table(a) == ["ann won", "bob lost", "ann"] && table(b) == table(a) }, "tables: \(table(a)) and \(table(b))")
        let shown = try b.cli(["show", game, "--racer", "ann"]).stdout
        #expect(shown.contains("race: ann's board") && shown.contains("Race over: ann won.") && shown.contains("gave up"), "\(shown)")
        // A race's win counts for its racer like a solo game of its class: Ann's is ranked.
        let scores = try a.json(["scores"])
        let best = (scores["scores"] as? [[String: Any]] ?? []).compactMap { $0["playerNames"] as? [String] }
        #expect(best == [["ann"]], "\(scores)")
        let bobs = try a.cli(["scores", "--player", "bob"]).stdout
        #expect(bobs.contains("1 played") && bobs.contains("0 won") && bobs.contains("1 lost"), "\(bobs)")
        annPane.send("q", literal: true)
        annPane.waitFor("play exited 0")
    }

    /// Ann and Bob, in one circle, play the board of the day while apart:
    /// the same board on both, two games; once linked, one table on both,
    /// and Bob's viewer says whose day it is.
    @Test func twoHostsApartAllDayGetTheSameDailyBoardAndOneTable() throws {
        let a = try DaemonHarness(), b = try DaemonHarness()
        defer { a.cleanup(); b.cleanup() }
        try a.start(name: "ann")
        try b.start(name: "bob")
        #expect(try b.join(a).status == 0)
        b.stop()
        // Ann alone: her board of the day, won by revealing every safe cell (the mines looked at: assisted).
        let annDaily = try a.json(["daily"])
        let annGame = try #require(annDaily["game"] as? String)
        let opening = try #require(annDaily["board"] as? [String])
        #expect(try a.json(["daily"])["game"] as? String == annGame, "a second daily made another game")
        let mines = try #require(try a.json(["show", annGame, "--peek"])["mineLayout"] as? [String])
        for (y, row) in mines.enumerated() {
            for (x, c) in row.enumerated() where c != "*" {
                guard try board(a, annGame)[y].dropFirst(x).first == "#" else { continue }
                #expect(try a.cli(["reveal", annGame, "\(x)", "\(y)"]).status == 0)
            }
        }
        #expect(try a.json(["show", annGame])["status"] as? String == "won")
        a.stop()
        // Bob alone, later: the same board, as a game of his own.
        try b.start(name: "bob")
        let bobDaily = try b.json(["daily"])
        let bobGame = try #require(bobDaily["game"] as? String)
        #expect(bobGame != annGame && bobDaily["board"] as? [String] == opening, "Bob's board of the day is not Ann's")
        let first = try #require(firstCovered(opening))
        #expect(try b.cli(["flag", bobGame, "\(first.x)", "\(first.y)"]).status == 0)
        // Linked again (no mDNS here: Bob names Ann's address): one table on both, Ann's win first, and her streak.
        try a.start(name: "ann")
        let linked = try b.cli(["connect", try a.peerAddress()])
        #expect(linked.status == 0, "\(linked.stdout)\(linked.stderr)")
        func table(_ h: DaemonHarness) -> [String] {
            let daily = (try? h.json(["scores", "--daily"]))?["daily"] as? [String: Any]
            return (daily?["results"] as? [[String: Any]] ?? []).map { "\($0["name"] ?? "") \($0["status"] ?? "")" }
        }
        #expect(eventually(60) { table(a) == ["ann won", "bob playing"] && table(b) == table(a) }, "tables: \(table(a)) and \(table(b))")
        let text = try b.cli(["scores", "--daily"]).stdout
        #expect(text.contains("Board of the day") && text.contains("Streaks: ann 1 day"), "\(text)")
        // Bob's viewer opens his board of the day and says so.
        let command = "\(DaemonHarness.sweeper) --socket \(b.socketPath) daily; echo \"play exited $?\"; sleep 600"
        let pane = try TmuxPane(width: 100, height: 30, command: command, environment: environment(b))
        defer { pane.kill() }
        pane.waitFor("Bob's board of the day") { s in
            s.joined().contains("game \(bobGame.prefix(8))") && s.joined().contains("board of the day")
        }
        pane.send("q", literal: true)
        pane.waitFor("play exited 0")
    }

    @Test func startsTheDaemonWhenNoneAnswersAndDrawsASCII() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        // No daemon: play starts one (found beside sweeper), says so once, and starts a game.
        let pane = try TmuxPane(
            width: 90, height: 24, command: playCommand(h, "--preset beginner --seed 5"), environment: environment(h, extra: ["LANG": "C"]))
        defer { pane.kill() }
        defer {
            // Stop the daemon play started, by the pid it reports, and wait (bounded) for it to go.
            if let status = try? h.json(["status"]), let pid = status["pid"] as? Int {
                Foundation.kill(Int32(pid), SIGTERM)
                _ = eventually(5, every: 0.05) { !FileManager.default.fileExists(atPath: "/proc/\(pid)") }
            }
        }
        pane.waitFor("Started sweeperd")
        let screen = pane.waitFor("Mines left 10")
        #expect(screen.joined().contains("Started sweeperd (pid ") && screen.joined().contains("); its log is \(h.root)/xdg-state/"))
        // The locale is not UTF-8: ASCII only.
        #expect(screen[1].hasPrefix("+-"))
        #expect(screen.allSatisfy { $0.unicodeScalars.allSatisfy(\.isASCII) })
        #expect(FileManager.default.fileExists(atPath: h.root + "/xdg-state/sweeper/sweeperd.log"))
        pane.send("q", literal: true)
        pane.waitFor("play exited 0")
    }

    @Test func aLossShowsTheTrippedMineAndWrongFlags() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start()
        let game = try #require(try h.json(["new", "--width", "9", "--height", "9", "--mines", "10", "--seed", "13"])["game"] as? String)
        let pane = try TmuxPane(width: 80, height: 24, command: playCommand(h, game), environment: environment(h))
        defer { pane.kill() }
        pane.waitFor("Mines left 10")
        let layout = try #require(try h.json(["show", game, "--peek"])["mineLayout"] as? [String])
        let rows = try board(h, game)
        var safe: (Int, Int)?
        var mine: (Int, Int)?
        for (y, row) in rows.enumerated() {
            for (x, c) in Array(row).enumerated() where c == "#" {
                if Array(layout[y])[x] == "*" { mine = mine ?? (x, y) } else { safe = safe ?? (x, y) }
            }
        }
        let s = try #require(safe), m = try #require(mine)
        #expect(try h.cli(["flag", game, "\(s.0)", "\(s.1)"]).status == 0)
        #expect(try h.cli(["reveal", game, "\(m.0)", "\(m.1)"]).status == 0)
        let view = try h.json(["show", game])
        #expect(view["status"] as? String == "lost")
        let wrong = try #require(view["wrongFlags"] as? [[String: Int]])
        #expect(wrong == [["x": s.0, "y": s.1]])
        let screen = pane.waitFor("the wrong flag") { self.at($0, x: s.0, y: s.1) == "✗" }
        #expect(self.at(screen, x: m.0, y: m.1) == "✸")
        #expect(screen.contains { $0.contains("lost") && $0.contains("mine tripped by tester") })
        pane.send("q", literal: true)
        pane.waitFor("play exited 0")
    }
}
