import Foundation
import SweeperCrypto
import SweeperGame
import SweeperTestSupport
import Testing

@testable import SweeperSync

/// End-to-end tests: the real `sweeperd` on a temporary state directory and
/// socket, driven by the real `sweeper` and by raw socket lines.
@Suite(.serialized) struct DaemonIntegrationTests {
    /// Plays a no-guess game to a win with `hint` and `reveal`; returns the game id.
    private func playToWin(_ h: DaemonHarness, seed: Int) throws -> String {
        let made = try h.cli(["new", "--no-guess", "--seed", "\(seed)"])
        #expect(made.status == 0, "\(made.stderr)")
        let game = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(game.count == 32)
        for _ in 0..<81 {
            let view = try h.json(["show", game])
            if view["status"] as? String != "playing" { break }
            let hint = try h.json(["hint", String(game.prefix(6))])
            guard let x = hint["x"] as? Int, let y = hint["y"] as? Int else {
                Issue.record("no hint on a no-guess board: \(hint)")
                break
            }
            let move = try h.cli(["reveal", game, "\(x)", "\(y)"])
            #expect(move.status == 0, "\(move.stderr)")
        }
        return game
    }

    @Test func playsToAWinAndALossThenFindsEverythingAfterARestart() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start()
        #expect(h.lastNotifications.joined().contains("READY=1"))

        // The socket is private: directory 0700, socket 0600.
        let dirMode = try FileManager.default.attributesOfItem(atPath: h.root + "/run")[.posixPermissions] as? Int
        let sockMode = try FileManager.default.attributesOfItem(atPath: h.socketPath)[.posixPermissions] as? Int
        #expect(dirMode.map { $0 & 0o777 } == 0o700)
        #expect(sockMode.map { $0 & 0o777 } == 0o600)

        let status = try h.json(["status"])
        #expect(status["name"] as? String == "tester")
        let me = try #require(status["peer"] as? String)

        // A win.
        let won = try playToWin(h, seed: 11)
        let wonView = try h.json(["show", won])
        #expect(wonView["status"] as? String == "won")
        let board = try #require(wonView["board"] as? [String])
        #expect(board.count == 9 && board.allSatisfy { $0.count == 9 })
        // Won: every safe cell is open; the covered ones are the mines, now shown.
        #expect(!board.joined().contains("#"))
        #expect(board.joined().filter { $0 == "*" || $0 == "F" }.count == 10)
        #expect(wonView["trippedByPeer"] == nil)
        let players = try #require(wonView["players"] as? [[String: Any]])
        #expect(players.first?["peer"] as? String == me)
        #expect((players.first?["score"] as? Int ?? 0) > 0)
        for key in ["game", "width", "height", "mines", "status", "digest", "revealed", "flags", "board", "players", "elapsedMillis"] {
            #expect(wonView[key] != nil, "show --json lacks \(key)")
        }
        // Won with hints on a chosen seed: practice, not a record; the ending says why.
        func practice() throws -> [String] { (try h.json(["scores"])["practice"] as? [[String: Any]] ?? []).compactMap { $0["game"] as? String } }
        #expect(try practice() == [won])
        #expect((try h.json(["scores"])["scores"] as? [[String: Any]])?.isEmpty == true)
        let ending = try #require(wonView["ending"] as? [String: Any])
        #expect(ending["ranked"] as? Bool == false && (ending["notRanked"] as? String)?.contains("practice") == true, "\(ending)")
        #expect((ending["threeBV"] as? Int ?? 0) > 0 && ending["solvedThreeBV"] as? Int == ending["threeBV"] as? Int)
        #expect(try h.cli(["show", won]).stdout.contains("3BV"))
        // A finished game refuses moves with exit 1.
        let late = try h.cli(["reveal", won, "0", "0"])
        #expect(late.status == 1 && late.stderr.contains("over"))

        // A loss: the peek shows the mines (and marks the game assisted).
        let lostGame = try h.cli(["new", "--seed", "5"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let peek = try h.json(["show", lostGame, "--peek"])
        #expect(peek["assisted"] as? Bool == true)
        let layout = try #require(peek["mineLayout"] as? [String])
        let (mx, my) = try #require(
            layout.enumerated().lazy.compactMap { y, row in row.firstIndex(of: "*").map { (row.distance(from: row.startIndex, to: $0), y) } }.first)
        let boom = try h.cli(["reveal", lostGame, "\(mx)", "\(my)"])
        #expect(boom.status == 0)
        let lostView = try h.json(["show", lostGame])
        #expect(lostView["status"] as? String == "lost")
        #expect(lostView["trippedByPeer"] as? String == me)
        let lostBoard = try #require(lostView["board"] as? [String])
        #expect(Array(lostBoard[my])[mx] == "X")
        // The lost game is not a win: still one practice win, no record.
        #expect(try practice() == [won])

        // Games, newest first.
        let games = try #require(try h.json(["games"])["games"] as? [[String: Any]])
        #expect(games.map { $0["game"] as? String } == [lostGame, won])
        let text = try h.cli(["games"]).stdout
        #expect(text.contains(" won ") && text.contains(" lost ") && text.contains("9×9 (10)"), "\(text)")

        // Restart: a graceful stop removes the socket; everything comes back.
        let digests = try [won, lostGame].map { try h.json(["show", $0])["digest"] as? String }
        #expect(h.stop(signal: SIGTERM) == 0)
        #expect(!FileManager.default.fileExists(atPath: h.socketPath))
        let noDaemon = try h.cli(["status"])
        #expect(noDaemon.status == 3 && noDaemon.stderr.contains("sweeperd"))
        // A script that asked for JSON gets JSON then too.
        let noDaemonJSON = try h.cli(["--json", "status"])
        let error = (try? JSONSerialization.jsonObject(with: Data(noDaemonJSON.stdout.utf8)) as? [String: Any])?["error"] as? [String: Any]
        #expect(
            noDaemonJSON.status == 3 && error?["code"] as? String == "no-daemon" && (error?["message"] as? String ?? "").contains("sweeperd"),
            "\(noDaemonJSON.stdout)")
        try h.start()
        #expect(try [won, lostGame].map { try h.json(["show", $0])["digest"] as? String } == digests)
        #expect(try h.json(["status"])["peer"] as? String == me)
        #expect(try practice() == [won])
    }

    @Test func aMoveAnsweredBeforeSIGKILLSurvives() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start()
        let game = try h.cli(["new", "--width", "30", "--height", "16", "--mines", "99", "--seed", "3"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let before = try #require(try h.json(["show", game])["board"] as? [String])
        // A covered cell to open (the opening is already revealed).
        let (x, y) = try #require(
            before.enumerated().lazy.compactMap { y, row in row.firstIndex(of: "#").map { (row.distance(from: row.startIndex, to: $0), y) } }.first)
        // Flag it over the raw socket, then kill the daemon the moment the answer arrives.
        let raw = try ControlLineClient(path: h.socketPath)
        raw.send(#"{"id":"m1","command":"flag","game":"\#(game)","x":\#(x),"y":\#(y)}"#)
        let answer = try #require(raw.readJSON())
        #expect(answer["ok"] as? Bool == true, "\(answer)")
        h.stop(signal: SIGKILL)
        try h.start()
        let after = try #require(try h.json(["show", game])["board"] as? [String])
        #expect(Array(after[y])[x] == "F")
    }

    /// Played time through the real daemon and its signed shares: a
    /// viewer opens a game, the daemon dies with SIGKILL while it is open,
    /// and after the restart the open period ends at its last signed share
    /// (taken at most 2 s before) and stays closed. What counts and what
    /// does not, over minutes, is `ClockedTests` and `PlayTimeTests`, on a
    /// clock the test moves.
    @Test func aKilledDaemonsOpenPeriodEndsAtItsLastShare() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start()
        let game = try h.cli(["new", "--seed", "5"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        func played() throws -> Int { try #require(try h.json(["show", game])["elapsedMillis"] as? Int) / 1000 }
        let viewer = try ControlLineClient(path: h.socketPath)
        viewer.send(#"{"id":1,"command":"subscribe"}"#)
        #expect(viewer.readJSON()?["ok"] as? Bool == true)
        viewer.send(#"{"id":0,"command":"cursor","game":"\#(game)","x":2,"y":3}"#)
        // A share is signed every 2 s while the game counts: once 3 s show, the first is kept.
        #expect(eventually(10) { (try? played()).map { $0 >= 3 } ?? false }, "the open game counted no time")
        h.stop(signal: SIGKILL)
        try h.start()
        let afterKill = try played()
        #expect((2...5).contains(afterKill), "a restart shows \(afterKill) s of a game open about 3 s")
        #expect(holds(1) { try played() == afterKill }, "the killed daemon's period did not stay closed")
    }

    /// Every text command piped into `head -1` ends quietly: no trap, no
    /// backtrace, status 0 (its output fitted the pipe) or 141 (the reader
    /// went away, as `cat` says it). `show` of a 500×500 board is longer
    /// than a pipe holds, so it does meet the closed pipe.
    @Test func aClosedPipeEndsEveryTextCommandQuietly() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start()
        let game = try #require(try h.json(["new", "--width", "500", "--height", "500", "--mines", "25000", "--seed", "4"])["game"] as? String)
        let commands: [[String]] = [
            ["show", game], ["show", game, "--json"], ["status"], ["games"], ["games", "--archived"], ["peers", "--all"], ["scores"],
            ["circle"], ["invite", "--list"], ["profile"], ["hint", game], ["sync"],
            ["board", "generate", "--width", "500", "--height", "500", "--mines", "50000", "--count", "2"],
        ]
        for command in commands {
            let quoted = ([DaemonHarness.sweeper, "--socket", h.socketPath] + command).map { "'\($0)'" }.joined(separator: " ")
            let o = try runProcess(["/bin/bash", "-c", "\(quoted) 2>\(h.root)/stderr | head -1 >/dev/null; echo ${PIPESTATUS[0]}"])
            let status = o.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let stderr = (try? String(contentsOfFile: h.root + "/stderr", encoding: .utf8)) ?? ""
            #expect(["0", "141"].contains(status) && !stderr.contains("Fatal error"), "\(command): status \(status), \(stderr)")
            if command == ["show", game] { #expect(status == "141", "show never met the closed pipe") }
        }
    }

    /// A bad value exits 2 wherever it is found (an empty or overlong
    /// name, an address without a port or with a port past 65535, a cell
    /// off the board either way, an empty game id, which acts on no game);
    /// `--color` is `--colour`; an invite code revokes its invitation; an
    /// IPv6 peer is written in brackets and why it is not reached in words.
    @Test func badValuesExitTwoAndTheCLITakesWhatPeopleType() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start()
        let game = try h.cli(["new", "--seed", "3"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let digest = try h.json(["show", game])["digest"] as? String
        for arguments in [
            ["profile", "--name", ""], ["profile", "--name", String(repeating: "x", count: 80)], ["connect", "198.18.0.2"],
            ["connect", "127.0.0.1:70000"], ["reveal", game, "100", "0"], ["reveal", game, "0", "100"], ["reveal", game, "-1", "0"],
            ["reveal", "", "0", "0"],
        ] {
            let o = try h.cli(arguments)
            #expect(o.status == 2, "\(arguments): status \(o.status), \(o.stderr)")
        }
        #expect(try h.json(["show", game])["digest"] as? String == digest, "a refused call changed the game")
        #expect(try h.cli(["profile", "--color", "pink"]).status == 0)
        #expect(try h.json(["profile"])["colourName"] as? String == "pink")
        let code = try #require(try h.json(["invite"])["code"] as? String)
        let revoked = try h.cli(["invite", "--revoke", code])
        #expect(revoked.status == 0, "\(revoked.stderr)")
        let states = (try h.json(["invite", "--list"])["invitations"] as? [[String: Any]] ?? []).compactMap { $0["state"] as? String }
        #expect(states == ["revoked"])
        // Taken, dialled, and not linked: connect says so and exits 1.
        let linkLocal = try h.cli(["connect", "[fe80::1]:7455"])
        #expect(linkLocal.status == 1 && linkLocal.stderr.contains("Not linked to [fe80::1]:7455"), "\(linkLocal.stderr)")
        #expect(
            eventually(15) {
                ((try? h.json(["peers", "--all"]))?["unreached"] as? [[String: Any]] ?? []).contains {
                    $0["address"] as? String == "[fe80::1]:7455" && ($0["reason"] as? String ?? "").contains("needs its interface")
                }
            }, "\((try? h.cli(["peers", "--all"]).stdout) ?? "")")
    }

    @Test func garbageAndOversizedLinesGetErrorAnswersAndServingGoesOn() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start()
        let raw = try ControlLineClient(path: h.socketPath)
        raw.send("this is not json")
        let malformed = try #require(raw.readJSON())
        #expect(malformed["ok"] as? Bool == false)
        #expect((malformed["error"] as? [String: Any])?["code"] as? String == "malformed-request")
        #expect(malformed["id"] is NSNull)

        raw.send(#"{"id":7,"command":"launch-missiles"}"#)
        let unknown = try #require(raw.readJSON())
        #expect(unknown["id"] as? Int == 7)
        #expect((unknown["error"] as? [String: Any])?["code"] as? String == "unknown-command")

        raw.send(#"{"id":8,"command":"reveal","x":"one"}"#)
        let badArgs = try #require(raw.readJSON())
        #expect((badArgs["error"] as? [String: Any])?["code"] as? String == "bad-arguments")

        raw.send([UInt8](repeating: UInt8(ascii: "a"), count: 300_000) + [0x0A])
        let long = try #require(raw.readJSON())
        #expect((long["error"] as? [String: Any])?["code"] as? String == "line-too-long")

        raw.send(Array("\u{0}\u{1}\u{ff}garbage\n".utf8))
        let binary = try #require(raw.readJSON())
        #expect(binary["ok"] as? Bool == false)

        raw.send(#"{"id":"s","command":"status"}"#)
        let status = try #require(raw.readJSON())
        #expect(status["id"] as? String == "s")
        #expect(status["ok"] as? Bool == true)
        // And other connections are served too.
        #expect(try h.cli(["status"]).status == 0)
    }

    @Test func subscribersSeeMovesAndNewGames() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start()
        let raw = try ControlLineClient(path: h.socketPath)
        raw.send(#"{"id":1,"command":"subscribe"}"#)
        #expect(try #require(raw.readJSON())["ok"] as? Bool == true)
        let game = try h.cli(["new", "--seed", "9"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let added = try #require(raw.readJSON())
        #expect(added["event"] as? String == "game-added")
        #expect(added["game"] as? String == game)
        let board = try #require(try h.json(["show", game])["board"] as? [String])
        let (x, y) = try #require(
            board.enumerated().lazy.compactMap { y, row in row.firstIndex(of: "#").map { (row.distance(from: row.startIndex, to: $0), y) } }.first)
        let flagged = try h.cli(["flag", game, "\(x)", "\(y)", "--mark", "flag"])
        #expect(flagged.status == 0)
        let cells = try #require(raw.readJSON())
        #expect(cells["event"] as? String == "cells")
        let changed = try #require(cells["cells"] as? [[String: Any]])
        #expect(changed.first?["value"] as? String == "F")
        #expect(changed.first?["x"] as? Int == x && changed.first?["y"] as? Int == y)
    }

    @Test func profilesGiveEveryNameAndColourPastARelay() throws {
        // Three daemons in a line, no mDNS, on loopback alone: ann – bob – cat. Cat never links to ann.
        let (ann, bob, cat) = try threeDaemons(loopbackOnly: true)
        defer { ann.cleanup(); bob.cleanup(); cat.cleanup() }
        // Each is admitted by bob, its only link (an admitted device dials its admitter).
        #expect(try ann.join(bob).status == 0)
        #expect(try cat.join(bob).status == 0)
        // Ann chooses a name and a colour; a bad colour is refused with the choices.
        let bad = try ann.cli(["profile", "--colour", "mauve"])
        #expect(bad.status == 2 && bad.stderr.contains("light-blue"))
        let set = try ann.json(["profile", "--name", "Mum", "--colour", "pink"])
        #expect(set["name"] as? String == "Mum" && set["colourName"] as? String == "pink")
        let game = try #require(try ann.json(["new", "--preset", "beginner", "--seed", "3"])["game"] as? String)
        // On cat's daemon, which only bob links to, the game's player is Mum, in pink (colour 8).
        let shown = eventually(20) { () -> Bool in
            let players = (try? cat.json(["show", game]))?["players"] as? [[String: Any]] ?? []
            return players.contains { $0["name"] as? String == "Mum" && $0["colour"] as? Int == 8 }
        }
        #expect(shown, "cat shows: \(String(describing: try? cat.json(["show", game])["players"]))")
        #expect(try cat.cli(["games"]).stdout.contains("Mum"))
        #expect((try cat.json(["peers"])["peers"] as? [[String: Any]] ?? []).allSatisfy { $0["name"] as? String != "Mum" })
        // A later change wins everywhere; after a restart the profile is still ann's choice.
        _ = try ann.json(["profile", "--name", "Mother"])
        #expect(eventually(20) { (try? cat.cli(["games"]).stdout.contains("Mother")) ?? false })
        // Bob, linked to ann, lists her by her profile's name too.
        #expect(((try bob.json(["peers"])["peers"] as? [[String: Any]]) ?? []).contains { $0["name"] as? String == "Mother" })
        _ = ann.stop()
        try ann.start(name: "ann")
        #expect(try ann.json(["status"])["name"] as? String == "Mother")
        #expect(try ann.json(["profile"])["colourName"] as? String == "pink")
    }

    /// `join` without an address waits for the member that made the code
    /// to appear (here a peer added half a second later; on a LAN, mDNS
    /// resolving it), instead of failing at once with no daemon tried.
    @Test func joinWaitsForTheMemberToAppear() throws {
        let ann = try DaemonHarness(), bob = try DaemonHarness()
        defer { ann.cleanup(); bob.cleanup() }
        try ann.start(name: "ann")
        try bob.start(name: "bob")
        let code = try #require(try bob.json(["invite"])["code"] as? String)
        let quick = try ann.cli(["join", code, "--timeout", "0"])
        #expect(quick.status == 1 && quick.stderr.contains("no member of the invitation's circle answered"), "\(quick.stderr)")
        let started = Date()
        let join = try StartedProcess([DaemonHarness.sweeper, "--socket", ann.socketPath, "join", code, "--timeout", "20"], environment: ann.environment())
        usleep(500_000)
        // Bob is of another circle until the join: dialled, not linked, and found by the join.
        let dialled = try ann.cli(["connect", try bob.peerAddress(), "--wait", "0"])
        #expect(dialled.stderr.contains("Not linked"), "\(dialled.stdout)\(dialled.stderr)")
        let joined = join.wait(seconds: 30)
        #expect(joined.status == 0, "\(joined.stdout)\(joined.stderr)")
        #expect(Date().timeIntervalSince(started) >= 0.5, "the join did not wait for the member")
        let bad = try ann.cli(["join", code, "--timeout", "700"])
        #expect(bad.status == 2 && bad.stderr.contains("0 to 600"), "\(bad.stderr)")
    }

    /// Joining by address (no mDNS) links the new member to the one that
    /// admitted it, with no `connect`, and the games come.
    @Test func joiningByAddressLinksToTheMember() throws {
        let ann = try DaemonHarness(), bob = try DaemonHarness()
        defer { ann.cleanup(); bob.cleanup() }
        try ann.start(name: "ann")
        try bob.start(name: "bob")
        let game = try #require(try bob.json(["new", "--preset", "beginner", "--seed", "4"])["game"] as? String)
        let code = try #require(try bob.json(["invite"])["code"] as? String)
        #expect(try ann.cli(["join", code, "--address", try bob.peerAddress()]).status == 0)
        let bobID = try #require(try bob.json(["status"])["peer"] as? String)
        #expect(
            eventually(20) {
                ((try? ann.json(["peers"]))?["peers"] as? [[String: Any]] ?? []).contains {
                    $0["peer"] as? String == bobID && $0["state"] as? String == "connected"
                }
            }, "ann never linked to bob: \((try? ann.cli(["peers"]))?.stdout ?? "")")
        #expect(eventually(20) { (try? ann.json(["show", game])) != nil })
        // Connecting to a peer that answers says it linked, and to whom.
        let carl = try DaemonHarness()
        defer { carl.cleanup() }
        try carl.start(name: "carl")
        #expect(try carl.join(bob).status == 0)
        let linked = try carl.cli(["--json", "connect", try ann.peerAddress()])
        let said = try JSONSerialization.jsonObject(with: Data(linked.stdout.utf8)) as? [String: Any]
        #expect(
            linked.status == 0 && said?["linked"] as? Bool == true && said?["name"] as? String == "ann",
            "\(linked.stdout)\n— carl's log:\n\((try? String(contentsOfFile: carl.logPath, encoding: .utf8)) ?? "")\n— ann's log:\n\((try? String(contentsOfFile: ann.logPath, encoding: .utf8))?.suffix(3000) ?? "")"
        )
        #expect(said?["peer"] as? String == (try ann.json(["status"])["peer"] as? String))
    }

    @Test func membershipRecordsReachEveryDevicePastARelayAndOutliveARestart() throws {
        // ann – bob – cat in a line, no mDNS: cat never links to ann.
        let (ann, bob, cat) = try threeDaemons()
        defer { ann.cleanup(); bob.cleanup(); cat.cleanup() }
        // Alone, each daemon is the founder of its own circle.
        let alone = try #require(try ann.json(["circle"])["members"] as? [[String: Any]])
        #expect(alone.count == 1 && alone.first?["founder"] as? Bool == true && alone.first?["thisDevice"] as? Bool == true)
        #expect(try ann.join(bob).status == 0)
        #expect(try cat.join(bob).status == 0)
        let everyone = Set(try [ann, bob, cat].map { try #require(try $0.json(["status"])["peer"] as? String) })
        func members(_ h: DaemonHarness) -> Set<String> {
            Set(((try? h.json(["circle"]))?["members"] as? [[String: Any]] ?? []).compactMap { $0["peer"] as? String })
        }
        // Bob founded the circle and admitted ann and cat; the records pass through bob.
        #expect(eventually(20) { members(cat) == everyone && members(ann) == everyone }, "cat lists \(members(cat)), ann \(members(ann))")
        let text = try cat.cli(["circle"]).stdout
        #expect(text.contains("DEVICE") && text.contains("founder") && text.contains("this device") && text.contains("ann"), "\(text)")
        let listed = try #require(try cat.json(["circle"])["members"] as? [[String: Any]])
        let bobID = try #require(try bob.json(["status"])["peer"] as? String)
        #expect(listed.filter { $0["founder"] as? Bool == true }.compactMap { $0["peer"] as? String } == [bobID])
        #expect(listed.filter { $0["admittedByPeer"] as? String == bobID }.count == 2)
        // The records are kept: after a restart, alone, ann still lists all three.
        _ = ann.stop()
        try ann.start(name: "ann")
        #expect(members(ann) == everyone)
    }

    /// Ann removes cat while bob is away. Cat's link closes and never comes
    /// back, its later moves reach nobody, its earlier ones stay; bob comes
    /// back with the old key, links to ann all the same, takes the new key
    /// and refuses cat too.
    @Test func aRemovedDeviceNeverLinksAgainAndItsLaterMovesReachNobody() throws {
        let (ann, bob, cat) = try threeDaemons()
        defer { ann.cleanup(); bob.cleanup(); cat.cleanup() }
        #expect(try ann.join(bob).status == 0)
        #expect(try cat.join(bob).status == 0)
        #expect(try cat.cli(["connect", try ann.peerAddress()]).status == 0)
        let catID = try #require(try cat.json(["status"])["peer"] as? String)
        func linked(_ h: DaemonHarness, _ peer: String) -> Bool {
            ((try? h.json(["peers"]))?["peers"] as? [[String: Any]] ?? []).contains { $0["peer"] as? String == peer && $0["state"] as? String == "connected" }
        }
        #expect(eventually(20) { linked(ann, catID) })
        let game = try #require(try ann.json(["new", "--preset", "beginner", "--seed", "3"])["game"] as? String)
        func board(_ h: DaemonHarness) -> [String] { ((try? h.json(["show", game]))?["board"] as? [String]) ?? [] }
        func covered(_ rows: [String]) -> [(x: Int, y: Int)] {
            rows.enumerated().flatMap { y, row in row.enumerated().filter { $0.element == "#" }.map { (x: $0.offset, y: y) } }
        }
        #expect(eventually(20) { !board(cat).isEmpty })
        // Cat flags a cell before it is removed: that move stays.
        let early = try #require(covered(board(cat)).first)
        #expect(try cat.cli(["flag", game, "\(early.x)", "\(early.y)", "--mark", "flag"]).status == 0)
        #expect(eventually(20) { board(ann)[safe: early.y]?.dropFirst(early.x).first == "F" })
        let oldTag = try #require(try ann.json(["status"])["circleTag"] as? String)
        // Only the founder (bob) and admins remove: bob names ann an admin;
        // cat, a member, may not remove anyone, and without --yes off a terminal nothing is asked or done.
        let annID = try #require(try ann.json(["status"])["peer"] as? String)
        #expect(try bob.cli(["circle", "admin", annID]).status == 0)
        func role(_ h: DaemonHarness, of peer: String) -> String? {
            ((try? h.json(["circle"]))?["members"] as? [[String: Any]])?.first { $0["peer"] as? String == peer }?["role"] as? String
        }
        #expect(eventually(20) { role(ann, of: annID) == "admin" && role(cat, of: annID) == "admin" })
        let byCat = try cat.cli(["circle", "remove", annID, "--yes"])
        #expect(byCat.status == 1 && byCat.stderr.contains("only the circle's founder and admins"), "\(byCat.stdout)\(byCat.stderr)")
        let unasked = try ann.cli(["circle", "remove", "cat"])
        #expect(unasked.status == 2 && unasked.stderr.contains("--yes"), "\(unasked.stderr)")
        _ = bob.stop()
        let removed = try ann.cli(["circle", "remove", "cat", "--yes"])
        #expect(
            removed.status == 0 && removed.stdout.contains("Removed cat") && removed.stdout.contains("1 of its moves stay"),
            "\(removed.stdout)\(removed.stderr)")
        let newTag = try #require(try ann.json(["status"])["circleTag"] as? String)
        #expect(newTag != oldTag)
        #expect(eventually(10) { !linked(ann, catID) })
        // Cat, linked when it was removed, hears of it and says so; a move there is refused, saying why.
        #expect(eventually(10) { ((try? cat.json(["status"]))?["removedNote"] as? String)?.contains("removed from the circle by") == true })
        let late = try #require(covered(board(cat)).first { !($0.x == early.x && $0.y == early.y) })
        let refusedHere = try cat.cli(["flag", game, "\(late.x)", "\(late.y)", "--mark", "flag"])
        #expect(refusedHere.status == 1 && refusedHere.stderr.contains("ask an admin for a new invite"), "\(refusedHere.stderr)")
        #expect(try cat.cli(["status"]).stdout.contains("Removed: this device was removed"))
        // Bob comes back holding the old key; ann links him all the same and he takes the new one.
        try bob.start(name: "bob")
        #expect(eventually(30) { (try? bob.json(["status"]))?["circleTag"] as? String == newTag }, "bob's tag stayed \(oldTag)")
        let bobCircle = try bob.json(["circle"])
        #expect((bobCircle["removed"] as? [[String: Any]])?.first?["peer"] as? String == catID)
        // Ann and bob play on and agree; cat's early flag is there, its late one is not.
        let move = try #require(covered(board(ann)).first { !($0.x == early.x && $0.y == early.y) && !($0.x == late.x && $0.y == late.y) })
        #expect(try bob.cli(["flag", game, "\(move.x)", "\(move.y)", "--mark", "flag"]).status == 0)
        func digest(_ h: DaemonHarness) -> String? { (try? h.json(["show", game]))?["digest"] as? String }
        #expect(eventually(20) { digest(ann) != nil && digest(ann) == digest(bob) && board(ann)[safe: move.y]?.dropFirst(move.x).first == "F" })
        for h in [ann, bob] {
            #expect(board(h)[safe: early.y]?.dropFirst(early.x).first == "F")
            #expect(board(h)[safe: late.y]?.dropFirst(late.x).first == "#")
        }
        // Cat keeps dialling; it was tried and refused, and neither links it again.
        let refusal = "refused a device that is not in the circle (\(catID.prefix(5)))"
        #expect(eventually(20) { ann.log().contains(refusal) }, "ann never refused cat's dial")
        #expect(!linked(ann, catID) && !linked(bob, catID))
    }

    /// Names and colours are people's: one another member has is refused,
    /// saying so (and which colours are free).
    @Test func aNameOrColourAnotherMemberHasIsRefused() throws {
        let (ann, bob, cat) = try threeDaemonsInOneCircle()
        defer { ann.cleanup(); bob.cleanup(); cat.cleanup() }
        let taken = try cat.cli(["profile", "--name", "ANN"])
        #expect(taken.status == 1 && taken.stderr.contains("'ANN' is the name of another device"), "\(taken.stderr)")
        #expect(try cat.json(["profile"])["name"] as? String == "cat")
        // Bob's new profile (name and colour in one signed note) reaches cat.
        #expect(try bob.cli(["profile", "--name", "Bobby", "--colour", "red"]).status == 0)
        #expect(
            eventually(20) {
                ((try? cat.json(["circle"]))?["members"] as? [[String: Any]] ?? []).contains { $0["name"] as? String == "Bobby" }
            })
        let refused = try cat.cli(["profile", "--colour", "red"])
        #expect(refused.status == 1 && refused.stderr.contains("free colours: blue"), "\(refused.stderr)")
        #expect(try cat.cli(["profile", "--name", "Cat2", "--colour", "green"]).status == 0)
    }

    /// Bob, the founder, turns cat's invitations off: ann, a member, may
    /// not; cat's daemon refuses to make a code, saying who turned them
    /// off, and the code cat made before admits nobody until bob turns
    /// them on again.
    @Test func anAdminTurnsAMembersInvitationsOffAndOn() throws {
        let (ann, bob, cat) = try threeDaemonsInOneCircle()
        let dan = try DaemonHarness()
        defer { ann.cleanup(); bob.cleanup(); cat.cleanup(); dan.cleanup() }
        try dan.start(name: "dan")
        let before = try #require(try cat.json(["invite"])["code"] as? String)
        let catID = try #require(try cat.json(["status"])["peer"] as? String)
        let byMember = try ann.cli(["circle", "invites", "cat", "off"])
        #expect(byMember.status == 1 && byMember.stderr.contains("only the circle's founder and admins"), "\(byMember.stderr)")
        let off = try bob.cli(["circle", "invites", "cat", "off"])
        #expect(off.status == 0 && off.stdout.contains("may not invite"), "\(off.stdout)\(off.stderr)")
        func offBy(_ h: DaemonHarness) -> String? {
            ((try? h.json(["circle"]))?["members"] as? [[String: Any]])?.first { $0["peer"] as? String == catID }?["invitationsOffByName"] as? String
        }
        #expect(eventually(20) { offBy(cat) == "bob" && offBy(ann) == "bob" })
        #expect(try ann.cli(["circle"]).stdout.contains("cat's invitations are off (turned off by bob)"))
        let refused = try cat.cli(["invite"])
        #expect(refused.status == 1 && refused.stderr.contains("bob") && refused.stderr.contains("turned this device's invitations off"), "\(refused.stderr)")
        // The code cat made before: cat itself answers that it was revoked.
        let address = try cat.peerAddress()
        let early = try dan.cli(["join", before, "--address", address])
        #expect(early.status != 0 && early.stderr.contains("revoked"), "\(early.stdout)\(early.stderr)")
        #expect(try bob.cli(["circle", "invites", "cat", "on"]).status == 0)
        #expect(eventually(20) { offBy(cat) == nil && (try? cat.json(["circle"])) != nil })
        let joined = try dan.cli(["join", before, "--address", address])
        #expect(joined.status == 0, "\(joined.stdout)\(joined.stderr)")
    }

    /// Ann starts a game only bob may play: cat watches (its moves are
    /// refused with exit 1, its list says so), until ann adds cat. Bob
    /// archives the game and it leaves every device's list; cat lists it again.
    @Test func aGameWhosePlayersTheCreatorChoseIsWatchedByTheOthersAndArchivedEverywhere() throws {
        let (ann, bob, cat) = try threeDaemonsInOneCircle()
        defer { ann.cleanup(); bob.cleanup(); cat.cleanup() }
        let made = try ann.json(["new", "--preset", "beginner", "--seed", "5", "--players", "bob"])
        let game = try #require(made["game"] as? String)
        #expect(made["chosenPlayerNames"] as? [String] == ["ann", "bob"])
        func view(_ h: DaemonHarness) -> [String: Any] { (try? h.json(["show", game])) ?? [:] }
        func covered(_ h: DaemonHarness) -> [(x: Int, y: Int)] {
            ((view(h)["board"] as? [String]) ?? []).enumerated().flatMap { y, row in
                row.enumerated().filter { $0.element == "#" }.map { (x: $0.offset, y: y) }
            }
        }
        #expect(eventually(20) { view(cat)["watching"] as? Bool == true })
        let cell = try #require(covered(cat).first)
        let refused = try cat.cli(["reveal", game, "\(cell.x)", "\(cell.y)"])
        #expect(refused.status == 1 && refused.stderr.contains("watches this game"), "\(refused.stderr)")
        #expect(try cat.cli(["games"]).stdout.contains("(watching)"))
        #expect(try bob.cli(["flag", game, "\(cell.x)", "\(cell.y)", "--mark", "flag"]).status == 0)
        // Only ann adds players.
        let notAnn = try bob.cli(["add-players", game, "cat"])
        #expect(notAnn.status == 1 && notAnn.stderr.contains("only the game's creator"), "\(notAnn.stderr)")
        let added = try ann.cli(["add-players", game, "cat"])
        #expect(added.status == 0 && added.stdout.contains("Added 1") && added.stdout.contains("ann, bob, cat"), "\(added.stdout)\(added.stderr)")
        #expect(eventually(20) { view(cat)["watching"] == nil && (view(cat)["chosenPlayerNames"] as? [String])?.count == 3 })
        let next = try #require(covered(cat).first { !($0.x == cell.x && $0.y == cell.y) })
        #expect(try cat.cli(["flag", game, "\(next.x)", "\(next.y)", "--mark", "flag"]).status == 0)
        func digest(_ h: DaemonHarness) -> String? { view(h)["digest"] as? String }
        #expect(eventually(20) { digest(ann) != nil && Set([ann, bob, cat].map(digest)).count == 1 })

        // Archived by bob: gone from every list but the archived one.
        func listed(_ h: DaemonHarness, archived: Bool = false) -> [[String: Any]] {
            ((try? h.json(["games"] + (archived ? ["--archived"] : [])))?["games"] as? [[String: Any]] ?? []).filter { $0["game"] as? String == game }
        }
        let archived = try bob.cli(["archive", game])
        #expect(archived.status == 0 && archived.stdout.contains("Archived"), "\(archived.stdout)\(archived.stderr)")
        #expect(eventually(20) { [ann, bob, cat].allSatisfy { listed($0).isEmpty } })
        for h in [ann, cat] { #expect(listed(h, archived: true).first?["archived"] as? Bool == true) }
        #expect(try ann.cli(["archive", game]).stdout.contains("archived already"))
        #expect(try cat.cli(["archive", "--undo", game]).status == 0)
        #expect(eventually(20) { [ann, bob, cat].allSatisfy { listed($0).count == 1 } })
    }

    /// Ann keeps the games she held when she joins bob's circle: she can
    /// still read them, and bob never gets them. Cat forgets his: they
    /// leave his database.
    @Test func joiningKeepsOrForgetsTheGamesHeldBefore() throws {
        let (ann, bob, cat) = try threeDaemons()
        defer { ann.cleanup(); bob.cleanup(); cat.cleanup() }
        let annsOld = try #require(try ann.json(["new", "--seed", "1"])["game"] as? String)
        let catsOld = try #require(try cat.json(["new", "--seed", "2"])["game"] as? String)
        let bobs = try #require(try bob.json(["new", "--seed", "3"])["game"] as? String)
        let kept = try ann.join(bob)
        #expect(kept.status == 0 && kept.stdout.contains("1 game held before stays here"), "\(kept.stdout)\(kept.stderr)")
        let forgot = try cat.join(bob, ["--old-games", "forget"])
        #expect(forgot.status == 0 && forgot.stdout.contains("Forgot the 1 game held before"), "\(forgot.stdout)\(forgot.stderr)")
        func ids(_ h: DaemonHarness) -> Set<String> {
            Set(((try? h.json(["games"]))?["games"] as? [[String: Any]] ?? []).compactMap { $0["game"] as? String })
        }
        #expect(eventually(20) { ids(ann) == [annsOld, bobs] && ids(cat) == [bobs] }, "ann \(ids(ann)), cat \(ids(cat))")
        #expect(try ann.json(["show", annsOld])["game"] as? String == annsOld)
        // Ann's kept game says it is hers alone, in games, show and their text; bob's does not.
        func onlyHere(_ h: DaemonHarness, _ game: String) -> Bool? {
            ((try? h.json(["games"]))?["games"] as? [[String: Any]])?.first { $0["game"] as? String == game }?["onlyHere"] as? Bool
        }
        #expect(onlyHere(ann, annsOld) == true && onlyHere(ann, bobs) == nil)
        #expect(try ann.json(["show", annsOld])["onlyHere"] as? Bool == true)
        #expect(try ann.cli(["games"]).stdout.contains("(only on this device)"))
        #expect(try ann.cli(["show", annsOld]).stdout.contains("only on this device"))
        // Bob and cat sync with ann for a while: her old game never reaches them.
        #expect(try ann.cli(["connect", try cat.peerAddress()]).status == 0)
        let cell = try #require(firstCovered(try bob.json(["show", bobs])["board"] as? [String] ?? []))
        let flagged = try bob.cli(["flag", bobs, "\(cell.x)", "\(cell.y)", "--mark", "flag"])
        #expect(flagged.status == 0)
        #expect(eventually(20) { (try? ann.json(["show", bobs]))?["flags"] as? Int == 1 && (try? cat.json(["show", bobs]))?["flags"] as? Int == 1 })
        #expect(ids(bob) == [bobs] && ids(cat) == [bobs])
        let database = try databaseBytes(in: cat.stateDirectory)
        #expect(database.range(of: Data(try #require(GameID(hex: catsOld)).bytes)) == nil, "cat's database still holds its forgotten game")
    }

    /// Cat syncs only its own games: `games --available` lists bob's new
    /// game as `games` would (size, mines, no-guess, status, creator,
    /// start), from what bob described; following it brings it whole.
    @Test func gamesAvailableSaysWhatEachGameIs() throws {
        let (ann, bob, cat) = try threeDaemonsInOneCircle()
        defer { ann.cleanup(); bob.cleanup(); cat.cleanup() }
        #expect(try cat.cli(["sync", "mine"]).status == 0)
        let game = try #require(try bob.json(["new", "--seed", "9", "--width", "16", "--height", "12", "--mines", "30", "--no-guess"])["game"] as? String)
        func available() -> [String: Any]? {
            ((try? cat.json(["games", "--available"]))?["available"] as? [[String: Any]])?.first { $0["game"] as? String == game }
        }
        #expect(eventually(20) { available()?["width"] as? Int == 16 }, "\(String(describing: available()))")
        let entry = try #require(available())
        #expect(entry["height"] as? Int == 12 && entry["mines"] as? Int == 30 && entry["noGuess"] as? Bool == true)
        #expect(entry["creatorName"] as? String == "bob" && entry["status"] as? String == "playing")
        #expect(entry["playerNames"] as? [String] == ["bob"])
        // Who holds it, by id and by name, in one order.
        let holders = entry["heldByPeers"] as? [String] ?? [], holderNames = entry["heldByNames"] as? [String] ?? []
        let ids = ["ann": try ann.json(["status"])["peer"] as? String, "bob": try bob.json(["status"])["peer"] as? String]
        #expect(!holders.isEmpty && holders.count == holderNames.count, "held by \(holders), \(holderNames)")
        for (peer, name) in zip(holders, holderNames) { #expect(ids[name] == peer, "\(name) is \(peer)") }
        // Neither side counts bob's game, which cat does not take, as lacking: both read in sync, not catching up for ever.
        func lag(_ h: DaemonHarness, _ name: String) -> [Int]? {
            let peer = ((try? h.json(["peers"]))?["peers"] as? [[String: Any]])?.first { $0["name"] as? String == name }
            let sync = peer?["sync"] as? [String: Any]
            return sync.flatMap { s in (s["theyLack"] as? Int).flatMap { a in (s["weLack"] as? Int).map { [a, $0] } } }
        }
        #expect(
            eventually(20) { lag(cat, "bob") == [0, 0] && lag(bob, "cat") == [0, 0] },
            "cat sees bob \(String(describing: lag(cat, "bob"))), bob sees cat \(String(describing: lag(bob, "cat")))")
        let created = Double(try #require(entry["createdAt"] as? Int)) / 1000
        #expect(abs(created - Date().timeIntervalSince1970) < 60)
        let text = try cat.cli(["games", "--available"]).stdout
        let row = try #require(text.split(separator: "\n").first { $0.hasPrefix(game.prefix(8)) }, "\(text)")
        #expect(row.contains("16×12 (30) no-guess") && row.contains("playing") && row.contains("bob"), "\(row)")
        #expect((try cat.json(["games"])["games"] as? [[String: Any]] ?? []).isEmpty, "cat took the game before following it")
        #expect(try cat.cli(["follow", game]).status == 0)
        #expect(eventually(20) { (try? cat.json(["show", game]))?["width"] as? Int == 16 })
    }

    /// Ann starts a private game with bob: cat holds and relays it but
    /// cannot read it, lists nothing of it, and its database holds no byte
    /// of its board; once ann adds cat, cat reads all of it and plays.
    @Test func aPrivateGameIsReadByItsPlayersOnly() throws {
        let (ann, bob, cat) = try threeDaemonsInOneCircle()
        defer { ann.cleanup(); bob.cleanup(); cat.cleanup() }
        let size = ["--width", "16", "--height", "16", "--mines", "40"]
        let made = try ann.json(["new", "--seed", "7", "--private", "--players", "bob"] + size)
        let game = try #require(made["game"] as? String)
        #expect(made["privateGame"] as? Bool == true)
        let open = try #require(try ann.json(["new", "--seed", "8"] + size)["game"] as? String)
        func ids(_ h: DaemonHarness) -> Set<String> {
            Set(((try? h.json(["games"]))?["games"] as? [[String: Any]] ?? []).compactMap { $0["game"] as? String })
        }
        func view(_ h: DaemonHarness) -> [String: Any] { (try? h.json(["show", game])) ?? [:] }
        #expect(eventually(20) { ids(bob) == [game, open] && ids(cat) == [open] }, "bob \(ids(bob)), cat \(ids(cat))")
        let first = try #require(firstCovered(view(bob)["board"] as? [String] ?? []))
        #expect(try bob.cli(["flag", game, "\(first.x)", "\(first.y)", "--mark", "flag"]).status == 0)
        #expect(eventually(20) { view(ann)["flags"] as? Int == 1 })
        let hidden = try cat.cli(["show", game])
        #expect(hidden.status == 1 && hidden.stderr.contains("no game"), "\(hidden.stdout)\(hidden.stderr)")
        #expect(try cat.cli(["games", "--available"]).stdout.contains(String(game.prefix(8))) == false)

        // Cat holds the game's ops (it relays them), and no byte of its board.
        func layouts(seed: UInt64) throws -> [[UInt8]] { try layoutEncodings(width: 16, height: 16, mines: 40, seed: seed) }
        func database(_ h: DaemonHarness) throws -> Data {
            _ = h.stop()
            defer { try? h.start(name: h === cat ? "cat" : "bob") }
            return try databaseBytes(in: h.stateDirectory)
        }
        let catsFile = try database(cat)
        #expect(catsFile.range(of: Data(try #require(GameID(hex: game)).bytes)) != nil, "cat does not hold the private game")
        for bytes in try layouts(seed: 7) { #expect(catsFile.range(of: Data(bytes)) == nil, "cat's database holds the private board") }
        #expect(try layouts(seed: 8).contains { catsFile.range(of: Data($0)) != nil }, "the open game's board is not found either: the search proves nothing")
        let bobsFile = try database(bob)
        for bytes in try layouts(seed: 7) { #expect(bobsFile.range(of: Data(bytes)) == nil, "a player's database holds the board unsealed") }

        // Added, cat reads all of it and plays.
        #expect(try ann.cli(["add-players", game, "cat"]).status == 0)
        #expect(eventually(30) { view(cat)["flags"] as? Int == 1 && view(cat)["privateGame"] as? Bool == true }, "\(view(cat))")
        let next = try #require(firstCovered(view(cat)["board"] as? [String] ?? []))
        #expect(try cat.cli(["flag", game, "\(next.x)", "\(next.y)", "--mark", "flag"]).status == 0)
        func digest(_ h: DaemonHarness) -> String? { view(h)["digest"] as? String }
        #expect(eventually(30) { digest(ann) != nil && Set([ann, bob, cat].map(digest)).count == 1 && view(ann)["flags"] as? Int == 2 })
    }

    /// A code admits one device, at the member that made it, until it
    /// expires or is revoked; each refusal says which it was.
    @Test func anInviteCodeAdmitsOneDeviceUntilItExpiresOrIsRevoked() throws {
        let (ann, bob, cat) = try threeDaemons()
        defer { ann.cleanup(); bob.cleanup(); cat.cleanup() }
        let code = try #require(try bob.json(["invite"])["code"] as? String)
        let joined = try ann.cli(["--json", "join", code, "--address", try bob.peerAddress()])
        #expect(joined.status == 0, "\(joined.stderr)")
        let bobID = try #require(try bob.json(["status"])["peer"] as? String)
        #expect(joined.stdout.contains(bobID))
        // Without mDNS, ann links to bob by address.
        #expect(try ann.cli(["connect", try bob.peerAddress()]).status == 0)
        #expect(try ann.json(["status"])["circleTag"] as? String == (try bob.json(["status"])["circleTag"] as? String))
        // A second use, at bob or at ann (once bob's admission reached it), is refused: used.
        let twice = try cat.cli(["join", code, "--address", try bob.peerAddress()])
        #expect(twice.status == 1 && twice.stderr.contains("used already"), "\(twice.stderr)")
        #expect(eventually(20) { (try? cat.cli(["join", code, "--address", ann.peerAddress()]))?.stderr.contains("used already") == true })
        // A code past its time is refused: expired.
        let briefInvite = try bob.json(["invite", "--valid", "1s"])
        let brief = try #require(briefInvite["code"] as? String), briefID = try #require(briefInvite["invitation"] as? String)
        func briefState() throws -> String? {
            let listed = (try bob.json(["invite", "--list"])["invitations"] as? [[String: Any]]) ?? []
            return listed.first { $0["invitation"] as? String == briefID }?["state"] as? String
        }
        #expect(try briefState() == "open", "a code valid 1 s was not open at once")
        #expect(eventually(5) { try briefState() == "expired" }, "the brief code never showed expired")
        let late = try cat.cli(["join", brief, "--address", try bob.peerAddress()])
        #expect(late.status == 1 && late.stderr.contains("expired"), "\(late.stderr)")
        // A revoked code is refused: revoked.
        let revoked = try bob.json(["invite"])
        let revokedID = try #require(revoked["invitation"] as? String)
        #expect(try bob.cli(["invite", "--revoke", String(revokedID.prefix(8))]).status == 0)
        let withdrawn = try cat.cli(["join", try #require(revoked["code"] as? String), "--address", try bob.peerAddress()])
        #expect(withdrawn.status == 1 && withdrawn.stderr.contains("revoked"), "\(withdrawn.stderr)")
        // A code nobody made is refused before anyone says anything.
        let unknown = try cat.cli(["join", InviteCode.encode(InvitationSecret()), "--address", try bob.peerAddress()])
        #expect(unknown.status == 1 && unknown.stderr.contains("no member"), "\(unknown.stderr)")
        // --list says what became of each; the open one shows its code.
        let open = try #require(try bob.json(["invite", "--valid", "2h"])["code"] as? String)
        // Ann, linked to bob, learns of every invitation.
        #expect(eventually(20) { ((try? ann.json(["invite", "--list"]))?["invitations"] as? [Any])?.count == 4 })
        let list = try bob.cli(["invite", "--list"]).stdout
        #expect(list.contains("used by ann") && list.contains("expired") && list.contains("revoked") && list.contains(open), "\(list)")
        // Ann, a member, does not admit with bob's code: only its maker does.
        let elsewhere = try cat.cli(["join", open, "--address", try ann.peerAddress()])
        #expect(elsewhere.status == 1 && elsewhere.stderr.contains("made on another member's device"), "\(elsewhere.stderr)")
        let admitted = try cat.cli(["--json", "join", open, "--address", try bob.peerAddress()])
        #expect(admitted.status == 0, "\(admitted.stderr)")
        let catID = try #require(try cat.json(["status"])["peer"] as? String)
        #expect(
            eventually(20) {
                ((try? ann.json(["circle"]))?["members"] as? [[String: Any]] ?? []).contains {
                    $0["peer"] as? String == catID && $0["admittedByPeer"] as? String == bobID && $0["invitedByPeer"] as? String == bobID
                }
            })
    }

    @Test func exitCodesAndErrors() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start()
        #expect(try h.cli(["show"]).status == 1)  // no games yet
        let game = try h.cli(["new", "--preset", "beginner", "--seed", "1"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        // A cell off the board is a bad value (2), as a negative one is.
        let outside = try h.cli(["reveal", game, "9", "0"])
        #expect(outside.status == 2 && outside.stderr.contains("outside"))
        let unknown = try h.cli(["reveal", "zzzz", "0", "0"])
        #expect(unknown.status == 1 && unknown.stderr.contains("no game"))
        #expect(try h.cli(["reveal", game, "x", "0"]).status == 2)
        // Completions offer the daemon's game ids, the marks and the presets.
        let ids = try h.run(
            DaemonHarness.sweeper, ["---completion", "reveal", "--", "positional@0", "0", "0", ""],
            environment: ["SWEEPER_SOCKET": h.socketPath])
        #expect(ids.status == 0 && ids.stdout.split(separator: "\n").contains(Substring(game)), "\(ids.stdout) \(ids.stderr)")
        let zsh = try h.run(DaemonHarness.sweeper, ["--generate-completion-script", "zsh"]).stdout
        #expect(zsh.contains("'flag' 'question' 'none'") && zsh.contains("'beginner' 'intermediate' 'expert'"))
        #expect(try h.cli(["flag", game, "0", "0", "--mark", "maybe"]).status == 2)
        // A negative coordinate is out of range, not a missing argument.
        let negative = try h.cli(["reveal", game, "-1", "2"])
        #expect(negative.status == 2 && negative.stderr.contains("-1 is out of range"), "\(negative.stderr)")
        #expect(try h.cli(["new", "--width", "3"]).status == 2)
        // A bad value for an option is a usage error (2) that says what is allowed.
        let tooBig = try h.cli(["new", "--width", "501", "--height", "9", "--mines", "10"])
        #expect(tooBig.status == 2 && tooBig.stderr.contains("500"), "\(tooBig.status) \(tooBig.stderr)")
        let huge = try h.cli(["new", "--preset", "huge"])
        #expect(huge.status == 2 && huge.stderr.contains("beginner") && huge.stderr.contains("expert"), "\(huge.status) \(huge.stderr)")
        let farStart = try h.cli(["new", "--start", "20,20"])
        #expect(
            farStart.status == 2 && farStart.stderr.contains("off the board") && farStart.stderr.contains("0 to 8"), "\(farStart.status) \(farStart.stderr)")
        let badCode = try h.cli(["join", "SWEEPER-ABCDE"])
        #expect(badCode.status == 1 && badCode.stderr.contains("invite code"))
        // An invite code made here is refused here: this device is in that circle.
        let code = try #require(try h.json(["invite"])["code"] as? String)
        let own = try h.cli(["join", code])
        #expect(own.status == 1 && own.stderr.contains("in that circle already"), "\(own.stderr)")
        #expect(try h.cli(["invite", "--valid", "5y"]).status == 2)
        #expect(try h.cli(["invite", "--valid", "0"]).status == 2)
        #expect(try h.cli(["invite", "--list", "--valid", "1h"]).status == 2)
        // A malformed address is refused; a well-formed one is dialled from
        // then on (with backoff) and listed as a static peer once reached.
        let bad = try h.cli(["connect", "no-port-here"])
        #expect(bad.status == 2 && bad.stderr.contains("HOST:PORT"))
        // `play` has no JSON to give: asked for it, it says so rather than ignore it.
        let playJSON = try h.cli(["--json", "play"])
        #expect(playJSON.status == 2 && playJSON.stderr.contains("has no JSON"), "\(playJSON.stderr)")
        // Nothing listens there: connect says so plainly, that the daemon keeps trying, and fails.
        let nobody = try h.cli(["connect", "127.0.0.1:9"])
        #expect(nobody.status == 1 && nobody.stderr.contains("Not linked to 127.0.0.1:9 yet: ") && nobody.stderr.contains("keeps trying"), "\(nobody.stderr)")
        // A script is told the same as JSON, and the exit says it did not link.
        let nobodyJSON = try h.cli(["--json", "connect", "127.0.0.1:9", "--wait", "1"])
        let told = try JSONSerialization.jsonObject(with: Data(nobodyJSON.stdout.utf8)) as? [String: Any]
        #expect(
            nobodyJSON.status == 1 && told?["linked"] as? Bool == false && told?["address"] as? String == "127.0.0.1:9"
                && (told?["reason"] as? String ?? "").contains("refused"), "\(nobodyJSON.stdout)")
        #expect(try h.json(["peers"])["peers"] as? [Any] != nil)
        // Nothing listens there: `peers --all` says so, with why and when.
        #expect(
            eventually(10) {
                let unreached = try h.json(["peers", "--all"])["unreached"] as? [[String: Any]] ?? []
                return unreached.contains { $0["address"] as? String == "127.0.0.1:9" && ($0["reason"] as? String ?? "").contains("refused") }
            })
        let peersText = try h.cli(["peers", "--all"]).stdout
        #expect(peersText.contains("Not reached") && peersText.contains("127.0.0.1:9"), "\(peersText)")
        // This daemon runs without mDNS, and the list says what that means.
        #expect(peersText.contains("mDNS is off"), "\(peersText)")
    }

    @Test func aClientThatHalfClosesAfterItsRequestsGetsEveryAnswer() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start()
        let client = try ControlLineClient(path: h.socketPath)
        #expect(client.send(#"{"id":1,"command":"new","preset":"beginner","seed":5}"# + "\n" + #"{"id":2,"command":"games"}"#))
        client.finishSending()
        let first = client.readJSON()
        let second = client.readJSON()
        #expect(first?["id"] as? Int == 1 && first?["ok"] as? Bool == true, "\(String(describing: first))")
        #expect(second?["id"] as? Int == 2 && ((second?["result"] as? [String: Any])?["games"] as? [Any])?.count == 1)
        // Then the daemon closes its end too.
        #expect(client.readLine() == nil)
    }

    @Test func aSecondDaemonOnTheComputerKeepsThePortItFirstChose() throws {
        let (a, b) = (try DaemonHarness(), try DaemonHarness())
        defer {
            a.cleanup()
            b.cleanup()
        }
        func port(_ h: DaemonHarness) throws -> Int? {
            (try h.json(["status"])["listening"] as? [String])?.first.flatMap { $0.split(separator: ":").last.flatMap { Int($0) } }
        }
        try a.start()
        try b.start()
        let (pa, pb) = (try port(a), try port(b))
        #expect(pa != nil && pb != nil && pa != pb, "\(String(describing: pa)) \(String(describing: pb))")
        // Ports from 7455 on, not a random one, and the same one after a restart.
        #expect(pb.map { (7455..<7519).contains($0) } == true, "\(String(describing: pb))")
        #expect(b.stop() == 0)
        try b.start()
        #expect(try port(b) == pb)
    }

    @Test func aCommandRightAfterStartingTheDaemonWaitsForItsSocket() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        // `sweeperd & sweeper status` in a script: the command starts before
        // the socket is up, sees the daemon's lock held, and waits for it.
        let pid = try spawnDetached([DaemonHarness.sweeperd] + h.arguments(), environment: h.environment(), output: h.logPath)
        let status = try h.cli(["status"])
        stopProcess(pid)
        #expect(status.status == 0, "\(status.status): \(status.stderr)")
        // With no daemon at all, it says so at once (exit 3), without waiting.
        let started = Date()
        let none = try h.cli(["status"])
        #expect(none.status == 3 && Date().timeIntervalSince(started) < 2, "\(none.status) after \(Date().timeIntervalSince(started)) s")
    }

    @Test func aSecondDaemonOnTheSameStateRefusesNamingTheFirst() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start()
        let pid = try #require(h.pid)
        let second = try h.run(DaemonHarness.sweeperd, ["--state-dir", h.stateDirectory, "--socket", h.root + "/other.sock", "--no-mdns"])
        #expect(second.status == 1)
        #expect(second.stderr.contains("pid \(pid)"), "\(second.stderr)")
        let third = try h.run(DaemonHarness.sweeperd, ["--state-dir", h.root + "/state2", "--socket", h.socketPath, "--no-mdns"])
        #expect(third.status == 1)
        #expect(third.stderr.contains("pid \(pid)") && third.stderr.contains("socket"), "\(third.stderr)")
        // The first one still serves.
        #expect(try h.cli(["status"]).status == 0)
    }

    @Test(.enabled(if: canActAsAnotherUser, "needs root and setpriv to act as another user"))
    func anotherUsersCallIsRefused() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start()
        // Open the doors the daemon closed, so only its uid check stands in the way.
        chmod(h.root, 0o755)
        chmod(h.root + "/run", 0o755)
        chmod(h.socketPath, 0o777)
        let o = try h.run(
            "/usr/bin/setpriv",
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", DaemonHarness.sweeper, "--socket", h.socketPath, "status",
            ])
        // The call was made: the client ran as nobody and reached the daemon (a client that
        // could not run, where the build directory is closed to other users, fails here).
        #expect(!o.stderr.contains("failed to execute") && o.status != 126 && o.status != 127, "the client did not run: \(o.stderr)")
        #expect(o.status == 1, "\(o.stderr)")
        // The client sees the daemon is another user's and sends it nothing
        // (a raw caller is refused by the daemon: ControlAbuseTests).
        #expect(o.stderr.contains("served by a process of user \(getuid())"), "\(o.stderr)")
    }

    @Test func sigtermStopsGracefullyWithOpenConnectionsAndSaysStopping() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start()
        let idle = try ControlLineClient(path: h.socketPath)
        let subscribed = try ControlLineClient(path: h.socketPath)
        subscribed.send(#"{"id":1,"command":"subscribe"}"#)
        #expect(subscribed.readJSON()?["ok"] as? Bool == true)
        idle.send(#"{"id":2,"command":"games"}"#)
        #expect(idle.readJSON()?["ok"] as? Bool == true)
        #expect(h.stop(signal: SIGTERM) == 0)
        #expect(idle.readLine() == nil, "connections are closed")
        #expect(subscribed.readLine() == nil)
        #expect(!FileManager.default.fileExists(atPath: h.socketPath))
        let after = h.notify?.waitFor("STOPPING=1") ?? []
        #expect(after.contains { $0.split(separator: "\n").contains("STOPPING=1") }, "\(after)")
        #expect(h.log().contains("stopped"))
    }

    @Test func watchdogAndJournalPrefixes() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start(environment: ["WATCHDOG_USEC": "200000"], journal: true)
        #expect(h.lastNotifications.contains { $0.contains("STATUS=") })
        let pings = h.notify?.waitFor("WATCHDOG=1") ?? []
        #expect(pings.contains("WATCHDOG=1"), "\(pings)")
        let lines = h.log().split(separator: "\n")
        #expect(!lines.isEmpty)
        #expect(lines.allSatisfy { $0.hasPrefix("<") && $0.dropFirst(2).hasPrefix(">sweeperd: ") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("<5>sweeperd: serving") })
    }

    @Test func aDamagedDatabaseIsRefusedAndLeftAlone() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try FileManager.default.createDirectory(atPath: h.stateDirectory, withIntermediateDirectories: true)
        let path = h.stateDirectory + "/sweeper.sqlite"
        let garbage = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        try garbage.write(to: URL(fileURLWithPath: path))
        let o = try h.run(DaemonHarness.sweeperd, ["--state-dir", h.stateDirectory, "--socket", h.socketPath, "--no-mdns"])
        #expect(o.status == 1)
        #expect(o.stderr.contains("damaged") && o.stderr.contains(path), "\(o.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
        #expect(!FileManager.default.fileExists(atPath: h.socketPath))
    }
}

/// Three daemons, started as ann, bob and cat, each alone in a circle of its own.
/// Three daemons, not yet in a circle. With `loopbackOnly` they listen on
/// 127.0.0.1 alone, so a line of links stays a line: no address note names
/// anywhere another can dial.
func threeDaemons(loopbackOnly: Bool = false) throws -> (DaemonHarness, DaemonHarness, DaemonHarness) {
    let daemons = (try DaemonHarness(), try DaemonHarness(), try DaemonHarness())
    if loopbackOnly { for d in [daemons.0, daemons.1, daemons.2] { d.listen = "127.0.0.1:0" } }
    do {
        try daemons.0.start(name: "ann")
        try daemons.1.start(name: "bob")
        try daemons.2.start(name: "cat")
    } catch {
        daemons.0.cleanup()
        daemons.1.cleanup()
        daemons.2.cleanup()
        throw error
    }
    return daemons
}

/// Two daemons in one circle, linked: bob joined ann's.
func twoDaemonsInOneCircle() throws -> (DaemonHarness, DaemonHarness) {
    let ann = try DaemonHarness(), bob = try DaemonHarness()
    do {
        try ann.start(name: "ann")
        try bob.start(name: "bob")
        guard try bob.join(ann).status == 0 else { throw HarnessError.socket("bob could not join ann's circle") }
    } catch {
        ann.cleanup()
        bob.cleanup()
        throw error
    }
    return (ann, bob)
}

/// Three daemons in one circle: ann and cat joined bob's, every one linked
/// to every other, and ann knowing every name.
func threeDaemonsInOneCircle() throws -> (DaemonHarness, DaemonHarness, DaemonHarness) {
    let (ann, bob, cat) = try threeDaemons()
    do {
        guard try ann.join(bob).status == 0, try cat.join(bob).status == 0,
            try cat.cli(["connect", try ann.peerAddress()]).status == 0
        else { throw HarnessError.socket("joining bob's circle failed") }
        let named = eventually(20) {
            Set(((try? ann.json(["circle"]))?["members"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }) == ["ann", "bob", "cat"]
        }
        guard named else { throw HarnessError.socket("ann did not learn every member's name") }
    } catch {
        ann.cleanup()
        bob.cleanup()
        cat.cleanup()
        throw error
    }
    return (ann, bob, cat)
}

/// The ways a genesis may write the mine layout `new` makes for this size
/// and seed (the shortest coding and the bitmap): bytes no file of a device
/// that cannot read the game may hold.
func layoutEncodings(width: Int, height: Int, mines: Int, seed: UInt64) throws -> [[UInt8]] {
    let layout = try Generator.generate(try GameParameters(width: width, height: height, mines: mines), seed: seed).layout
    return [Genesis.encodeLayout(layout).1, layout.packedBits]
}

/// A daemon's database as it is on disk: the file and its write-ahead log.
func databaseBytes(in stateDirectory: String) throws -> Data {
    let path = stateDirectory + "/sweeper.sqlite"
    return try Data(contentsOf: URL(fileURLWithPath: path)) + (FileManager.default.contents(atPath: path + "-wal") ?? Data())
}

/// The first covered cell of a board's rows, top to bottom, left to right.
func firstCovered(_ rows: [String]) -> (x: Int, y: Int)? {
    for (y, row) in rows.enumerated() {
        if let x = Array(row).firstIndex(of: "#") { return (x, y) }
    }
    return nil
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
