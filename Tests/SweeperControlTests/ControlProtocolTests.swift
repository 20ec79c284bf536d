import Foundation
import NIOCore
import NIOEmbedded
import SweeperConventions
import Synchronization
import Testing

@testable import SweeperControl

@Suite struct LineFramerTests {
    private func frames(_ chunks: [String], limit: Int = 8) throws -> [String] {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(LineFramer(maximumLength: limit)))
        for chunk in chunks {
            try channel.writeInbound(ByteBuffer(string: chunk))
        }
        _ = try channel.finish()
        var out: [String] = []
        while let frame = try channel.readInbound(as: LineFrame.self) {
            switch frame {
            case .line(let b): out.append(String(buffer: b))
            case .tooLong: out.append("<too long>")
            }
        }
        return out
    }

    @Test func splitsLinesAcrossChunks() throws {
        #expect(try frames(["ab", "c\nde", "f\r\n\n", "gh"]) == ["abc", "def", "", "gh"])
    }

    @Test func dropsOverlongLinesOnceAndGoesOn() throws {
        // Exactly the limit passes; one more is dropped whether it arrives whole or in pieces.
        #expect(try frames(["12345678\n"]) == ["12345678"])
        #expect(try frames(["123456789\nok\n"]) == ["<too long>", "ok"])
        #expect(try frames(["12345", "6789", "0123", "456\n", "ok\n"]) == ["<too long>", "ok"])
        #expect(try frames(["1234567890123456789012345"]) == ["<too long>"])
    }

    /// Until a receiver is set, lines go on down the pipeline; after, each
    /// goes to the receiver in the call that framed it, and no further.
    @Test func lineDeliveryHandsLinesOverOnceAReceiverIsSet() throws {
        let delivery = LineDelivery()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers(ByteToMessageHandler(LineFramer(maximumLength: 8)), delivery)
        try channel.writeInbound(ByteBuffer(string: "early\n"))
        #expect(!delivery.handedOver)
        final class Taken: Sendable { let lines = Mutex<[String]>([]) }
        let taken = Taken()
        delivery.deliver { frame in
            let text = if case .line(let b) = frame { String(buffer: b) } else { "<too long>" }
            taken.lines.withLock { $0.append(text) }
        }
        try channel.writeInbound(ByteBuffer(string: "late\n123456789\nlast\n"))
        #expect(taken.lines.withLock { $0 } == ["late", "<too long>", "last"])
        #expect(delivery.handedOver)
        #expect(try channel.readInbound(as: LineFrame.self) == .line(ByteBuffer(string: "early")))
        #expect(try channel.readInbound(as: LineFrame.self) == nil)
        _ = try channel.finish()
    }

    /// The thousandth line reaches the receiver through as many calls as
    /// the first. A closure held in the handler's mutex as an optional (or
    /// in a tuple) was wrapped in two more conversion thunks at each line,
    /// so each line ran through all those of the lines before it: a
    /// viewer's cursor lines grew dearer one by one, and the loop's stack
    /// deeper. Measured as the stack's depth where the receiver runs (the
    /// address of one of its locals), for lines written the same way.
    @Test func everyLineReachesTheReceiverThroughAsManyCalls() throws {
        let delivery = LineDelivery()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers(ByteToMessageHandler(LineFramer(maximumLength: 64)), delivery)
        final class Depths: Sendable { let stack = Mutex<[UInt]>([]) }
        let depths = Depths()
        delivery.deliver { _ in
            var local = 0
            let here = withUnsafeMutablePointer(to: &local) { UInt(bitPattern: $0) }
            depths.stack.withLock { $0.append(here) }
        }
        for k in 0..<1000 { try channel.writeInbound(ByteBuffer(string: "line \(k)\n")) }
        let stack = depths.stack.withLock { $0 }
        #expect(stack.count == 1000, "every line went to the receiver")
        let first = try #require(stack.first), last = try #require(stack.last)
        // The stack grows down: a deeper call has a lower address.
        #expect(first - min(first, last) < 512, "the 1000th line ran \(first - min(first, last)) bytes deeper than the first")
        _ = try channel.finish()
    }
}

@Suite struct MessageTests {
    private func object(_ value: some Encodable) throws -> [String: Any] {
        let data = try ControlCoding.line(value)
        #expect(data.last == 0x0A)
        #expect(!data.dropLast().contains(0x0A), "one line per message")
        return try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func requestsFlattenArgumentsBesideIdAndCommand() throws {
        let r = Request(id: .int(4), command: Commands.Reveal.name, arguments: Commands.MoveArguments(game: "ab", x: 1, y: 2))
        let o = try object(r)
        #expect(o["id"] as? Int == 4)
        #expect(o["command"] as? String == "reveal")
        #expect(o["game"] as? String == "ab" && o["x"] as? Int == 1 && o["y"] as? Int == 2)
        // And the server side reads them back from the same object.
        let line = try ControlCoding.line(r)
        let head = try JSONDecoder().decode(RequestHead.self, from: line)
        #expect(head.id == .int(4) && head.command == "reveal")
        #expect(try JSONDecoder().decode(Commands.MoveArguments.self, from: line) == Commands.MoveArguments(game: "ab", x: 1, y: 2))
    }

    @Test func answersHaveTheDocumentedShape() throws {
        let ok = try object(Answer.success(.string("a"), Commands.Join.Result(circleTag: "t")))
        #expect(ok["id"] as? String == "a" && ok["ok"] as? Bool == true)
        #expect((ok["result"] as? [String: Any])?["circleTag"] as? String == "t")
        #expect(ok["error"] == nil)
        let bad = try object(Answer<Empty>.failure(nil, .unknownCommand("x")))
        #expect(bad["id"] is NSNull && bad["ok"] as? Bool == false && bad["result"] == nil)
        let error = try #require(bad["error"] as? [String: Any])
        #expect(error["code"] as? String == "unknown-command")
        #expect((error["message"] as? String)?.contains("'x'") == true)
    }

    /// Like every field without a value, `trippedBy` is absent until a mine goes off.
    @Test func gameViewLeavesOutTrippedByUntilAMineGoesOff() throws {
        let view = GameView(
            game: "g", width: 2, height: 2, mines: 1, status: .playing, digest: "d", revealed: 1, flags: 0,
            board: ["1#", "##"], players: [], trippedByPeer: nil, elapsedMillis: 3000, progress: 1.0 / 3, assisted: false,
            questionMarks: false)
        let o = try object(view)
        #expect(o["trippedByPeer"] == nil)
        #expect(!String(decoding: try ControlCoding.line(view), as: UTF8.self).contains("null"))
        #expect(o["mineLayout"] == nil)
        #expect(try JSONDecoder().decode(GameView.self, from: ControlCoding.line(view)) == view)
    }

    @Test func idsAreStringsOrIntegers() throws {
        #expect(try JSONDecoder().decode(RequestHead.self, from: Data(#"{"id":"x","command":"status"}"#.utf8)).id == .string("x"))
        #expect(try JSONDecoder().decode(RequestHead.self, from: Data(#"{"id":12}"#.utf8)).id == .int(12))
        #expect(throws: (any Error).self) { try JSONDecoder().decode(RequestHead.self, from: Data(#"{"id":[1]}"#.utf8)) }
        #expect(Commands.all.count == Set(Commands.all).count)
    }
}

@Suite struct FormattingTests {
    /// One of a thing is never "1 things": counts in endings, records and moves.
    @Test func oneOfAThingIsSingular() {
        #expect(ControlFormatting.count(1, "mine") == "1 mine" && ControlFormatting.count(0, "mine") == "0 mines")
        #expect(ControlFormatting.count(2, "mine") == "2 mines")
        let ending = GameEnding(
            status: .lost, playedMillis: 6000, threeBV: 10, solvedThreeBV: 1, threeBVPerSecond: nil, clicks: 1, efficiency: 1,
            parts: [.init(name: "Sam", cellsOpened: 1, threeBV: 1, flagsRight: 0, flagsWrong: 0, clicks: 1, hintCount: 1, peekedAt: nil)],
            ranked: false)
        let lines = ControlFormatting.ending(ending).joined(separator: "\n")
        #expect(lines.contains("1 click,") && lines.contains("Sam: 1 cell,") && lines.contains("1 hint"), "\(lines)")
        #expect(!lines.contains("1 clicks") && !lines.contains("1 cells") && !lines.contains("1 hints"))
    }

    /// A lost move names who set off the mine by name, not by a peer id.
    @Test func aLostMoveNamesWhoTrippedTheMine() {
        let lost = Commands.MoveResult(
            game: "g", changed: [CellChange(x: 1, y: 2, value: "X")], status: .lost, progress: 0.5, trippedByPeer: "YZ0RK-B3QWE", trippedByName: "Max")
        #expect(ControlFormatting.move(lost).contains("(mine tripped by Max)"))
        var unnamed = lost
        unnamed.trippedByName = nil
        #expect(ControlFormatting.move(unnamed).contains("(mine tripped by YZ0RK)"))
        // One length for a device's short id, as the daemon's messages give it (PeerID.shortDescription).
        #expect(ControlFormatting.shortID("YZ0RK-B3QWE") == "YZ0RK" && ControlFormatting.shortID("ff475975b5e28dce") == "ff475975")
    }

    /// One date format everywhere: 24-hour, minutes; seconds when the time
    /// is within the hour of now (an expiry seconds away).
    @Test func oneDateFormatWithSecondsWhenClose() throws {
        let afternoon = 1_795_000_000.0 + 13 * 3600  // some time after noon, in any zone's minutes
        let plain = ControlFormatting.date(afternoon)
        #expect(plain.range(of: #"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$"#, options: .regularExpression) != nil, "\(plain)")
        #expect(!plain.contains("AM") && !plain.contains("PM"))
        let soon = ControlFormatting.date(millis: UInt64(afternoon * 1000), near: Date(timeIntervalSince1970: afternoon - 42))
        #expect(soon.range(of: #"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$"#, options: .regularExpression) != nil, "\(soon)")
        #expect(soon.hasPrefix(plain))
        #expect(ControlFormatting.date(afternoon, near: Date(timeIntervalSince1970: afternoon - 86_400)) == plain)
    }

    /// A name with emoji or wide characters keeps the columns after it in
    /// line, as a terminal draws them.
    @Test func tablesAlignByDisplayWidth() {
        let text = ControlFormatting.table(["NAME", "ROLE"], [["Mum 🌷", "admin"], ["おばあ", "member"], ["Max", "member"]])
        let lines = text.split(separator: "\n").map(String.init)
        let roleColumns = lines.map { line -> Int in
            guard let r = line.range(of: "  ", options: .backwards) else { return -1 }
            return DisplayWidth.of(line[..<r.upperBound])
        }
        #expect(Set(roleColumns).count == 1, "\(text)")
    }

    @Test func durationsSizesAndStatuses() {
        #expect(ControlFormatting.duration(0) == "0:00:00")
        #expect(ControlFormatting.duration(3_725) == "1:02:05")
        #expect(ControlFormatting.size(width: 30, height: 16, mines: 99) == "30×16 (99)")
        #expect(ControlFormatting.status(.won, progress: 1) == "won")
        #expect(ControlFormatting.status(.lost, progress: 0.5) == "lost")
        #expect(ControlFormatting.status(.playing, progress: 0.999) == "playing 99%")
    }

    @Test func gamesTableListsEveryGame() {
        let games = [
            GameListing(
                game: "0123456789abcdef", width: 9, height: 9, mines: 10, status: .won, progress: 1, elapsedMillis: 65000, playerNames: ["ada", "bob"],
                createdAt: 1_795_000_000_000, endedAt: 1_795_000_065_000, assisted: false),
            GameListing(
                game: "fedcba9876543210", width: 30, height: 16, mines: 99, status: .playing, progress: 0.5, elapsedMillis: 4_000_000, playerNames: [],
                createdAt: 1000, assisted: true),
        ]
        let text = ControlFormatting.games(games)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(
            lines[1].contains("01234567") && lines[1].contains("9×9 (10)") && lines[1].contains("won") && lines[1].contains("0:01:05")
                && lines[1].contains("ada, bob"))
        #expect(lines[2].contains("30×16 (99)") && lines[2].contains("50% (assisted)") && lines[2].contains("1:06:40"))
        // When each started, and ended once won or lost.
        #expect(lines[0].contains("STARTED") && lines[0].contains("ENDED"))
        #expect(lines[1].contains(ControlFormatting.date(1_795_000_000)) && lines[1].contains(ControlFormatting.date(1_795_000_065)))
        #expect(lines[2].contains(ControlFormatting.date(1)) && lines[2].contains(" - "))
    }
}

@Suite struct ClientTests {
    @Test func noDaemonIsReportedWithHowToStartOne() async throws {
        let path = "/tmp/sweeper-nothing-\(UUID().uuidString.prefix(8)).sock"
        await #expect {
            try await ControlClient.withConnection(socketPath: path) { client in
                try await client.call(Commands.Status.self, Empty())
            }
        } throws: { error in
            guard case ControlClientError.noDaemon(let socket, _) = error else { return false }
            return socket == path && "\(error)".contains("sweeperd")
        }
    }

    @Test func aDaemonThatHoldsTheLockButDoesNotAnswerYetIsSaidToBeStarting() async throws {
        let directory = "/tmp/sweeper-starting-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A process named sweeperd (a copy of sleep) holds the socket's lock, as a daemon reading its games back does.
        try FileManager.default.copyItem(atPath: "/bin/sleep", toPath: "\(directory)/sweeperd")
        let starting = Process()
        starting.executableURL = URL(fileURLWithPath: "\(directory)/sweeperd")
        starting.arguments = ["30"]
        try starting.run()
        defer {
            kill(starting.processIdentifier, SIGKILL)
            starting.waitUntilExit()
        }
        let path = "\(directory)/control.sock"
        try "\(starting.processIdentifier)\n".write(toFile: path + ".lock", atomically: true, encoding: .utf8)
        await #expect {
            try await ControlClient.withConnection(socketPath: path, waitingForStart: .milliseconds(300)) { client in
                try await client.call(Commands.Status.self, Empty())
            }
        } throws: { error in
            guard case ControlClientError.starting(let socket, let pid) = error else { return false }
            return socket == path && pid == starting.processIdentifier && "\(error)".contains("is starting")
                && (error as? ControlClientError)?.code == "daemon-starting"
        }
        // Once it is gone, nothing holds the lock: no daemon, as before.
        kill(starting.processIdentifier, SIGKILL)
        starting.waitUntilExit()
        await #expect {
            try await ControlClient.withConnection(socketPath: path, waitingForStart: .milliseconds(300)) { client in
                try await client.call(Commands.Status.self, Empty())
            }
        } throws: { error in
            guard case ControlClientError.noDaemon = error else { return false }
            return true
        }
    }

    @Test func defaultSocketPathFollowsTheEnvironment() {
        #expect(ControlClient.defaultSocketPath(environment: ["SWEEPER_SOCKET": "/x.sock", "XDG_RUNTIME_DIR": "/run/user/1"]) == "/x.sock")
        #expect(ControlClient.defaultSocketPath(environment: ["XDG_RUNTIME_DIR": "/run/user/1"]) == "/run/user/1/sweeper/control.sock")
        #expect(ControlClient.defaultSocketPath(environment: [:]).hasSuffix("/control.sock"))
    }
}

/// A peer's state in words: one wording for the CLI and the viewer.
@Suite struct PeerWordingTests {
    func peer(_ state: PeerState, _ sync: PeerInfo.Sync?, other: Bool = false) -> PeerInfo {
        PeerInfo(
            peer: "abcdef", name: "bob", addresses: ["198.18.0.2:7455"], state: state, via: ["mdns"],
            lastSeenAt: Int64(Date().timeIntervalSince1970 * 1000) - 0,
            roundTripMillis: nil, sync: sync, otherCircle: other)
    }

    @Test func inSyncOnlyWhileLinkedAndNeitherSideLacks() {
        #expect(peer(.connected, PeerInfo.Sync(theyLack: 0, weLack: 0)).stateWords == "in sync")
        #expect(peer(.connected, PeerInfo.Sync(theyLack: 2, weLack: 0)).stateWords == "catching up")
        #expect(peer(.connected, PeerInfo.Sync(theyLack: 0, weLack: 1)).lackWords == "they lack 0, we lack 1")
        #expect(peer(.connected, nil).stateWords == "linked, comparing")
        // A stale summary says nothing once the link is gone.
        #expect(peer(.offline, PeerInfo.Sync(theyLack: 0, weLack: 0)).stateWords == "never reached")
        // Offline after a link: since when it was last heard from, by the clock.
        var gone = peer(.offline, nil)
        gone.lastHeardAt = Int64(Date().timeIntervalSince1970 * 1000) - 90_000
        #expect(gone.stateWords.range(of: #"^offline since \d{2}:\d{2}$"#, options: .regularExpression) != nil, "\(gone.stateWords)")
        gone.lastHeardAt = Int64(Date().timeIntervalSince1970 * 1000) - 3 * 86_400_000
        #expect(gone.stateWords.range(of: #"^offline since \d{4}-\d{2}-\d{2} \d{2}:\d{2}$"#, options: .regularExpression) != nil)
        #expect(peer(.connecting, PeerInfo.Sync(theyLack: 0, weLack: 0)).stateWords == "connecting")
        #expect(peer(.discovered, nil).stateWords == "seen, not linked")
        #expect(peer(.discovered, nil, other: true).stateWords == "other circle")
        #expect(peer(.offline, nil).lackWords == nil)
    }

    @Test func theCLITableUsesTheSameWords() {
        for p in [peer(.connecting, nil), peer(.connected, PeerInfo.Sync(theyLack: 3, weLack: 0)), peer(.offline, nil)] {
            let row = ControlFormatting.peers([p]).split(separator: "\n")[1]
            #expect(row.contains(p.stateWords), "\(row)")
        }
    }
}

/// What `show` and `scores` print after a game ends.
@Suite struct FinishedGameTextTests {
    func view(_ board: [String], status: PlayStatus, flags: Int, wrongFlags: [CellPosition]? = nil) -> GameView {
        GameView(
            game: "0123456789abcdef", width: 3, height: 2, mines: 2, status: status, digest: "d", revealed: 4, flags: flags, board: board,
            players: [], trippedByPeer: nil, elapsedMillis: 5000, progress: 1, assisted: false, questionMarks: false, wrongFlags: wrongFlags)
    }

    @Test func aWrongFlagAfterALossIsDrawnAsTheViewerDrawsIt() {
        let text = ControlFormatting.show(view(["X*1", "F1."], status: .lost, flags: 1, wrongFlags: [CellPosition(x: 0, y: 1)]))
        #expect(text.contains(" 1 x1.\n"), "\(text)")
        #expect(text.contains(" 0 X*1\n"))
        #expect(text.contains("lost"))
    }

    @Test func aPlayerWhoSignedTwoMovesAtOnePlaceIsNamed() throws {
        var forked = view(["F1.", "F1."], status: .playing, flags: 1)
        #expect(!ControlFormatting.show(forked).contains("Warning"))
        forked.equivocatedByNames = ["Max"]
        #expect(ControlFormatting.show(forked).contains("Warning: Max signed two different moves at one place"))
        let json = String(decoding: try JSONEncoder().encode(forked), as: UTF8.self)
        #expect(json.contains("\"equivocatedByNames\":[\"Max\"]"))
    }

    @Test func afterAWinNoMineIsLeft() {
        var won = view(["F1.", "F1."], status: .won, flags: 0)
        (won.createdAt, won.endedAt) = (1_795_000_000_000, 1_795_000_065_000)
        let line = ControlFormatting.statusLine(won)
        #expect(line.contains("mines left 0/2") && line.contains("won"), "\(line)")
        #expect(line.contains("started \(ControlFormatting.date(1_795_000_000))") && line.contains("ended \(ControlFormatting.date(1_795_000_065))"))
    }

    @Test func aPeerRunningAnOlderSweeperIsSaidWithWhatItMisses() {
        // The daemon words the note (ControlProtocolDocTests); the list shows it as it came.
        func peer(_ name: String, _ version: Int?) -> PeerInfo {
            var p = PeerInfo(
                peer: "P-\(name)", name: name, addresses: [], state: .connected, via: ["mdns"], lastSeenAt: Int64(Date().timeIntervalSince1970 * 1000) - 0,
                roundTripMillis: 1,
                sync: .init(theyLack: 0, weLack: 0), otherCircle: false)
            p.protocolVersion = version
            if let version, version < 4 { p.versionNote = "\(name) runs an older Sweeper (peer protocol \(version)). Upgrade it." }
            return p
        }
        let text = ControlFormatting.peers(Commands.Peers.Result(peers: [peer("gran", 2), peer("mum", 4)], mdns: "running"))
        #expect(text.contains("gran runs an older Sweeper") && !text.contains("mum runs"), "\(text)")
    }

    @Test func peersAndStatusSayWhoLooksWhere() {
        let presence = [
            PresenceInfo(peer: "ME", name: "ann", game: "0123456789abcdef", x: 3, y: 4, own: true),
            PresenceInfo(peer: "P2", name: "Mum", game: "fedcba9876543210", x: 0, y: 7),
            PresenceInfo(peer: "P3", name: "Dad"),
        ]
        let text = ControlFormatting.peers(Commands.Peers.Result(peers: [], mdns: "running", presence: presence))
        #expect(text.contains("ann (you) is in game 01234567 at 3,4\n"), "\(text)")
        #expect(text.contains("Mum is in game fedcba98 at 0,7\n"))
        #expect(!text.contains("Dad"))
        let status = ControlFormatting.status(
            Commands.Status.Result(
                peer: "ME", name: "ann", circleTag: "t", listening: [], mdns: "running", peerCount: 1, gameCount: 2, version: "v", pid: 1,
                presence: presence))
        #expect(status.contains("Mum is in game fedcba98 at 0,7"))
    }

    @Test func scoresAreATableAFamilyReads() {
        let date = 1_795_000_000.0
        var best = Commands.BestTime(
            width: 9, height: 9, mines: 10, playedMillis: 65000, game: "0123456789abcdef", playerNames: ["Sam", "Mum"], startedAt: Int64(date * 1000))
        best.threeBVPerSecond = 0.42
        var second = best
        second.playedMillis = 80_000
        second.playerNames = ["Max"]
        let helped = Commands.AssistedWin(
            win: Commands.BestTime(
                width: 16, height: 16, mines: 40, playedMillis: 30000, game: "fedcba9876543210", playerNames: ["Max"], startedAt: Int64(date * 1000)),
            hints: [Commands.HintCount(name: "Max", hintCount: 3)], peeks: [Commands.Peek(name: "Sam", peekedAt: Int64((date + 5) * 1000))])
        let text = ControlFormatting.scores(
            Commands.Scores.Result(
                scores: [best],
                classes: [Commands.ScoreClass(name: "Beginner 9×9 (10), classic", width: 9, height: 9, mines: 10, noGuess: false, best: [best, second])],
                assistedWins: [helped], practice: [],
                player: Commands.PlayerRecord(name: "Sam", played: 4, won: 2, lost: 2, minesTripped: 1, bestThreeBVPerSecond: 0.42, records: [best])))
        #expect(text.hasPrefix("Beginner 9×9 (10), classic\n"), "\(text)")
        let lines = text.split(separator: "\n").map(String.init)
        let first = lines.first { $0.hasPrefix("1 ") }
        #expect(first != nil, "\(text)")
        #expect(first?.contains("0:01:05") == true && first?.contains("0.42") == true && first?.contains("Sam, Mum") == true)
        #expect(first?.contains(ControlFormatting.date(date)) == true, "\(text)")
        #expect(lines.contains { $0.hasPrefix("2 ") && $0.contains("Max") })
        #expect(text.contains("Assisted (not ranked)") && text.contains("Max 3") && text.contains("Sam " + ControlFormatting.date(date + 5)))
        #expect(!text.contains("Practice"))
        #expect(text.contains("Sam: 4 played, 2 won, 2 lost, 1 mine tripped, best 3BV/s 0.42"), "\(text)")
        #expect(ControlFormatting.scores(Commands.Scores.Result(scores: [], classes: [])).hasPrefix("No ranked wins yet."))
        #expect(ControlFormatting.date(date).count == 16)
    }
}

/// Where peers are listed, failures are said, with what to do.
@Suite struct PeerProblemsTextTests {
    @Test func unreachedPeersAndMDNSAreSaid() {
        let result = Commands.Peers.Result(
            peers: [],
            unreached: [
                UnreachedPeerInfo(address: "10.9.8.7:7455", reason: "no route to the host", failedAt: Int64(Date().timeIntervalSince1970 * 1000) - 12000)
            ],
            mdns: "unavailable (avahi-daemon is not running)")
        let text = ControlFormatting.peers(result)
        #expect(text.contains("10.9.8.7:7455") && text.contains("no route to the host") && text.contains("12s ago"), "\(text)")
        #expect(text.contains("Start avahi-daemon") && text.contains("sweeper connect HOST:PORT"), "\(text)")
        #expect(ControlFormatting.mdnsNote("running as \"ann on h1\"") == nil)
        #expect(ControlFormatting.mdnsNote("disabled")?.contains("off") == true)
    }
}
