import Foundation
import SweeperSync
import SweeperTestSupport
import Testing

// Several hosts in network namespaces on one bridge, each with its own D-Bus
// and avahi-daemon (Scripts/netns-lab.sh), a real `sweeperd` in each, found by
// mDNS alone, driven with the real `sweeper` CLI through each daemon's control
// socket (a file, so the CLI runs in the root namespace). Every wait is bounded
// in count and time; the lab stops every process it started by pid.

/// A `sweeperd` inside one lab host. Separate processes per host: libdbus
/// reads `DBUS_SYSTEM_BUS_ADDRESS` once per process, and `netns-lab.sh exec`
/// sets that host's bus.
final class LabDaemon {
    let lab: Lab
    let host: Int
    let root: String
    private(set) var pid: pid_t?

    var socketPath: String { root + "/control.sock" }
    var stateDirectory: String { root + "/state" }
    var logPath: String { root + "/sweeperd.log" }
    var name: String { "h\(host)" }

    static var sweeper: String { TestDaemons.sweeper }

    init(lab: Lab, host: Int) throws {
        self.lab = lab
        self.host = host
        root = lab.directory + "/d\(host)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try TestDaemons.checkBinaries()
    }

    /// No stray systemd, XDG, socket or bus settings from the test's environment.
    var environment: [String: String] { TestDaemons.environment(root: root, user: name) }

    /// Starts the daemon in its host and waits (at most 30 s) until it answers `status`.
    func start(mdns: Bool = true) throws {
        let arguments =
            [
                "--state-dir", stateDirectory, "--socket", socketPath, "--listen", "0.0.0.0:7455", "--name", name, "--log-level", "debug",
            ] + (mdns ? [] : ["--no-mdns"])
        pid = try TestDaemons.launch(
            arguments, environment: environment, log: logPath, seconds: 30,
            spawn: { [lab, host] in try lab.spawn(host, $0, environment: $1, output: $2) },
            ready: { [socketPath] in TestDaemons.answers(socketPath) })
    }

    /// Stops the daemon by its pid (SIGTERM, or e.g. SIGKILL), waiting for it.
    func stop(signal: Int32 = SIGTERM) {
        guard let pid else { return }
        self.pid = nil
        lab.stop(pid, signal: signal)
    }

    func cli(_ arguments: [String]) throws -> Outcome {
        try runProcess([Self.sweeper, "--socket", socketPath] + arguments, environment: environment)
    }

    /// The command line of `sweeper --socket … ARGS`, for starting several at once.
    func argv(_ arguments: [String]) -> [String] { [Self.sweeper, "--socket", socketPath] + arguments }

    /// `sweeper --json ARGS`, decoded; throws when it fails.
    func json(_ arguments: [String]) throws -> [String: Any] {
        let o = try cli(["--json"] + arguments)
        guard o.status == 0 else { throw ProcessError("\(name): sweeper \(arguments) exited \(o.status): \(o.stderr)") }
        guard let object = try JSONSerialization.jsonObject(with: Data(o.stdout.utf8)) as? [String: Any] else {
            throw ProcessError("\(name): sweeper \(arguments) printed no JSON object: \(o.stdout)")
        }
        return object
    }

    func status() throws -> [String: Any] { try json(["status"]) }
    var peerID: String { get throws { try status()["peer"] as? String ?? "" } }

    func peers(all: Bool = false) throws -> [[String: Any]] {
        try json(all ? ["peers", "--all"] : ["peers"])["peers"] as? [[String: Any]] ?? []
    }

    /// The peer with id `id` as this daemon lists it.
    func peer(_ id: String, all: Bool = false) -> [String: Any]? {
        (try? peers(all: all))?.first { $0["peer"] as? String == id }
    }

    func gameIDs() -> [String] {
        ((try? json(["games"]))?["games"] as? [[String: Any]] ?? []).compactMap { $0["game"] as? String }
    }

    func show(_ game: String) -> [String: Any]? { try? json(["show", game]) }
    func digest(_ game: String) -> String? { show(game)?["digest"] as? String }
    func board(_ game: String) -> [String] { show(game)?["board"] as? [String] ?? [] }

    func log() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The daemon's last log lines and its peers, for a failure's message.
    func diagnostics() -> String {
        let tail = log().split(separator: "\n", omittingEmptySubsequences: false).suffix(40).joined(separator: "\n")
        let peers = (try? cli(["--json", "peers", "--all"]))?.stdout ?? "(no answer)"
        return "— \(name) pid \(pid.map(String.init) ?? "none") peers --all:\n\(peers)\n— \(name) log tail:\n\(tail)"
    }
}

/// The cell at (x, y) of a board's rows.
func cell(_ board: [String], _ x: Int, _ y: Int) -> Character? {
    guard y < board.count, x < board[y].count else { return nil }
    return board[y][board[y].index(board[y].startIndex, offsetBy: x)]
}

/// The hidden cells of a board's rows (a new game starts with its opening revealed).
func hiddenCells(_ board: [String]) -> [(x: Int, y: Int)] {
    board.enumerated().flatMap { y, row in row.enumerated().filter { $0.element == "#" }.map { (x: $0.offset, y: y) } }
}

/// A lab of `hosts` hosts with a daemon in each; the first `members` form one
/// circle through an invite code made on h1, the rest keep circles of their own.
///
/// By default the circle is formed with mDNS off (each joins at h1's
/// address, which it keeps), then every daemon restarts with mDNS on: h2 and
/// h3 find each other by mDNS alone, whether or not a join beat the first
/// sightings (see the known issue below).
final class Circle {
    let lab: Lab
    var daemons: [LabDaemon] = []
    var ids: [String] = []

    /// With `joinAfterSightings`, the join waits until every daemon has seen
    /// every other by mDNS (as when daemons have been running for a while).
    /// With `mdns` false, each joins at the one before it and the daemons
    /// restart with `--no-mdns`: links only by address, in a line. With
    /// `secondHouse`, hosts from that one on are another house, behind a
    /// router mDNS does not cross; `prepare` works on the lab before any
    /// daemon starts.
    init(
        hosts: Int, members: Int, joinAfterSightings: Bool = false, mdns: Bool = true, secondHouse: Int? = nil,
        prepare: (Lab) throws -> Void = { _ in }
    ) throws {
        lab = try Lab(hosts: hosts, secondHouse: secondHouse)
        do {
            try prepare(lab)
            for h in 1...hosts {
                let d = try LabDaemon(lab: lab, host: h)
                try d.start(mdns: joinAfterSightings)
                daemons.append(d)
                ids.append(try d.peerID)
            }
            if joinAfterSightings {
                let seen = eventually {
                    (1...hosts).allSatisfy { h in
                        let listed = Set((try? daemons[h - 1].peers(all: true))?.compactMap { $0["peer"] as? String } ?? [])
                        return ids.enumerated().allSatisfy { $0.offset == h - 1 || listed.contains($0.element) }
                    }
                }
                guard seen else { throw ProcessError("the daemons did not see each other by mDNS within 60 s\n\(diagnostics())") }
            }
            // One code per device (each admits one), redeemed with h1: found
            // by mDNS when the daemons see each other, else at its address.
            // Without mDNS from then on, each joins at the one before it (made
            // the code there), so the addresses each keeps make a line.
            for (i, d) in daemons.enumerated().dropFirst().prefix(members - 1) {
                let maker = mdns ? 0 : i - 1
                guard let code = try daemons[maker].json(["invite"])["code"] as? String, !code.isEmpty else {
                    throw ProcessError("h\(maker + 1) printed no invite code")
                }
                _ = try d.json(joinAfterSightings ? ["join", code] : ["join", code, "--address", "\(lab.address(maker + 1)):7455"])
            }
            if !joinAfterSightings {
                for d in daemons { d.stop() }
                for d in daemons { try d.start(mdns: mdns) }
            }
        } catch {
            lab.down()
            throw error
        }
    }

    subscript(_ host: Int) -> LabDaemon { daemons[host - 1] }

    /// Whether every one of `hosts` lists every other as connected.
    func allConnected(_ hosts: [Int]) -> Bool {
        hosts.allSatisfy { h in
            hosts.filter { $0 != h }.allSatisfy { other in self[h].peer(ids[other - 1])?["state"] as? String == "connected" }
        }
    }

    /// Waits until all of `hosts` are connected to each other; records the state if not.
    func waitConnected(_ hosts: [Int], seconds: Double = 60, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let ok = eventually(seconds) { allConnected(hosts) }
        if !ok { Issue.record("hosts \(hosts) not all connected after \(Int(seconds)) s\n\(diagnostics())", sourceLocation: sourceLocation) }
        return ok
    }

    /// Waits until `game` is on all of `hosts` with one digest; that digest, or nil.
    func waitConverged(_ game: String, _ hosts: [Int], seconds: Double = 60, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        var digest: String?
        let ok = eventually(seconds) {
            let digests = hosts.map { self[$0].digest(game) }
            digest = digests[0]
            return digest != nil && digests.allSatisfy { $0 == digest }
        }
        if !ok {
            let digests = hosts.map { "h\($0): \(self[$0].digest(game) ?? "none")" }.joined(separator: ", ")
            Issue.record("game \(game) did not converge on \(hosts) within \(Int(seconds)) s: \(digests)\n\(diagnostics())", sourceLocation: sourceLocation)
            return nil
        }
        return digest
    }

    func diagnostics() -> String { daemons.map { $0.diagnostics() }.joined(separator: "\n") }

    /// Makes a 16×16 game on `host` and returns its id.
    func newGame(on host: Int, seed: Int) throws -> String {
        let view = try self[host].json(["new", "--width", "16", "--height", "16", "--mines", "40", "--seed", "\(seed)"])
        guard let id = view["game"] as? String else { throw ProcessError("new printed no id: \(view)") }
        return id
    }

    func down() { lab.down() }
}

@Suite(.serialized, .enabled(if: labAvailable, Comment(rawValue: labUnavailableReason ?? "")))
struct PeerScenarioTests {
    @Test func threeHostsJoinWithAnInviteAndFindEachOtherByMDNSAlone() throws {
        let c = try Circle(hosts: 3, members: 3)
        defer { c.down() }
        let tags = try (1...3).map { try c[$0].status()["circleTag"] as? String ?? "" }
        #expect(Set(tags).count == 1 && !tags[0].isEmpty, "circle tags \(tags)")
        #expect(Set(c.ids).count == 3)
        guard c.waitConnected([1, 2, 3]) else { return }
        // A peer that dialled us first shows up as `incoming`; our own mDNS
        // sighting of it (with its address) may come a moment later.
        let sightedAll = eventually(30) {
            (1...3).allSatisfy { h in
                (1...3).filter { $0 != h }.allSatisfy { other in
                    let p = c[h].peer(c.ids[other - 1])
                    return (p?["via"] as? [String] ?? []).contains("mdns")
                        && (p?["addresses"] as? [String] ?? []).contains { $0.contains("198.18.0.\(other):") }
                }
            }
        }
        #expect(sightedAll, "not every daemon lists every other as seen by mDNS at its address\n\(c.diagnostics())")
        for h in 1...3 {
            let status = try c[h].status()
            #expect(status["peerCount"] as? Int == 2, "h\(h) status \(status)")
            #expect((status["mdns"] as? String)?.hasPrefix("running") == true, "h\(h) mdns \(status["mdns"] ?? "nil")")
            let peers = try c[h].peers()
            for other in (1...3) where other != h {
                let p = peers.first { $0["peer"] as? String == c.ids[other - 1] }
                #expect(p?["name"] as? String == "h\(other)")
                #expect(p?["otherCircle"] as? Bool == false)
            }
        }
        // Every daemon is seen by mDNS. h2 and h3 joined at h1's address
        // (mDNS off then); nobody gave them each other's, yet they met then
        // through the address notes h1 relayed, so each also knows the
        // other as a peer met before (`static`).
        for (a, b) in [(1, 2), (1, 3), (2, 3)] {
            let seen = (c[a].peer(c.ids[b - 1])?["via"] as? [String] ?? []) + (c[b].peer(c.ids[a - 1])?["via"] as? [String] ?? [])
            #expect(seen.contains("mdns"), "h\(a)–h\(b) via \(seen)")
            if a != 1 { #expect(seen.contains("gossip"), "h\(a)–h\(b) via \(seen)") }
        }
    }

    /// A host whose cable is cut shows as "offline since HH:MM" on the
    /// others within a few seconds, and stays so while mDNS caches still
    /// list it and the others dial it again; the cut-off host shows them
    /// offline too. Healed, everyone is linked again.
    @Test func aCutHostIsOfflineOnEveryScreenWithinSeconds() throws {
        let c = try Circle(hosts: 3, members: 3)
        defer { c.down() }
        guard c.waitConnected([1, 2, 3]) else { return }
        func state(_ h: Int, of other: Int) -> String? { c[h].peer(c.ids[other - 1])?["state"] as? String }
        let cut = Date()
        try c.lab.cut(3)
        let offline = eventually(10) { state(1, of: 3) == "offline" && state(2, of: 3) == "offline" && state(3, of: 1) == "offline" }
        #expect(offline, "h1 sees h3 \(state(1, of: 3) ?? "-"), h2 \(state(2, of: 3) ?? "-"), h3 sees h1 \(state(3, of: 1) ?? "-")\n\(c.diagnostics())")
        let took = Date().timeIntervalSince(cut)
        print("offline: a cut host shown offline on every screen after \(String(format: "%.2f", took)) s")
        #expect(took < Self.offlinePromise + Self.pollSlack, "the man page promises offline within 3 s")
        #expect(((c[1].peer(c.ids[2])?["lastHeardAt"] as? Int) ?? -1) > 0)
        #expect(try c[1].cli(["peers"]).stdout.contains("offline since"))
        // Twenty seconds on, mDNS's cache and the redials have not made it "seen" or "connecting" again.
        var shown = "offline"
        let stays = holds(20, every: 0.25) {
            shown = state(1, of: 3) ?? "-"; return shown == "offline"
        }
        #expect(stays, "h1 showed h3 as \(shown)")
        try c.lab.heal(3)
        #expect(c.waitConnected([1, 2, 3], seconds: 90))
    }

    /// What the man page promises: a host that vanishes shows offline
    /// within 3 seconds on every screen.
    static let offlinePromise = 3.0
    /// What the checks add to it: the `sweeper peers` calls that look.
    static let pollSlack = 0.5

    /// The seconds until `watchers` all show host `gone` as offline, looking
    /// every 50 ms for at most 10 s; nil when they did not.
    static func secondsUntilOffline(_ c: Circle, watchers: [Int], gone: Int, since start: Date) -> Double? {
        let done = eventually(10, every: 0.05) { watchers.allSatisfy { c[$0].peer(c.ids[gone - 1])?["state"] as? String == "offline" } }
        return done ? Date().timeIntervalSince(start) : nil
    }

    /// The other ways a host vanishes keep the same promise as a cut cable:
    /// a daemon suspended (SIGSTOP, as a laptop lid closing stops it: its
    /// kernel still answers TCP, only the keep-alives stop) and a daemon
    /// killed (SIGKILL: its kernel resets the links at once).
    @Test func aSuspendedOrKilledHostIsOfflineWithinThreeSeconds() throws {
        let c = try Circle(hosts: 3, members: 3)
        defer { c.down() }
        guard c.waitConnected([1, 2, 3]), let suspended = c[3].pid else { return }

        let stop = Date()
        #expect(kill(suspended, SIGSTOP) == 0)
        let whileStopped = Self.secondsUntilOffline(c, watchers: [1, 2], gone: 3, since: stop)
        #expect(kill(suspended, SIGCONT) == 0)
        print("offline: a suspended host shown offline after \(whileStopped.map { String(format: "%.2f", $0) } ?? "never") s")
        #expect((whileStopped ?? .infinity) < Self.offlinePromise + Self.pollSlack, "\(c.diagnostics())")
        // Woken, it links again.
        #expect(c.waitConnected([1, 2, 3], seconds: 60))

        let shot = Date()
        c[2].stop(signal: SIGKILL)
        let afterKill = Self.secondsUntilOffline(c, watchers: [1, 3], gone: 2, since: shot)
        print("offline: a killed host shown offline after \(afterKill.map { String(format: "%.2f", $0) } ?? "never") s")
        #expect((afterKill ?? .infinity) < Self.offlinePromise + Self.pollSlack, "\(c.diagnostics())")
    }

    /// Daemons that have seen each other by mDNS before joining (the usual
    /// case: they run all day) must still link once they share a circle.
    @Test func joiningAfterTheOthersWereSeenStillLinksEveryone() throws {
        let c = try Circle(hosts: 3, members: 3, joinAfterSightings: true)
        defer { c.down() }
        #expect(c.waitConnected([1, 2, 3], seconds: 30))
    }

    @Test func aGameMadeOnOneAppearsOnAllAndSimultaneousMovesConverge() throws {
        let c = try Circle(hosts: 3, members: 3)
        defer { c.down() }
        guard c.waitConnected([1, 2, 3]) else { return }
        let game = try c.newGame(on: 1, seed: 11)
        #expect(eventually { (2...3).allSatisfy { c[$0].gameIDs().contains(game) } }, "game \(game) did not reach h2 and h3\n\(c.diagnostics())")

        // Players on different hosts move at the same moment: distinct cells,
        // and one cell flagged on h2 while h3 clears it.
        let hidden = hiddenCells(c[1].board(game))
        guard hidden.count >= 5 else {
            Issue.record("only \(hidden.count) hidden cells")
            return
        }
        let (a, b, d, e, contested) = (hidden[0], hidden[hidden.count - 1], hidden[1], hidden[hidden.count - 2], hidden[hidden.count / 2])
        func move(_ h: Int, _ cell: (x: Int, y: Int), mark: String = "flag") throws -> StartedProcess {
            try StartedProcess(c[h].argv(["flag", game, "\(cell.x)", "\(cell.y)", "--mark", mark]), environment: c[h].environment)
        }
        let moves = try [move(2, a), move(3, b), move(2, d), move(3, e), move(2, contested), move(3, contested, mark: "none")].map { $0.wait() }
        for (i, o) in moves.enumerated() { #expect(o.status == 0, "move \(i): \(o.stderr)") }

        guard let digest = c.waitConverged(game, [1, 2, 3]) else { return }
        #expect(digest.count >= 16)
        let boards = (1...3).map { c[$0].board(game) }
        #expect(boards[0] == boards[1] && boards[1] == boards[2])
        for p in [a, b, d, e] { #expect(cell(boards[0], p.x, p.y) == "F", "(\(p.x), \(p.y)) in \(boards[0])") }
        #expect(["F", "#"].contains(cell(boards[0], contested.x, contested.y)))
    }

    /// h1 starts a game only h2 may play: h3's reveal is refused and every
    /// host ends with one digest. Then h3 forgets another game: its ops
    /// leave h3's database, and while h1 and h2 play it h3's interface
    /// receives a fraction of what it receives once h3 follows it again
    /// (measured on h3's veth; the figures are printed).
    @Test func aSpectatorIsRefusedAndAForgottenGameSendsItsHostNothing() throws {
        let c = try Circle(hosts: 3, members: 3)
        defer { c.down() }
        guard c.waitConnected([1, 2, 3]) else { return }
        let chosen = try c[1].json(["new", "--width", "16", "--height", "16", "--mines", "40", "--seed", "21", "--players", "h2"])
        let restricted = try #require(chosen["game"] as? String)
        guard c.waitConverged(restricted, [1, 2, 3]) != nil else { return }
        let target = try #require(hiddenCells(c[3].board(restricted)).first)
        let refused = try c[3].cli(["reveal", restricted, "\(target.x)", "\(target.y)"])
        #expect(refused.status == 1 && refused.stderr.contains("watches this game"), "\(refused.stderr)")
        #expect(try c[2].cli(["flag", restricted, "\(target.x)", "\(target.y)", "--mark", "flag"]).status == 0)
        guard let digest = c.waitConverged(restricted, [1, 2, 3]) else { return }
        #expect(cell(c[3].board(restricted), target.x, target.y) == "F", "h3 shows h2's flag, not a reveal of its own")
        #expect(c[3].show(restricted)?["watching"] as? Bool == true && c[2].show(restricted)?["watching"] == nil)
        #expect(c[1].digest(restricted) == digest)

        // h3 forgets a game the others play on.
        let game = try c.newGame(on: 1, seed: 22)
        guard c.waitConverged(game, [1, 2, 3]) != nil else { return }
        let gameBytes = try #require(GameID(hex: game)).bytes
        let forgot = try c[3].cli(["forget", game])
        #expect(forgot.status == 0, "\(forgot.stderr)")
        #expect(try databaseBytes(in: c[3].stateDirectory).range(of: Data(gameBytes)) == nil, "h3's database still holds bytes of a forgotten game's ops")
        let cells = hiddenCells(c[1].board(game)).prefix(6)
        /// What h3 has received: on its veth (every frame), and as TCP payload on each of its links (by local and remote address).
        func received() throws -> (veth: Int, links: [String: Int]) {
            let sockets = try runProcess(c.lab.inHost(3, ["ss", "-tinH"])).stdout
            var links: [String: Int] = [:]
            var socket: String?
            for line in sockets.split(separator: "\n") {
                if !line.hasPrefix(" ") && !line.hasPrefix("\t") {
                    socket = line.split(separator: " ", omittingEmptySubsequences: true).suffix(2).joined(separator: " ")
                }
                if let socket, let range = line.range(of: "bytes_received:") { links[socket] = Int(line[range.upperBound...].prefix { $0.isNumber }) }
            }
            return (try c.lab.receivedBytes(3), links)
        }
        /// What came since `start`: on the veth, and on the links that were up
        /// then and now. A link that came up meanwhile (two daemons that dialled
        /// each other at once, the duplicate closed) is left out: its opening
        /// exchange of summaries, profiles, records and address notes is not
        /// the game's, and what it carried of the game would show on the veth.
        func since(_ start: (veth: Int, links: [String: Int])) throws -> (veth: Int, links: Int) {
            let now = try received()
            let links = now.links.reduce(0) { sum, link in sum + (start.links[link.key].map { link.value - $0 } ?? 0) }
            return (now.veth - start.veth, links)
        }
        /// h1 and h2 each cycle the marks of the cells `rounds` times; returns what h3 received meanwhile.
        func play(rounds: Int, converging hosts: [Int]) throws -> (veth: Int, links: Int) {
            let start = try received()
            for _ in 0..<rounds {
                for p in cells {
                    for h in [1, 2] { #expect(try c[h].cli(["flag", game, "\(p.x)", "\(p.y)"]).status == 0) }
                }
            }
            _ = c.waitConverged(game, hosts)
            return try since(start)
        }
        let rounds = 24
        let moves = rounds * cells.count * 2
        let started = Date()
        let forgotten = try play(rounds: rounds, converging: [1, 2])
        let took = Date().timeIntervalSince(started)
        #expect(!c[3].gameIDs().contains(game))
        // What h3 receives anyway (pings, summaries of the other games; on
        // the veth mDNS and ARP too), for as long.
        let idleStart = try received()
        Thread.sleep(forTimeInterval: took)
        let idle = try since(idleStart)
        #expect(try c[3].cli(["follow", game]).status == 0)
        guard c.waitConverged(game, [1, 2, 3]) != nil else { return }
        let followed = try play(rounds: rounds, converging: [1, 2, 3])
        print(
            """
            While \(moves) moves were made in \(String(format: "%.1f", took)) s, h3 received on its veth / as link payload: \
            \(forgotten.veth) / \(forgotten.links) bytes with the game forgotten, \(idle.veth) / \(idle.links) idle for as long, \
            \(followed.veth) / \(followed.links) once it followed the game
            """)
        // Nothing of the game on the links: what came is what comes idle (a
        // ping or summary more or less), a small part of the game's traffic
        // (live pushes make that traffic some 30 bytes of payload a move).
        #expect(
            forgotten.links < idle.links + 600 && forgotten.links * 5 < followed.links,
            "link payload \(forgotten.links) forgotten, \(idle.links) idle, \(followed.links) followed")
        // The veth also carries mDNS and ARP, which still settle after the
        // daemons' restart (several KB either way between runs): it is
        // held to less than what the game costs when followed.
        #expect(forgotten.veth < followed.veth, "veth \(forgotten.veth) forgotten, \(idle.veth) idle, \(followed.veth) followed")
    }

    /// h1 starts a private game with h2: h3 holds its sealed ops (it would
    /// relay them) but lists nothing of it, and no byte of its board is in
    /// h3's database; added by h1, h3 reads it with the others' digest.
    @Test func aPrivateGameIsAbsentFromANonPlayerAndItsFileHoldsNoByteOfIt() throws {
        let c = try Circle(hosts: 3, members: 3)
        defer { c.down() }
        guard c.waitConnected([1, 2, 3]) else { return }
        let made = try c[1].json(["new", "--width", "16", "--height", "16", "--mines", "40", "--seed", "31", "--private", "--players", "h2"])
        let game = try #require(made["game"] as? String)
        guard c.waitConverged(game, [1, 2]) != nil else { return }
        let target = try #require(hiddenCells(c[2].board(game)).first)
        #expect(try c[2].cli(["flag", game, "\(target.x)", "\(target.y)", "--mark", "flag"]).status == 0)
        guard c.waitConverged(game, [1, 2]) != nil else { return }
        let id = try #require(GameID(hex: game))
        // h3 holds the two ops (its summary names them) and shows nothing.
        #expect(eventually(30) { ((try? c[3].peers())?.first { $0["name"] as? String == "h1" }?["sync"] as? [String: Any])?["inSync"] as? Bool == true })
        #expect(!c[3].gameIDs().contains(game) && c[3].show(game) == nil)
        c[3].stop()
        let file = try databaseBytes(in: c[3].stateDirectory)
        try c[3].start()
        #expect(file.range(of: Data(id.bytes)) != nil, "h3 does not hold the private game's ops")
        for bytes in try layoutEncodings(width: 16, height: 16, mines: 40, seed: 31) {
            #expect(file.range(of: Data(bytes)) == nil, "h3's database holds the private game's board")
        }
        #expect(try c[1].cli(["add-players", game, "h3"]).status == 0)
        guard c.waitConnected([1, 2, 3]) else { return }
        #expect(c.waitConverged(game, [1, 2, 3]) != nil)
        #expect(cell(c[3].board(game), target.x, target.y) == "F")
    }

    @Test func aHostCutOffKeepsPlayingAloneAndAllConvergeAfterItComesBack() throws {
        let c = try Circle(hosts: 3, members: 3)
        defer { c.down() }
        guard c.waitConnected([1, 2, 3]) else { return }
        let game = try c.newGame(on: 1, seed: 12)
        guard c.waitConverged(game, [1, 2, 3]) != nil else { return }

        let hidden = hiddenCells(c[1].board(game))
        guard hidden.count >= 3, let p = hidden.first, let q = hidden.last else {
            Issue.record("only \(hidden.count) hidden cells")
            return
        }
        let r = hidden[hidden.count / 2]
        let h3 = try c[3].peerID
        try c.lab.cut(3)
        // Keep-alives every second and a 3 s silence timeout: a host that
        // left the network shows as gone within about 3 s, never as in sync.
        let cut = Date()
        #expect(
            eventually(4.5) { c[1].peer(h3)?["state"] as? String != "connected" },
            "h1 still showed h3 linked \(Date().timeIntervalSince(cut)) s after the cut")
        #expect(try c[1].cli(["peers"]).stdout.split(separator: "\n").first { $0.contains("h3") }?.contains("in sync") == false)
        let alone = try c[3].cli(["flag", game, "\(p.x)", "\(p.y)"])
        #expect(alone.status == 0, "h3 could not play alone: \(alone.stderr)")
        #expect(cell(c[3].board(game), p.x, p.y) == "F")
        let there = try c[1].cli(["flag", game, "\(q.x)", "\(q.y)"])
        #expect(there.status == 0, "\(there.stderr)")
        #expect(try c[2].cli(["flag", game, "\(r.x)", "\(r.y)"]).status == 0)
        // h1 and h2 still agree with each other; h3's move could not reach them.
        #expect(c.waitConverged(game, [1, 2]) != nil)
        #expect(cell(c[1].board(game), p.x, p.y) == "#")
        #expect(cell(c[3].board(game), q.x, q.y) == "#")
        #expect(c[1].digest(game) != c[3].digest(game))

        try c.lab.heal(3)
        guard c.waitConverged(game, [1, 2, 3], seconds: 120) != nil else { return }
        for h in 1...3 {
            let board = c[h].board(game)
            #expect([p, q, r].allSatisfy { cell(board, $0.x, $0.y) == "F" }, "h\(h): \(board)")
        }
        #expect(c.waitConnected([1, 2, 3], seconds: 120))
    }

    /// Four hosts found by mDNS. h1 removes h4 while it is linked, then h3
    /// while it is cut off. Neither links again (though both still announce
    /// the old tag and are dialled), their later moves reach nobody, and h1
    /// and h2, under a new tag, play on and converge.
    @Test func aRemovedHostNeverLinksAgainWhetherLinkedOrCutOffWhenRemoved() throws {
        let c = try Circle(hosts: 4, members: 4)
        defer { c.down() }
        guard c.waitConnected([1, 2, 3, 4]) else { return }
        let game = try c.newGame(on: 1, seed: 21)
        guard c.waitConverged(game, [1, 2, 3, 4]) != nil else { return }
        let hidden = hiddenCells(c[1].board(game))
        guard hidden.count >= 5 else {
            Issue.record("only \(hidden.count) hidden cells")
            return
        }
        let (fromH4, fromH3, byH2, byH1) = (hidden[0], hidden[1], hidden[2], hidden[3])
        let oldTag = try c[1].status()["circleTag"] as? String
        func linkedTo(_ h: Int, _ other: Int) -> Bool { c[h].peer(c.ids[other - 1])?["state"] as? String == "connected" }

        // h4, linked, is removed.
        let removed = try c[1].cli(["circle", "remove", c.ids[3], "--yes"])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(eventually(15) { ![1, 2, 3].contains { linkedTo($0, 4) } }, "h4 stayed linked\n\(c.diagnostics())")
        let newTag = try c[1].status()["circleTag"] as? String
        #expect(newTag != oldTag)
        #expect(eventually(30) { [2, 3].allSatisfy { (try? c[$0].status()["circleTag"] as? String) == newTag } })
        _ = try c[4].cli(["flag", game, "\(fromH4.x)", "\(fromH4.y)"])

        // h3, cut off, is removed; it plays on alone, then comes back.
        try c.lab.cut(3)
        #expect(eventually(10) { !linkedTo(1, 3) && !linkedTo(2, 3) })
        #expect(try c[1].cli(["circle", "remove", c.ids[2], "--yes"]).status == 0)
        #expect(try c[3].cli(["flag", game, "\(fromH3.x)", "\(fromH3.y)"]).status == 0)
        try c.lab.heal(3)

        // h1 and h2 play on and agree; neither removed host's later move is there.
        #expect(try c[2].cli(["flag", game, "\(byH2.x)", "\(byH2.y)"]).status == 0)
        #expect(try c[1].cli(["flag", game, "\(byH1.x)", "\(byH1.y)"]).status == 0)
        guard c.waitConverged(game, [1, 2]) != nil else { return }
        // mDNS shows h1 and h2 to h3 under a tag it does not know, and h3
        // to them as removed: nobody dials. So h3 dials h1 by its address,
        // as a removed device that remembers it would: h1 refuses it (the
        // attempt happened), and neither links a removed host.
        // (What h3's connect says is h3's own view, which may still hold a link
        // h1 closed while h3 was cut off; h1 and h2 are checked below.)
        _ = try c[3].cli(["connect", "\(c.lab.address(1)):7455"])
        let refusedH3 = "refused a device that is not in the circle (\(c.ids[2].prefix(5)))"
        #expect(eventually(20) { c[1].log().contains(refusedH3) }, "h1 never refused h3\n\(c.diagnostics())")
        for h in [1, 2] {
            let board = c[h].board(game)
            #expect(cell(board, byH1.x, byH1.y) == "F" && cell(board, byH2.x, byH2.y) == "F", "h\(h): \(board)")
            #expect(cell(board, fromH4.x, fromH4.y) == "#" && cell(board, fromH3.x, fromH3.y) == "#", "h\(h): \(board)")
            #expect(!linkedTo(h, 3) && !linkedTo(h, 4), "h\(h) linked a removed host\n\(c.diagnostics())")
        }
        let listed = try c[2].json(["circle"])
        let gone = Set((listed["removed"] as? [[String: Any]] ?? []).compactMap { $0["peer"] as? String })
        #expect(gone == [c.ids[2], c.ids[3]])
        #expect(c[1].log().contains("refused a device that is not in the circle"))
    }

    /// h1 removes h3, then invites it again. h3 joins with the new code,
    /// keeping its key, and plays again on every device: a new game made
    /// there with a move, a move in a game older than its removal, and a
    /// race with h1 that ends with one table everywhere, before and after
    /// every daemon restarts.
    @Test func aRemovedHostInvitedAgainPlaysAgainEverywhere() throws {
        let c = try Circle(hosts: 3, members: 3)
        defer { c.down() }
        guard c.waitConnected([1, 2, 3]) else { return }
        let old = try c.newGame(on: 1, seed: 31)
        guard c.waitConverged(old, [1, 2, 3]) != nil else { return }
        // h3 moves in it before its removal: the removal keeps that move.
        let before = try #require(hiddenCells(c[3].board(old)).last)
        #expect(try c[3].cli(["flag", old, "\(before.x)", "\(before.y)"]).status == 0)
        guard c.waitConverged(old, [1, 2, 3]) != nil else { return }
        #expect(try c[1].cli(["circle", "remove", c.ids[2], "--yes"]).status == 0)
        #expect(eventually(15) { c[1].peer(c.ids[2])?["state"] as? String != "connected" })
        guard let code = try c[1].json(["invite"])["code"] as? String else {
            Issue.record("h1 printed no invite code")
            return
        }
        let joined = try c[3].cli(["join", code, "--address", "\(c.lab.address(1)):7455", "--old-games", "keep"])
        #expect(joined.status == 0, "h3 could not join again: \(joined.stderr)")
        let circle = try c[1].json(["circle"])
        let members = Set((circle["members"] as? [[String: Any]] ?? []).compactMap { $0["peer"] as? String })
        #expect(members.contains(c.ids[2]), "h3 is not a member again on h1: \(circle)")
        guard c.waitConnected([1, 2, 3], seconds: 90) else { return }

        func playsEverywhere(round: Int) throws {
            // A new game made on h3, with a move of h3's.
            let fresh = try c.newGame(on: 3, seed: 40 + round)
            let cellH3 = try #require(hiddenCells(c[3].board(fresh)).first)
            let moved = try c[3].cli(["flag", fresh, "\(cellH3.x)", "\(cellH3.y)"])
            #expect(moved.status == 0, "h3's move in its new game: \(moved.stderr)")
            guard c.waitConverged(fresh, [1, 2, 3]) != nil else { return }
            for h in [1, 2] { #expect(cell(c[h].board(fresh), cellH3.x, cellH3.y) == "F", "h\(h) lacks h3's move") }
            // A move of h3's in the game made before its removal.
            let hidden = hiddenCells(c[3].board(old))
            let inOld = try #require(hidden.dropFirst(round).first)
            for h in 1...3 { #expect(cell(c[h].board(old), before.x, before.y) == "F", "h\(h) lost h3's move from before its removal") }
            let movedOld = try c[3].cli(["flag", old, "\(inOld.x)", "\(inOld.y)"])
            #expect(movedOld.status == 0, "h3's move in the old game: \(movedOld.stderr)")
            guard c.waitConverged(old, [1, 2, 3]) != nil else { return }
            for h in [1, 2] { #expect(cell(c[h].board(old), inOld.x, inOld.y) == "F", "h\(h) lacks h3's move in the old game") }
            // A race of h1 and h3: both give up, and the race ends with one table everywhere.
            let race = try c[1].json(["new", "--preset", "beginner", "--race", "--players", "h1,h3"])
            let raceID = try #require(race["game"] as? String)
            guard c.waitConverged(raceID, [1, 2, 3]) != nil else { return }
            #expect(try c[3].cli(["resign", raceID]).status == 0)
            #expect(try c[1].cli(["resign", raceID]).status == 0)
            let over = eventually(30) {
                (1...3).allSatisfy { h in ((c[h].show(raceID)?["race"] as? [String: Any])?["over"] as? Bool) == true }
            }
            #expect(over, "the race with h3 did not end everywhere\n\(c.diagnostics())")
        }
        try playsEverywhere(round: 0)
        for d in c.daemons { d.stop() }
        for d in c.daemons { try d.start() }
        guard c.waitConnected([1, 2, 3], seconds: 90) else { return }
        try playsEverywhere(round: 1)
    }

    @Test func aDaemonOfAnotherCircleIsSeenButNeverConnectsNorSeesAGame() throws {
        let c = try Circle(hosts: 3, members: 2)
        defer { c.down() }
        guard c.waitConnected([1, 2]) else { return }
        let game = try c.newGame(on: 1, seed: 13)
        guard c.waitConverged(game, [1, 2]) != nil else { return }
        let stranger = c.ids[2]

        // Each side sees the other on the network, marked as another circle.
        let seen = eventually {
            (1...2).allSatisfy { c[$0].peer(stranger, all: true)?["otherCircle"] as? Bool == true }
                && (1...2).allSatisfy { c[3].peer(c.ids[$0 - 1], all: true)?["otherCircle"] as? Bool == true }
        }
        #expect(seen, "other circle not listed by peers --all\n\(c.diagnostics())")
        // A move made while it was looking, so there was something to leak.
        if let p = hiddenCells(c[2].board(game)).first { #expect(try c[2].cli(["flag", game, "\(p.x)", "\(p.y)"]).status == 0) }
        #expect(c.waitConverged(game, [1, 2]) != nil)

        for h in 1...2 {
            #expect(c[h].peer(stranger, all: true)?["state"] as? String != "connected")
            #expect(c[h].peer(stranger) == nil || c[h].peer(stranger)?["state"] as? String != "connected")
            #expect(try c[h].status()["peerCount"] as? Int == 1)
        }
        for p in try c[3].peers(all: true) {
            #expect(p["state"] as? String != "connected", "h3 connected to \(p)")
            #expect(p["otherCircle"] as? Bool == true, "h3 lists \(p)")
        }
        #expect(try c[3].status()["peerCount"] as? Int == 0)
        #expect(c[3].gameIDs().isEmpty)
        #expect(c[3].show(game) == nil)
    }

    /// Without mDNS, h1 and h3 are each given only h2's address, and h3,
    /// in another house, cannot reach h1 (the router drops what it routes
    /// to h1): what h1 does reaches h3 through h2, and back, and each
    /// counts the other as seen from what h2 relays of it.
    @Test func staticLinksInALineRelayBothWays() throws {
        let c = try Circle(hosts: 3, members: 3, mdns: false, secondHouse: 3) { try $0.run(["block", "1"]) }
        defer { c.down() }
        #expect(try c[1].status()["mdns"] as? String == "disabled")
        for h in [1, 3] {
            let linked = try c[h].cli(["connect", "198.18.0.2:7455", "--wait", "20"])
            #expect(linked.status == 0, "h\(h) did not link to h2: \(linked.stdout)\(linked.stderr)")
        }
        guard c.waitConnected([1, 2]), c.waitConnected([2, 3]) else { return }
        let via12 = c[1].peer(c.ids[1])?["via"] as? [String] ?? []
        let via21 = c[2].peer(c.ids[0])?["via"] as? [String] ?? []
        // h1 dials h2 (connect) and h2 dials h1 (joined at its address): one link stays.
        #expect((via12 + via21).contains("static") && (via12 + via21).contains("incoming"), "h1→h2 via \(via12), h2→h1 via \(via21)")

        let game = try c.newGame(on: 1, seed: 16)
        guard c.waitConverged(game, [1, 2, 3]) != nil else { return }
        let hidden = hiddenCells(c[3].board(game))
        guard hidden.count >= 2, let p = hidden.first, let q = hidden.last else {
            Issue.record("only \(hidden.count) hidden cells")
            return
        }
        #expect(try c[3].cli(["flag", game, "\(p.x)", "\(p.y)"]).status == 0)
        #expect(try c[1].cli(["flag", game, "\(q.x)", "\(q.y)"]).status == 0)
        guard c.waitConverged(game, [1, 2, 3]) != nil else { return }
        #expect(cell(c[1].board(game), p.x, p.y) == "F" && cell(c[3].board(game), q.x, q.y) == "F")

        // h3 never linked to h1, and it tried: h1's address note, relayed by
        // h2, has h3 dial h1 in vain. Yet h3 counts h1 as seen, from the
        // note h2 relayed, and so does h1 of h3.
        #expect(c[3].peer(c.ids[0])?["state"] as? String != "connected")
        let via31 = c[3].peer(c.ids[0])?["via"] as? [String] ?? []
        #expect(via31.contains("gossip"), "h3 lists h1 as \(String(describing: c[3].peer(c.ids[0])))")
        for (h, other) in [(3, 0), (1, 2)] {
            let members = try c[h].json(["circle"])["members"] as? [[String: Any]] ?? []
            let member = members.first { $0["peer"] as? String == c.ids[other] }
            #expect(member?["linked"] as? Bool == false, "h\(h) lists \(String(describing: member))")
            let ago = (member?["lastSeenAt"] as? Int).map { Date().timeIntervalSince1970 - Double($0) / 1000 }
            #expect(ago.map { $0 < 300 } == true, "h\(h) last saw h\(other + 1): \(String(describing: ago))")
        }

        // Names travel as profiles: h3 never links to h1 (nor h1 to h3), yet
        // each names the other in the game's players and in `games`, and a
        // new name chosen on h1 reaches h3 through h2.
        func playerNames(_ h: Int) -> Set<String> {
            Set(((c[h].show(game)?["players"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String })
        }
        #expect(playerNames(3) == [c[1].name, c[3].name], "h3 names \(playerNames(3))")
        #expect(playerNames(1) == [c[1].name, c[3].name], "h1 names \(playerNames(1))")
        #expect(try c[1].cli(["profile", "--name", "Mum"]).status == 0)
        let renamed = eventually(20) {
            let games = try c[3].cli(["games"]).stdout
            return playerNames(3).contains("Mum") && games.contains("Mum")
        }
        #expect(renamed, "h3 names \(playerNames(3))")
    }

    /// Two houses that mDNS does not join: h3, in the second, joins at
    /// h1's address and then links to h2 too, which nobody gave it: h2's
    /// signed address note came through h1.
    @Test func aDeviceInAnotherHouseLinksToEveryMemberItCanReach() throws {
        let c = try Circle(hosts: 3, members: 3, secondHouse: 3)
        defer { c.down() }
        guard c.waitConnected([1, 2, 3], seconds: 90) else { return }
        // mDNS did not cross: h3's avahi-daemon sees no daemon of the first house.
        let browsed = try runProcess(c.lab.inHost(3, ["timeout", "5", "avahi-browse", "-rpt", "_sweeper._tcp"])).stdout
        #expect(!browsed.contains("198.18.0."), "h3 browsed \(browsed)")
        let via32 = c[3].peer(c.ids[1])?["via"] as? [String] ?? []
        let via23 = c[2].peer(c.ids[2])?["via"] as? [String] ?? []
        #expect(via32.contains("gossip") || via23.contains("gossip"), "h3→h2 via \(via32), h2→h3 via \(via23)")
        // And they play: a game made in the second house reaches the first.
        let game = try c.newGame(on: 3, seed: 18)
        #expect(c.waitConverged(game, [1, 2, 3]) != nil)
    }

    /// avahi-daemon stops under a running daemon: it says so, keeps serving
    /// and keeps its link; when avahi-daemon comes back, mDNS runs again.
    @Test func anAvahiOutageIsReportedAndOutlived() throws {
        let c = try Circle(hosts: 2, members: 2)
        defer { c.down() }
        guard c.waitConnected([1, 2]) else { return }
        try c.lab.run(["avahi-stop", "2"])
        let unavailable = eventually(30) { (try c[2].status()["mdns"] as? String)?.hasPrefix("unavailable") == true }
        #expect(unavailable, "h2 mdns: \(String(describing: (try? c[2].status())?["mdns"]))")
        // Still serving, still linked: a game made on h2 reaches h1.
        let game = try c.newGame(on: 2, seed: 17)
        #expect(c.waitConverged(game, [1, 2]) != nil)
        try c.lab.run(["avahi-start", "2"])
        let running = eventually(60) { (try c[2].status()["mdns"] as? String)?.hasPrefix("running") == true }
        #expect(running, "h2 mdns: \(String(describing: (try? c[2].status())?["mdns"]))\n\(c.diagnostics())")
        // h2 published itself again: h1's host finds it by mDNS.
        let browsed = eventually(30) {
            let o = try runProcess(c.lab.inHost(1, ["timeout", "5", "avahi-browse", "-rpt", "_sweeper._tcp"]))
            return o.stdout.split(separator: "\n").contains { $0.hasPrefix("=") && $0.contains("198.18.0.2;7455") && $0.contains("id=\(c.ids[1])") }
        }
        #expect(browsed)
        #expect(try c[2].status()["peerCount"] as? Int == 1)
    }

    @Test func aDaemonKilledAndRestartedCatchesUp() throws {
        let c = try Circle(hosts: 3, members: 3)
        defer { c.down() }
        guard c.waitConnected([1, 2, 3]) else { return }
        let first = try c.newGame(on: 1, seed: 14)
        guard c.waitConverged(first, [1, 2, 3]) != nil else { return }

        c[3].stop(signal: SIGKILL)
        let hidden = hiddenCells(c[1].board(first))
        guard hidden.count >= 2, let p = hidden.first, let q = hidden.last else {
            Issue.record("only \(hidden.count) hidden cells")
            return
        }
        #expect(try c[1].cli(["flag", first, "\(p.x)", "\(p.y)"]).status == 0)
        #expect(try c[2].cli(["flag", first, "\(q.x)", "\(q.y)"]).status == 0)
        let second = try c.newGame(on: 2, seed: 15)
        guard c.waitConverged(second, [1, 2]) != nil, let s = hiddenCells(c[1].board(second)).first else { return }
        #expect(try c[1].cli(["flag", second, "\(s.x)", "\(s.y)"]).status == 0)
        guard c.waitConverged(second, [1, 2]) != nil else { return }

        try c[3].start()
        #expect(try c[3].peerID == c.ids[2], "the identity survives the restart")
        #expect(c.waitConverged(first, [1, 2, 3]) != nil)
        #expect(c.waitConverged(second, [1, 2, 3]) != nil)
        #expect(cell(c[3].board(first), p.x, p.y) == "F" && cell(c[3].board(first), q.x, q.y) == "F")
        #expect(cell(c[3].board(second), s.x, s.y) == "F")
        #expect(c.waitConnected([1, 2, 3]))
    }
}
