import Foundation
import SweeperCrypto
import SweeperGame
import SweeperMembership
import SweeperMessages
import SweeperTestSupport
import Testing

@testable import SweeperSync

/// Hostile peers against a real `sweeperd`: strangers, garbage,
/// oversized and replayed frames, forged ops, floods and stalled handshakes.
/// Each is dropped or refused, logged once (however often it is repeated),
/// and the daemon goes on serving its players and its honest peer with its
/// games unchanged. Attackers use their own loopback addresses (127.0.0.2
/// and up); the honest peer links from 127.0.0.1.
@Suite(.serialized) struct AdversaryTests {
    /// How often each attack is repeated: the log must still say it once.
    static let repetitions = 4

    /// Runs `attack` `repetitions` times, each of which must end with the
    /// connection dropped.
    private func repeatDropped(_ scene: AttackScene, _ what: String, _ attack: () throws -> Bool) rethrows {
        for i in 0..<Self.repetitions {
            #expect(try attack(), "\(what) (try \(i + 1)): the daemon did not drop the connection")
        }
    }

    /// Expects exactly one log line since `offset` with all of `needles` (waiting up to 15 s for it).
    private func expectLoggedOnce(_ target: TargetDaemon, since offset: Int, _ needles: [String], what: String) {
        let match = { target.log(since: offset).split(separator: "\n").filter { line in needles.allSatisfy { line.contains($0) } } }
        _ = eventually(15) { !match().isEmpty }
        let lines = match()
        #expect(lines.count == 1, "\(what): expected one log line with \(needles), got \(lines.count):\n\(lines.joined(separator: "\n"))")
    }

    @Test func strangersGarbageOversizedAndReplayedFramesAreDroppedAndLoggedOnce() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        let (target, port, circle) = (scene.target, scene.port, scene.circle)
        let before = try target.digests()
        let descriptors = target.openDescriptors()
        var checks: [(offset: Int, needles: [String], what: String)] = []
        func note(_ offset: Int, _ what: String, _ needles: String...) { checks.append((offset, needles, what)) }

        // A session recorded by a member, to be replayed blindly later.
        let recorded: [[UInt8]] = try {
            let recorder = try AdversaryPeer(port: port, from: "127.0.0.99", circle: circle)
            recorder.sendHello()
            recorder.send(sync: .summary([:], wantsReply: true))
            #expect(recorder.nextSync() != nil, "a member with the key gets the daemon's summary")
            return recorder.wire.sentFrames
        }()

        // 1. No circle key: refused at the first message.
        var offset = target.log().utf8.count
        repeatDropped(scene, "wrong circle key") {
            do {
                _ = try AdversaryPeer(port: port, from: "127.0.0.2", circle: CircleKey())
                return false
            } catch { return true }
        }
        note(offset, "a stranger", "handshake failed", "does not hold this circle's key", "remote=127.0.0.2:")

        // 2. Garbage instead of a handshake, framed and unframed.
        offset = target.log().utf8.count
        try repeatDropped(scene, "garbage handshake") {
            let w = try WireClient(port: port, from: "127.0.0.3")
            w.sendFrame(Forge.randomBytes(64))
            return w.waitForClose(seconds: 15)
        }
        note(offset, "garbage handshake", "handshake failed", "remote=127.0.0.3:")

        // 3. An oversized length prefix before the handshake: refused before
        // any of it is buffered (strangers get 1 KiB frames).
        offset = target.log().utf8.count
        try repeatDropped(scene, "oversized frame from a stranger") {
            let w = try WireClient(port: port, from: "127.0.0.4")
            w.sendRaw([0x00, 0xA0, 0x00, 0x00] + [UInt8](repeating: 7, count: 4096))
            return w.waitForClose(seconds: 15)
        }
        note(offset, "oversized stranger frame", "frame of 10485760 bytes is over the 1024-byte limit", "remote=127.0.0.4:")

        // 4. A recorded session replayed frame by frame: the identity proof
        // is bound to the old ephemeral keys.
        offset = target.log().utf8.count
        try repeatDropped(scene, "replayed session") {
            let w = try WireClient(port: port, from: "127.0.0.5")
            for frame in recorded { w.sendFrame(frame) }
            return w.waitForClose(seconds: 15)
        }
        note(offset, "replayed session", "handshake failed", "identity proof is invalid", "remote=127.0.0.5:")

        // 5. A member that sends garbage after the handshake.
        offset = target.log().utf8.count
        try repeatDropped(scene, "garbage in the stream") {
            let p = try AdversaryPeer(port: port, from: "127.0.0.6", circle: circle)
            p.wire.sendFrame(Forge.randomBytes(100))
            return p.wire.waitForClose(seconds: 15)
        }
        note(offset, "garbage frame", "link dropped", "failed authentication", "remote=127.0.0.6:")

        // 6. A member that announces a frame over the 16 MiB limit.
        offset = target.log().utf8.count
        try repeatDropped(scene, "oversized frame from a member") {
            let p = try AdversaryPeer(port: port, from: "127.0.0.7", circle: circle)
            p.wire.sendRaw([0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3])
            return p.wire.waitForClose(seconds: 15)
        }
        note(offset, "oversized member frame", "link dropped", "frame of 4294967295 bytes is over the 16777216-byte limit", "remote=127.0.0.7:")

        // 7. A frame of this very session sent again.
        offset = target.log().utf8.count
        try repeatDropped(scene, "in-session replay") {
            let p = try AdversaryPeer(port: port, from: "127.0.0.8", circle: circle)
            p.sendHello()
            guard let last = p.sealedFrames.last else { return false }
            p.wire.sendFrame(last)
            return p.wire.waitForClose(seconds: 15)
        }
        note(offset, "replayed frame", "link dropped", "failed authentication", "remote=127.0.0.8:")

        // 8. A well-sealed message of an unknown type.
        offset = target.log().utf8.count
        try repeatDropped(scene, "unknown message type") {
            let p = try AdversaryPeer(port: port, from: "127.0.0.9", circle: circle)
            p.send(message: [99, 1, 2, 3])
            return p.wire.waitForClose(seconds: 15)
        }
        note(offset, "unknown message", "link dropped", "unknown message type 99", "remote=127.0.0.9:")

        // 9. A well-sealed sync message that does not decode (one member, again and again).
        offset = target.log().utf8.count
        let garbler = SigningIdentity()
        try repeatDropped(scene, "malformed sync message") {
            let p = try AdversaryPeer(port: port, from: "127.0.0.10", circle: circle, identity: garbler)
            p.send(message: [1, 7, 7, 7])
            return p.wire.waitForClose(seconds: 15)
        }
        note(offset, "malformed sync", "dropping a peer that sent a malformed sync message", "peer=\(garbler.peerID.shortDescription)")

        // Nothing changed; the daemon serves its player and its honest peer.
        #expect(try target.digests() == before)
        #expect(try scene.stillServes() == nil)
        for c in checks { expectLoggedOnce(target, since: c.offset, c.needles, what: c.what) }
        // No socket is left behind by any of it.
        #expect(eventually(30) { target.openDescriptors() <= descriptors + 2 }, "descriptors: \(descriptors) before, \(target.openDescriptors()) after")
    }

    /// Mallory, a member, sends the target points at cells: her own fresh
    /// one is shown there and relayed to the honest peer (the attempt
    /// happens), but a stranger's point she relays, a point at a private
    /// game she does not play, a stale or repeated point, a forged one and
    /// all but three of a burst of ten are not. A peer of protocol 12 is
    /// sent no point, while Mallory's link of 13 gets the honest player's.
    @Test func aPointIsShownOnlyFromAMemberAtAGameItSeesFreshAndAtItsRate() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        let (target, port, circle) = (scene.target, scene.port, scene.circle)
        let honestID = try scene.honest.peerID()
        let sealed = try target.result(#"{"id":1,"command":"new","preset":"beginner","players":["\#(honestID)"],"privateGame":true}"#)
        let privateText = try #require(sealed["game"] as? String)
        let privateGame = try #require(GameID(hex: privateText))
        let game = try #require(GameID(hex: scene.game))
        func subscribe(_ daemon: TargetDaemon) throws -> ControlLineClient {
            let viewer = try ControlLineClient(path: daemon.socketPath)
            viewer.send(#"{"id":1,"command":"subscribe"}"#)
            #expect(viewer.readJSON()?["ok"] as? Bool == true)
            return viewer
        }
        let targetViewer = try subscribe(target), honestViewer = try subscribe(scene.honest)
        let mallory = try scene.admit(from: "127.0.0.44")
        let p = try AdversaryPeer(port: port, from: "127.0.0.44", circle: circle, identity: mallory)
        p.sendHello(version: 13)
        let older = try AdversaryPeer(port: port, from: "127.0.0.45", circle: circle, identity: try scene.admit(from: "127.0.0.45"))
        older.sendHello(version: 12)
        // The honest peer knows Mallory as a member before she points.
        #expect(
            eventually(20) {
                ((try scene.honest.result(#"{"id":1,"command":"circle"}"#))["members"] as? [[String: Any]] ?? [])
                    .contains { $0["peer"] as? String == mallory.peerID.description }
            })

        let wall = UInt64(Date().timeIntervalSince1970 * 1000)
        func point(_ who: SigningIdentity, _ serial: UInt64, x: Int, in g: GameID = game) -> PointNote {
            PointNote(signing: who, serial: serial, spot: PresenceSpot(game: g.bytes, x: x, y: 0)!)
        }
        func send(_ note: PointNote) { p.send(message: PeerMessage.point(note).encoded) }
        send(point(SigningIdentity(), wall, x: 2))  // a stranger's, relayed by Mallory
        send(point(mallory, wall, x: 3, in: privateGame))  // a game she does not play
        send(point(mallory, wall - PointTable.freshness - 1_000, x: 4))  // stale
        let shown = point(mallory, wall + 1, x: 1)
        send(shown)
        send(shown)  // again
        for i in 0..<10 { send(point(mallory, wall + 2 + UInt64(i), x: 5)) }  // a burst
        var forged = PeerMessage.point(point(mallory, wall + 20, x: 6)).encoded
        forged[forged.count - 1] ^= 1
        p.send(message: forged)

        /// The points a viewer is shown, as (author, x), until `enough` holds.
        func points(_ viewer: ControlLineClient, until enough: ([String]) -> Bool) -> [String] {
            var seen: [String] = []
            while !enough(seen), let event = viewer.readJSON() {
                guard event["event"] as? String == "point", let x = event["x"] as? Int,
                    let by = (event["presence"] as? [String: Any])?["peer"] as? String
                else { continue }
                let who = by == mallory.peerID.description ? "mallory" : by == honestID.description ? "honest" : by
                seen.append("\(who) \(x)")
            }
            return seen
        }
        // Both viewers are shown Mallory's four points that count (her own,
        // then three of the burst); anything shown that should not be comes
        // before or among them, or after them and before the honest point.
        let fourOfMallory: ([String]) -> Bool = { $0.filter { $0.hasPrefix("mallory") }.count >= 4 }
        let seenAtTarget = points(targetViewer, until: fourOfMallory), seenAtHonest = points(honestViewer, until: fourOfMallory)
        // The honest player points: the last point both viewers see.
        #expect(try scene.honest.result(#"{"id":1,"command":"point","game":"\#(scene.game)","x":8,"y":0}"#)["x"] as? Int == 8)
        let toHonest: ([String]) -> Bool = { $0.last?.hasPrefix("honest") == true }
        let expected = ["mallory 1", "mallory 5", "mallory 5", "mallory 5", "honest 8"]
        #expect(seenAtTarget + points(targetViewer, until: toHonest) == expected)
        #expect(seenAtHonest + points(honestViewer, until: toHonest) == expected, "the target relays a member's point to its other links")
        // Mallory's link (13) is sent the honest player's point; the link of 12 gets none.
        var toMallory: [UInt8] = [], toOlder: [UInt8] = []
        let deadline = Date().addingTimeInterval(2.5)
        while Date() < deadline && !toMallory.contains(12) {
            if let t = p.nextType() { toMallory.append(t) }
            if let t = older.nextType() { toOlder.append(t) }
        }
        #expect(toMallory.contains(12), "a link of 13 got \(toMallory)")
        #expect(!toOlder.contains(12) && toOlder.contains(2), "a link of 12 got \(toOlder)")
        #expect(try scene.stillServes() == nil)
    }

    @Test func anOlderDaemonIsToldNoProfilesOrPresenceAndIsShownAsOlder() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        // The target's player has the game open for a moment: it keeps a share of its played time.
        do {
            let viewer = try ControlLineClient(path: scene.target.socketPath)
            viewer.send(#"{"id":1,"command":"subscribe"}"#)
            #expect(viewer.readJSON()?["ok"] as? Bool == true)
            viewer.send(#"{"id":0,"command":"cursor","game":"\#(scene.game)","x":0,"y":0}"#)
            let counted = eventually(5, every: 0.05) {
                (try scene.target.result(#"{"id":2,"command":"show","game":"\#(scene.game)"}"#)["elapsedMillis"] as? Int ?? 0) >= 300
            }
            #expect(counted, "the open game counted no time")
        }
        // A daemon of peer protocol 2 (before presence and profiles), one of
        // 3 (before played time) and a current one link and say hello; all answer pings.
        let older = try AdversaryPeer(port: scene.port, from: "127.0.0.2", circle: scene.circle)
        older.sendHello(name: "old", version: 2)
        let previous = try AdversaryPeer(port: scene.port, from: "127.0.0.4", circle: scene.circle)
        previous.sendHello(name: "previous", version: 3)
        let current = try AdversaryPeer(port: scene.port, from: "127.0.0.3", circle: scene.circle)
        current.sendHello(name: "new", version: 4)
        var (toOlder, toPrevious, toCurrent): ([UInt8], [UInt8], [UInt8]) = ([], [], [])
        let deadline = Date().addingTimeInterval(2.5)
        // Each link gets a ping a second, so each read returns within about one.
        while Date() < deadline {
            if let t = older.nextType() { toOlder.append(t) }
            if let t = previous.nextType() { toPrevious.append(t) }
            if let t = current.nextType() { toCurrent.append(t) }
        }
        // The oldest is told none of presence, profiles and played time; the
        // previous one no played time; the current one gets every profile
        // the target keeps (its own and bob's) and the target's share.
        #expect(!toOlder.contains(5) && !toOlder.contains(6) && !toOlder.contains(7) && toOlder.contains(2), "an older daemon got \(toOlder)")
        #expect(toPrevious.filter { $0 == 6 }.count == 2 && !toPrevious.contains(7), "a protocol 3 daemon got \(toPrevious)")
        #expect(toCurrent.filter { $0 == 6 }.count == 2 && toCurrent.contains(7), "a current daemon got \(toCurrent)")
        // `peers` says which one runs an older Sweeper, and what it misses.
        let peers = try scene.target.result(#"{"id":1,"command":"peers"}"#)["peers"] as? [[String: Any]] ?? []
        #expect(peers.contains { $0["name"] as? String == "old" && $0["protocolVersion"] as? Int == 2 }, "\(peers)")
        #expect(peers.contains { $0["name"] as? String == "new" && $0["protocolVersion"] as? Int == 4 }, "\(peers)")
        let text = try runProcess([TestDaemons.sweeper, "--socket", scene.target.socketPath, "peers"], environment: scene.target.environment)
        #expect(text.stdout.contains("old runs an older Sweeper (peer protocol 2)"), "\(text.stdout)")
        #expect(!text.stdout.contains("new runs an older"))
    }

    @Test func forgedOpsAreRefusedLoggedOnceAndChangeNothing() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        let (target, port, circle) = (scene.target, scene.port, scene.circle)
        let game = try #require(GameID(hex: scene.game))
        let honestID = try scene.honest.peerID()
        let before = try target.digests()

        // A member with its own identity who breaks the rules, from its own address.
        func attack(_ source: String, _ mallory: SigningIdentity, _ ops: @escaping () -> [Op]) throws {
            try scene.admit(mallory, from: source)
            for _ in 0..<Self.repetitions {
                let p = try AdversaryPeer(port: port, from: source, circle: circle, identity: mallory)
                p.sendHello()
                p.send(ops: ops())
                // The daemon answers a summary sent after the ops with the
                // game's ops: the ops before it were handled.
                p.send(sync: .summary([game: VersionVector()], wantsReply: true))
                let answer = p.nextSync { if case .ops = $0 { true } else { false } }
                #expect(answer != nil, "the daemon stopped talking to \(source)")
            }
        }
        var checks: [(offset: Int, needles: [String], what: String)] = []

        // Ops signed by someone other than their claimed author (the target itself, its honest peer).
        var offset = target.log().utf8.count
        let forger = SigningIdentity()
        try attack("127.0.0.30", forger) {
            [scene.targetID, honestID].map { victim in
                Forge.op(
                    author: forger, circle: circle, game: game, seq: 500, payload: .mark(cell: 0, mark: .flag),
                    signer: forger, claimedAuthor: victim)
            }
        }
        checks.append((offset, ["refused ops", "reason=badSignature", "peer=\(forger.peerID.shortDescription)"], "forged signature"))

        // An op whose chain is broken: seq 1 naming a previous op.
        offset = target.log().utf8.count
        let breaker = SigningIdentity()
        try attack("127.0.0.31", breaker) {
            [
                Forge.op(
                    author: breaker, circle: circle, game: game, previous: OpHash(unchecked: Forge.randomBytes(32)),
                    payload: .mark(cell: 0, mark: .flag))
            ]
        }
        checks.append((offset, ["refused ops", "reason=brokenChain", "peer=\(breaker.peerID.shortDescription)"], "broken chain"))

        // Ops for a game nobody made, and a genesis that does not match its game id.
        offset = target.log().utf8.count
        let inventor = SigningIdentity()
        let invented = try #require(GameID(bytes: Forge.randomBytes(16)))
        let generated = try Generator.generate(try GameParameters(preset: .beginner), seed: 7)
        let realGenesis = try OpAuthor(identity: inventor, circle: circle).genesis(
            parameters: generated.parameters, layout: generated.layout, seed: 7, questionMarks: false, createdAtMillis: 1)
        guard case .genesis(let g) = realGenesis.payload else { Issue.record("no genesis"); return }
        try attack("127.0.0.32", inventor) {
            [
                Forge.op(author: inventor, circle: circle, game: invented, seq: 2, payload: .mark(cell: 3, mark: .flag)),
                Forge.op(author: inventor, circle: circle, game: invented, payload: .genesis(g)),
            ]
        }
        checks.append((offset, ["refused ops", "reason=invalidGenesis", "peer=\(inventor.peerID.shortDescription)"], "invented game"))

        // Cells off the 16×16 board.
        offset = target.log().utf8.count
        let outlander = SigningIdentity()
        try attack("127.0.0.33", outlander) {
            [
                Forge.op(author: outlander, circle: circle, game: game, payload: .mark(cell: 256, mark: .flag)),
                Forge.op(author: outlander, circle: circle, game: game, payload: .reveal(CellRuns(cells: 250..<300))),
            ]
        }
        checks.append((offset, ["refused ops", "reason=cellOutOfRange", "peer=\(outlander.peerID.shortDescription)"], "cells off the board"))

        // An outsider's op relayed by a member: its proof is another circle's.
        offset = target.log().utf8.count
        let relay = SigningIdentity()
        let outsider = SigningIdentity()
        try attack("127.0.0.34", relay) {
            [Forge.op(author: outsider, circle: CircleKey(), game: game, payload: .mark(cell: 0, mark: .flag))]
        }
        checks.append((offset, ["refused ops", "reason=notMember", "peer=\(relay.peerID.shortDescription)"], "outsider's op"))

        // A well-signed op from the far future: a Lamport time no game can
        // reach, which would leave no room for anybody's next move.
        offset = target.log().utf8.count
        let timeTraveller = SigningIdentity()
        try attack("127.0.0.35", timeTraveller) {
            [Forge.op(author: timeTraveller, circle: circle, game: game, lamport: .max, payload: .mark(cell: 0, mark: .flag))]
        }
        checks.append((offset, ["refused ops", "reason=lamportOutOfRange", "peer=\(timeTraveller.peerID.shortDescription)"], "far future"))

        // Nothing was kept: the same games with the same digests, no invented game.
        let after = try target.digests()
        #expect(after == before)
        #expect(after[invented.description] == nil)
        #expect(try scene.stillServes() == nil)
        for c in checks { expectLoggedOnce(target, since: c.offset, c.needles, what: c.what) }
    }

    /// A member signs two different moves at one place of its chain and
    /// sends both: the second is refused as a conflict, logged, and `show`
    /// names the member, on the target and, after a restart, still (the
    /// refused move itself is never kept, so only that note remembers it).
    @Test func aMemberWhoSignsTwoMovesAtOnePlaceIsNamedEvenAfterARestart() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        let (target, port, circle) = (scene.target, scene.port, scene.circle)
        let game = try #require(GameID(hex: scene.game))
        let mallory = try scene.admit(from: "127.0.0.36")
        let offset = target.log().utf8.count
        let p = try AdversaryPeer(port: port, from: "127.0.0.36", circle: circle, identity: mallory)
        p.sendHello()
        func named() -> [String] {
            ((try? target.result(#"{"id":1,"command":"show","game":"\#(game)"}"#))?["equivocatedByNames"] as? [String]) ?? []
        }
        // Sent again when the first try came before the target counted the
        // new member's ops (its admission's last step runs on): at most three times.
        var tries = 0
        repeat {
            tries += 1
            p.send(ops: [
                Forge.op(author: mallory, circle: circle, game: game, payload: .mark(cell: 0, mark: .flag)),
                Forge.op(author: mallory, circle: circle, game: game, payload: .mark(cell: 1, mark: .flag)),
            ])
            p.send(sync: .summary([game: VersionVector()], wantsReply: true))
            #expect(p.nextSync { if case .ops = $0 { true } else { false } } != nil, "the daemon stopped talking")
        } while tries < 3 && !eventually(3, { named().count == 1 })
        #expect(named().count == 1, "show names nobody")
        let short = mallory.peerID.shortDescription
        #expect(!target.logLines(since: offset, containing: "reason=conflictingOp", "peer=\(short)").isEmpty, "the refusal was not logged")
        #expect(!target.logLines(since: offset, containing: "two different moves at one place", "author=\(short)").isEmpty)
        target.stop()
        try target.start()
        #expect(named().count == 1, "the note did not outlive a restart")
    }

    /// A member sends a sync message that does not decode: the link is
    /// dropped, and the log's "peer unlinked" line says why, every time
    /// (the complaint itself is rate-limited).
    @Test func aLinkClosedForAMalformedMessageIsLoggedWithWhy() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        let (target, port, circle) = (scene.target, scene.port, scene.circle)
        let mallory = try scene.admit(from: "127.0.0.39")
        let offset = target.log().utf8.count
        for _ in 0..<2 {
            let p = try AdversaryPeer(port: port, from: "127.0.0.39", circle: circle, identity: mallory)
            p.sendHello()
            _ = p.send(message: [1, 1, 99])  // a sync message of an unknown type
            #expect(p.isClosed(within: 10), "the link stayed up")
        }
        let short = mallory.peerID.shortDescription
        #expect(
            eventually(10) {
                target.logLines(since: offset, containing: "peer unlinked", "peer=\(short)", "reason=a malformed sync message").count == 2
            }, "\(target.log(since: offset))")
        #expect(try scene.stillServes() == nil)
    }

    /// A member linked to the target pushes moves live, without
    /// signatures. The target takes each as the link's peer's own (a live
    /// push names no author: she cannot push one as anybody else), shows
    /// it, and asks her for her head at once, since its honest peer is not
    /// linked to her; until she signs, the honest peer never gets the move.
    /// A flood naming a cell off the board is refused (`cellOutOfRange`, the
    /// link kept); another member's head that does not match is refused
    /// (`badSignature`, the link kept); a head signature of her own that is
    /// not hers closes the link, and her move stays. Her real head, on a
    /// new link, lets the move travel on.
    @Test func liveMovesAreTheirLinksPeersAndTravelOnOnlySigned() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        let (target, port, circle) = (scene.target, scene.port, scene.circle)
        let game = try #require(GameID(hex: scene.game))
        let before = try #require(try target.digests()[scene.game])
        let board = try #require(try target.result(#"{"id":1,"command":"show","game":"\#(scene.game)"}"#)["board"] as? [String])
        let row = try #require(board.firstIndex { $0.contains("#") })
        let column = try #require(Array(board[row]).firstIndex(of: "#"))
        let cell = row * 16 + column
        let mallory = try scene.admit(from: "127.0.0.40")
        let offset = target.log().utf8.count
        let p = try AdversaryPeer(port: port, from: "127.0.0.40", circle: circle, identity: mallory)
        p.sendHello(version: 8)
        p.send(
            sync: .live([
                LiveOp(
                    game: .new(game), position: .absolute(seq: 1, lamport: 1_000, wall: 1),
                    payload: .mark(cell: cell, mark: .flag), signature: nil)
            ]))
        #expect(eventually(15) { try target.digests()[scene.game] != before }, "the target did not show the live move")
        let asked = p.nextSync { message in
            guard case .unsigned(let chains) = message else { return false }
            return chains.contains { $0.game == game && $0.author == mallory.peerID && $0.seq == 1 }
        }
        #expect(asked != nil, "the target did not ask for the head its honest peer needs")

        // A flood with an exception off the 16×16 board.
        let offBoard = try #require(Flood(cell: cell, chord: false, exceptions: [256]))
        p.send(
            sync: .live([
                LiveOp(
                    game: .numbered(1), position: .absolute(seq: 2, lamport: 1_002, wall: 3),
                    payload: .flood(offBoard), signature: nil)
            ]))
        // A head of the target's own chain (its genesis) that is not its signature: refused, the link kept.
        p.send(sync: .heads([HeadSignature(game: .numbered(1), author: scene.targetID, seq: 1, signature: mallory.sign([1]))]))
        expectLoggedOnce(target, since: offset, ["refused ops", "reason=badSignature", "peer=\(mallory.peerID.shortDescription)"], what: "another's bad head")
        expectLoggedOnce(
            target, since: offset, ["refused ops", "reason=cellOutOfRange", "peer=\(mallory.peerID.shortDescription)"], what: "a flood off the board")
        let shown = try #require(try target.digests()[scene.game])
        #expect(shown != before)
        #expect(try scene.honest.digests()[scene.game] == before, "an unsigned move travelled on")

        // A head signature that is not hers: the link closes, the move stays.
        p.send(sync: .heads([HeadSignature(game: .numbered(1), author: nil, seq: 1, signature: mallory.sign([0]))]))
        #expect(p.isClosed(within: 10), "a bad head signature did not close the link")
        expectLoggedOnce(
            target, since: offset, ["dropping a peer", "not its author's", "peer=\(mallory.peerID.shortDescription)"], what: "a bad head signature")
        #expect(try target.digests()[scene.game] == shown)
        #expect(try scene.honest.digests()[scene.game] == before)

        // Her real head on a new link: the move is a signed run, and travels on.
        let signed = Forge.op(author: mallory, circle: circle, game: game, seq: 1, lamport: 1_000, payload: .mark(cell: cell, mark: .flag))
        let again = try AdversaryPeer(port: port, from: "127.0.0.41", circle: circle, identity: mallory)
        again.sendHello(version: 8)
        again.send(sync: .heads([HeadSignature(game: .new(game), author: nil, seq: 1, signature: try #require(signed.signature))]))
        #expect(eventually(30) { try scene.honest.digests()[scene.game] == shown }, "the signed move did not reach the honest peer")
        #expect(try scene.stillServes() == nil)
    }

    /// A member the creator did not choose moves in the game anyway, and
    /// adds herself to its players: both are refused as `notPlayer` like a
    /// bad signature (logged once, the link kept), and neither the target
    /// nor its honest peer changes. A peer of hello version 7 is sent the
    /// game, one of version 6 is not. In a private game, a member who does
    /// not play is refused the same way, sealed move or plain.
    @Test func aSpectatorsMovesAndSelfInvitationAreRefused() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        let (target, port, circle) = (scene.target, scene.port, scene.circle)
        let honestID = try scene.honest.peerID()
        let made = try target.result(#"{"id":1,"command":"new","preset":"beginner","players":["\#(honestID)"]}"#)
        let gameText = try #require(made["game"] as? String)
        let game = try #require(GameID(hex: gameText))
        #expect(eventually(30) { try scene.honest.digests()[gameText] == target.digests()[gameText] })
        let before = try target.digests()
        let mallory = try scene.admit(from: "127.0.0.36")
        let offset = target.log().utf8.count
        for _ in 0..<Self.repetitions {
            let p = try AdversaryPeer(port: port, from: "127.0.0.36", circle: circle, identity: mallory)
            p.sendHello(version: 7)
            p.send(ops: [
                Forge.op(author: mallory, circle: circle, game: game, payload: .reveal(CellRuns(cells: [0]))),
                Forge.op(author: mallory, circle: circle, game: game, payload: .players([mallory.peerID])),
            ])
            p.send(sync: .summary([game: VersionVector()], wantsReply: true))
            let answer = p.nextSync { if case .ops = $0 { true } else { false } }
            #expect(answer.map { Self.games(in: $0).contains(game) } == true, "the daemon did not send the game to a peer of version 7")
        }
        // A peer of version 6 would close the link on the players list: it gets the other game only.
        let older = try AdversaryPeer(port: port, from: "127.0.0.37", circle: circle, identity: SigningIdentity())
        older.sendHello(version: 6)
        older.send(sync: .summary([:], wantsReply: true))
        let olderGets = older.nextSync { if case .ops = $0 { true } else { false } }.map(Self.games(in:))
        #expect(olderGets == [try #require(GameID(hex: scene.game))], "a peer of version 6 was sent \(String(describing: olderGets))")
        expectLoggedOnce(target, since: offset, ["refused ops", "reason=notPlayer", "peer=\(mallory.peerID.shortDescription)"], what: "a spectator's ops")

        // A private game of the target and its honest peer: a member who does
        // not play sends it a sealed move and a plain one; both are refused.
        let sealed = try target.result(#"{"id":1,"command":"new","preset":"beginner","players":["\#(honestID)"],"privateGame":true}"#)
        let privateText = try #require(sealed["game"] as? String)
        let privateGame = try #require(GameID(hex: privateText))
        #expect(eventually(30) { try scene.honest.digests()[privateText] == target.digests()[privateText] })
        let eve = try scene.admit(from: "127.0.0.38")
        let eveOffset = target.log().utf8.count
        for _ in 0..<Self.repetitions {
            let p = try AdversaryPeer(port: port, from: "127.0.0.38", circle: circle, identity: eve)
            p.sendHello(version: 7)
            p.send(ops: [
                Forge.op(author: eve, circle: circle, game: privateGame, payload: .sealed(Forge.randomBytes(60))),
                Forge.op(author: eve, circle: circle, game: privateGame, payload: .reveal(CellRuns(cells: [0]))),
            ])
            p.send(sync: .summary([privateGame: VersionVector()], wantsReply: true))
            let answer = p.nextSync { if case .ops = $0 { true } else { false } }
            // She is sent the sealed game to relay, and cannot read it.
            #expect(answer.map { Self.games(in: $0).contains(privateGame) } == true)
        }
        expectLoggedOnce(
            target, since: eveOffset, ["refused ops", "reason=notPlayer", "peer=\(eve.peerID.shortDescription)"], what: "a non-player's ops in a private game")
        #expect(try target.digests()[privateText] == scene.honest.digests()[privateText])
        let after = try target.digests()
        #expect(after.filter { $0.key != privateText } == before)
        #expect(try scene.honest.digests()[gameText] == before[gameText])
        #expect(try scene.stillServes() == nil)
    }

    /// Mallory, a member who does not race, moves in a race of the target
    /// and its honest peer, gives up a board, and enters herself: each is
    /// refused as `notPlayer` (logged once, the link kept) and no board
    /// changes. The honest racer's own move is taken, on its own board
    /// alone (the attempt happens). A peer of hello version 14 is sent the
    /// race; one of 13, which cannot read it, is not.
    @Test func aRaceTakesItsRacersMovesOnTheirOwnBoardsAndNobodyElses() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        let (target, port, circle) = (scene.target, scene.port, scene.circle)
        let honestID = try scene.honest.peerID()
        let made = try target.result(#"{"id":1,"command":"new","preset":"beginner","players":["\#(honestID)"],"race":true}"#)
        let gameText = try #require(made["game"] as? String)
        let game = try #require(GameID(hex: gameText))
        #expect(eventually(30) { try scene.honest.digests()[gameText] == target.digests()[gameText] })
        // The honest racer opens a cell: its board changes, the target's does not.
        let targetBoard = try #require(made["board"] as? [String])
        let y = try #require(targetBoard.firstIndex { $0.contains("#") })
        let x = try #require(Array(targetBoard[y]).firstIndex(of: "#"))
        let moved = try scene.honest.request(#"{"id":1,"command":"reveal","game":"\#(gameText)","x":\#(x),"y":\#(y)}"#)
        #expect(moved["ok"] as? Bool == true, "\(moved)")
        #expect(eventually(30) { try scene.honest.digests()[gameText] == target.digests()[gameText] })
        let raced = try target.result(#"{"id":1,"command":"show","game":"\#(gameText)"}"#)
        #expect(raced["board"] as? [String] == targetBoard, "the honest racer's move opened the target's board")
        let honestRacer = try target.result(#"{"id":1,"command":"show","game":"\#(gameText)","racer":"\#(honestID)"}"#)
        #expect(honestRacer["board"] as? [String] != targetBoard)
        let before = try target.digests()
        let mallory = try scene.admit(from: "127.0.0.46")
        let offset = target.log().utf8.count
        for _ in 0..<Self.repetitions {
            let p = try AdversaryPeer(port: port, from: "127.0.0.46", circle: circle, identity: mallory)
            p.sendHello(version: 14)
            p.send(ops: [
                Forge.op(author: mallory, circle: circle, game: game, payload: .reveal(CellRuns(cells: [0]))),
                Forge.op(author: mallory, circle: circle, game: game, payload: .resign),
                Forge.op(author: mallory, circle: circle, game: game, payload: .players([mallory.peerID])),
            ])
            p.send(sync: .summary([game: VersionVector()], wantsReply: true))
            let answer = p.nextSync { if case .ops = $0 { true } else { false } }
            #expect(answer.map { Self.games(in: $0).contains(game) } == true, "the daemon did not send the race to a peer of version 14")
        }
        expectLoggedOnce(target, since: offset, ["refused ops", "reason=notPlayer", "peer=\(mallory.peerID.shortDescription)"], what: "a non-racer's ops")
        // A peer of version 13 would refuse the race's genesis: it gets the other game only.
        let older = try AdversaryPeer(port: port, from: "127.0.0.47", circle: circle, identity: SigningIdentity())
        older.sendHello(version: 13)
        older.send(sync: .summary([:], wantsReply: true))
        let olderGets = older.nextSync { if case .ops = $0 { true } else { false } }.map(Self.games(in:))
        #expect(olderGets == [try #require(GameID(hex: scene.game))], "a peer of version 13 was sent \(String(describing: olderGets))")
        #expect(try target.digests() == before)
        #expect(try scene.honest.digests()[gameText] == before[gameText])
        #expect(try scene.stillServes() == nil)
    }

    /// The games an ops message carries ops of.
    static func games(in message: SyncMessage) -> Set<GameID> {
        guard case .ops(let segments) = message else { return [] }
        return Set(segments.compactMap { $0.ops.first?.gameID })
    }

    /// Mallory holds the circle's first key (a device of the circle, or one
    /// removed, keeps it) and signs a founding record, then moves. Founding
    /// closed when the circle was made: the record is refused, she is
    /// listed nowhere, and her move is refused as not a member's.
    /// A key holder sends membership records faster than they are checked
    /// (each a founding of its own, signed): a link's messages are checked
    /// one at a time, and past 16 waiting the link is dropped, saying so,
    /// where each used to start a task of its own.
    @Test func membershipRecordsSentFasterThanTheyAreCheckedDropTheLink() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        let (target, port, circle) = (scene.target, scene.port, scene.circle)
        let mallory = SigningIdentity()
        let batches = (0..<40).map { batch in
            (0..<1_000).map { i in
                MembershipRecord(
                    signing: mallory, circle: CircleID(firstKey: circle), madeMillis: UInt64(batch * 1_000 + i + 1), seq: 1, previous: nil,
                    parents: [], change: .found(proof: circle.membershipProof(for: mallory.peerID))
                ).encoded
            }
        }
        let offset = target.log().utf8.count
        let m = try AdversaryPeer(port: port, from: "127.0.0.45", circle: circle, identity: mallory)
        m.sendHello(version: PeerCapabilities.currentVersion)
        for batch in batches { m.send(membership: batch) }
        #expect(m.isClosed(within: 30), "a link sending records faster than they are checked was kept")
        // The complaint, once (the node's line of the link's end says the reason again).
        expectLoggedOnce(
            target, since: offset, ["dropping a peer that sent a malformed membership record", "more membership messages than are checked"],
            what: "the flood of records")
        #expect(try scene.stillServes() == nil)
    }

    @Test func aKeyHoldersFoundingIsRefusedAndItsOpsToo() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        let (target, port, circle) = (scene.target, scene.port, scene.circle)
        let game = try #require(GameID(hex: scene.game))
        let mallory = SigningIdentity()
        let founding = MembershipRecord(
            signing: mallory, circle: CircleID(firstKey: circle), madeMillis: 1, seq: 1, previous: nil, parents: [],
            change: .found(proof: circle.membershipProof(for: mallory.peerID)))
        let offset = target.log().utf8.count
        let m = try AdversaryPeer(port: port, from: "127.0.0.40", circle: circle, identity: mallory)
        m.sendHello(version: PeerCapabilities.currentVersion)
        m.send(membership: [founding.encoded])
        expectLoggedOnce(target, since: offset, ["refused membership records", "reason=founding"], what: "a second founding")
        let members = (try target.result(#"{"id":1,"command":"circle"}"#))["members"] as? [[String: Any]] ?? []
        #expect(!members.contains { $0["peer"] as? String == mallory.peerID.description })
        let rows = try target.result(#"{"id":1,"command":"show","game":"\#(scene.game)"}"#)["board"] as? [String] ?? []
        let cell = try #require(rows.joined().enumerated().first { $0.element == "#" }?.offset)
        m.send(ops: [Forge.op(author: mallory, circle: circle, game: game, seq: 1, lamport: 1_000, payload: .mark(cell: cell, mark: .flag))])
        expectLoggedOnce(target, since: offset, ["refused ops", "reason=notMember", "author=\(mallory.peerID.shortDescription)"], what: "a non-member's op")
        let after = try target.result(#"{"id":1,"command":"show","game":"\#(scene.game)"}"#)["board"] as? [String] ?? []
        #expect(Array(after.joined()).dropFirst(cell).first == "#")
        #expect(try scene.stillServes() == nil)
    }

    /// A holder of the circle key that no admission names links (before any
    /// rekey it can) and sends a profile, a presence note and a share of
    /// played time of 34 years: none is kept, shown or passed on, each is
    /// logged. A member's share is taken only up to how long the game has
    /// lasted: a modest one counts, one of 34 years is refused.
    @Test func notesComeOnlyFromMembersAndSharesOnlyAsLongAsTheGame() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        let (target, port, circle) = (scene.target, scene.port, scene.circle)
        let game = try #require(GameID(hex: scene.game))
        let years: UInt64 = 34 * 365 * 86_400_000
        func elapsed() throws -> Double {
            (try target.result(#"{"id":1,"command":"show","game":"\#(scene.game)"}"#)["elapsedMillis"] as? Int).map { Double($0) / 1000 } ?? -1
        }
        let before = try elapsed()
        let offset = target.log().utf8.count
        let mallory = SigningIdentity()
        let m = try AdversaryPeer(port: port, from: "127.0.0.41", circle: circle, identity: mallory)
        m.sendHello(version: PeerCapabilities.currentVersion)
        m.send(message: PeerMessage.profile(ProfileNote(signing: mallory, serial: 1, name: "Mallory", colour: 3)).encoded)
        m.send(message: PeerMessage.presence(PresenceNote(signing: mallory, serial: 1, spot: nil)).encoded)
        let share = try #require(PlayNote(signing: mallory, game: game.bytes, serial: 1, earlier: years, periods: []))
        m.send(message: PeerMessage.play(share).encoded)
        expectLoggedOnce(
            target, since: offset, ["refused a profile", "its author is not a member", "author=\(mallory.peerID.shortDescription)"],
            what: "a stranger's profile")
        expectLoggedOnce(target, since: offset, ["refused a share of played time", "author=\(mallory.peerID.shortDescription)"], what: "a stranger's share")
        expectLoggedOnce(target, since: offset, ["refused a presence note", "author=\(mallory.peerID.shortDescription)"], what: "a stranger's presence")
        let peers = try target.result(#"{"id":1,"command":"peers","all":true}"#)["peers"] as? [[String: Any]] ?? []
        #expect(!peers.contains { $0["name"] as? String == "Mallory" }, "a stranger's name is shown: \(peers)")
        #expect(try elapsed() == before, "a stranger's share changed the game's time")

        // A member: a share of a few seconds counts, one of 34 years does not.
        let mel = try scene.admit(from: "127.0.0.42")
        let link = try AdversaryPeer(port: port, from: "127.0.0.42", circle: try target.circle(), identity: mel)
        link.sendHello(version: PeerCapabilities.currentVersion)
        let modest = try #require(PlayNote(signing: mel, game: game.bytes, serial: 1, earlier: 4_000, periods: []))
        link.send(message: PeerMessage.play(modest).encoded)
        #expect(eventually(20) { (try? elapsed()).map { $0 >= before + 4 && $0 < 3_600 } == true }, "a member's share was not counted")
        let counted = try elapsed()
        let offset2 = target.log().utf8.count
        let huge = try #require(PlayNote(signing: mel, game: game.bytes, serial: 2, earlier: years, periods: []))
        link.send(message: PeerMessage.play(huge).encoded)
        expectLoggedOnce(
            target, since: offset2, ["refused a share of played time", "more time than the game has lasted"], what: "a member's share of 34 years")
        #expect(try elapsed() == counted)
        #expect(try scene.stillServes() == nil)
    }

    /// Address notes (protocol 17): a stranger's is refused before anything
    /// is dialled, logged once, its link kept; a member's naming its own
    /// loopback (which would have every member dial itself) is malformed:
    /// the link closes, saying why.
    @Test func anAddressNoteIsTakenOnlyFromAMemberAndOnlyOfDialableAddresses() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        let (target, port, circle) = (scene.target, scene.port, scene.circle)
        let offset = target.log().utf8.count
        let mallory = SigningIdentity()
        let m = try AdversaryPeer(port: port, from: "127.0.0.43", circle: circle, identity: mallory)
        m.sendHello(version: PeerCapabilities.currentVersion)
        for serial in 1...3 { m.send(message: PeerMessage.addresses(AddressNote(signing: mallory, serial: UInt64(serial), addresses: [])).encoded) }
        expectLoggedOnce(
            target, since: offset, ["refused a note of addresses", "its author is not a member", "author=\(mallory.peerID.shortDescription)"],
            what: "a stranger's address notes")
        #expect(!m.isClosed(within: 1), "a stranger's well-formed note closed its link")

        let mel = try scene.admit(from: "127.0.0.44")
        let link = try AdversaryPeer(port: port, from: "127.0.0.44", circle: try target.circle(), identity: mel)
        link.sendHello(version: PeerCapabilities.currentVersion)
        // A note of one address, its four bytes turned into 127.0.0.1 (author, serial, count, family, then the address).
        let honest = AddressNote(signing: mel, serial: 1, addresses: [try #require(ListenAddress(host: "198.18.0.250", port: 7455))])
        var crafted = PeerMessage.addresses(honest).encoded
        let at = 1 + 32 + 1 + 1 + 1
        crafted.replaceSubrange(at..<(at + 4), with: [127, 0, 0, 1])
        link.send(message: crafted)
        #expect(link.isClosed(within: 10), "a note naming loopback kept the link up")
        #expect(
            eventually(10) {
                !target.logLines(since: offset, containing: "peer unlinked", "peer=\(mel.peerID.shortDescription)", "not a unicast address").isEmpty
            }, "\(target.log(since: offset))")
        #expect(try scene.stillServes() == nil)
    }

    /// Mallory's device joins with an invitation, moves, and is removed. Its
    /// link closes; with the identity it keeps it is refused after the
    /// handshake, and so is a new identity holding the old key that signs a
    /// founding record. Its first move stays.
    @Test func aRemovedDeviceIsRefusedWhateverKeyItShows() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        let (target, port, circle) = (scene.target, scene.port, scene.circle)
        let mal = try TargetDaemon(name: "mal")
        defer { mal.cleanup() }
        try mal.start()
        try mal.join(target, port: port)
        _ = try mal.result(#"{"id":1,"command":"connect","address":"127.0.0.1:\#(port)"}"#)
        let mallory = try mal.identity()
        func members() -> Set<String> {
            Set(((try? target.result(#"{"id":1,"command":"circle"}"#))?["members"] as? [[String: Any]] ?? []).compactMap { $0["peer"] as? String })
        }
        #expect(members().contains(mallory.peerID.description))
        #expect(eventually(30) { (try? mal.digests()[scene.game]) != nil && (try? mal.digests()[scene.game]) == (try? target.digests()[scene.game]) })
        // Mallory flags a covered cell: that move stays.
        #expect(try mal.flagFresh(game: scene.game))
        #expect(eventually(20) { (try? target.digests()[scene.game]) == (try? mal.digests()[scene.game]) })
        // The target's player removes her. Her own daemon may dial again
        // before the wire client below does: the refusal is logged once a
        // minute per device, for whichever comes first.
        var offset = target.log().utf8.count
        let removal = try target.result(#"{"id":1,"command":"circle-remove","device":"\#(mallory.peerID.description)"}"#)
        #expect(removal["keptOps"] as? Int == 1)
        #expect(eventually(10) { target.linkedPeers() == 1 }, "the removed device's link stayed open")
        for _ in 0..<Self.repetitions {
            if let again = try? AdversaryPeer(port: port, from: "127.0.0.40", circle: circle, identity: mallory) {
                again.sendHello(version: PeerCapabilities.currentVersion)
                #expect(again.isClosed(within: 5), "the removed device linked again")
            }
        }
        expectLoggedOnce(target, since: offset, ["refused a device that is not in the circle", mallory.peerID.shortDescription], what: "the removed device")
        offset = target.log().utf8.count
        let puppet = SigningIdentity()
        let founding = MembershipRecord(
            signing: puppet, circle: CircleID(firstKey: circle), madeMillis: 1, seq: 1, previous: nil, parents: [],
            change: .found(proof: circle.membershipProof(for: puppet.peerID)))
        for _ in 0..<Self.repetitions {
            if let p = try? AdversaryPeer(port: port, from: "127.0.0.42", circle: circle, identity: puppet) {
                p.sendHello(version: PeerCapabilities.currentVersion)
                p.send(membership: [founding.encoded])
                #expect(p.isClosed(within: 5), "a new identity with the old key linked")
            }
        }
        expectLoggedOnce(target, since: offset, ["refused a device that is not in the circle", puppet.peerID.shortDescription], what: "a new identity")
        #expect(!members().contains(puppet.peerID.description) && !members().contains(mallory.peerID.description))
        #expect(try scene.stillServes() == nil)
    }

    /// A holder of an invitation's key (the code's holder, or anyone who
    /// read the records) gets an invitation link that takes one request:
    /// saying nothing, or anything else, it is closed; a request signed by
    /// another key is refused; the invitation stays open for its holder.
    @Test func anInvitationLinkTakesOneSignedRequestAndNothingElse() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        let code = try #require(try scene.target.result(#"{"id":1,"command":"invite"}"#)["code"] as? String)
        guard let secret = try InviteCode.read(code).secret else {
            Issue.record("invite printed no invitation code")
            return
        }
        let key = InvitationSecret.handshakeKey(for: secret.identity.peerID)
        // Saying nothing but pings (which keep a member's link alive): closed
        // at the handshake time limit (10 s) all the same.
        let silent = try AdversaryPeer(port: scene.port, from: "127.0.0.50", circle: key)
        let opened = Date()
        var closed = false
        for _ in 0..<15 where !closed {
            _ = silent.send(message: [2, 0, 0, 0, 0, 0, 0, 0, 1])
            closed = silent.isClosed(within: 1)
        }
        let lived = Date().timeIntervalSince(opened)
        #expect(closed && lived > 8 && lived < 12, "the invitation link lived \(lived) s")
        // A hello, as on a member's link: closed at once.
        let talker = try AdversaryPeer(port: scene.port, from: "127.0.0.51", circle: key)
        talker.sendHello(version: 6)
        #expect(talker.isClosed(within: 5))
        // A request signed by a key other than the invitation's: refused, closed.
        let forger = try AdversaryPeer(port: scene.port, from: "127.0.0.52", circle: key)
        let other = SigningIdentity()
        let signature = other.sign(InvitationSecret.admissionMessage(joining: forger.identity.peerID, member: scene.targetID))
        _ = forger.send(message: [9] + secret.identity.peerID.bytes + signature.bytes)
        #expect(forger.isClosed(within: 5))
        // The invitation is still open.
        let listed = try scene.target.result(#"{"id":1,"command":"invitations"}"#)["invitations"] as? [[String: Any]] ?? []
        #expect(listed.first?["state"] as? String == "open")
        #expect(try scene.stillServes() == nil)
    }

    @Test func aMembersValidGameWithExtremeClocksIsServedWithoutHarm() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        let (target, port, circle) = (scene.target, scene.port, scene.circle)
        // A genesis and a move stamped at the end of time, and a move at its
        // very beginning: odd, but signed and chained by a member, so kept.
        let member = try scene.admit(from: "127.0.0.36")
        let author = OpAuthor(identity: member, circle: circle)
        let generated = try Generator.generate(try GameParameters(preset: .expert), seed: 9)
        let genesis = try author.genesis(
            parameters: generated.parameters, layout: generated.layout, seed: 9, questionMarks: true, createdAtMillis: .max)
        var replica = Replica(circle: circle)
        replica.insert(genesis)
        let game = try #require(replica.games[genesis.gameID])
        let covered = try #require((0..<480).first { !(game.state?.board.isRevealed($0) ?? true) })
        let flag = try #require(try author.setMark(.flag, on: covered, in: game, atMillis: 0))
        let p = try AdversaryPeer(port: port, from: "127.0.0.36", circle: circle, identity: member)
        p.sendHello()
        p.send(sync: .ops([try #require(OpSegment(verifiedOps: [genesis, flag]))]))
        let id = genesis.gameID.description
        #expect(eventually(15) { try target.digests()[id] != nil }, "the member's game was not kept")
        let view = try target.result(#"{"id":1,"command":"show","game":"\#(id)"}"#)
        #expect(view["flags"] as? Int == 1)
        #expect(try target.request(#"{"id":1,"command":"games"}"#)["ok"] as? Bool == true)
        #expect(try target.request(#"{"id":1,"command":"scores"}"#)["ok"] as? Bool == true)
        #expect(try target.flagFresh(game: id))
        #expect(try scene.stillServes() == nil)
        #expect(eventually(30) { try scene.honest.digests()[id] == target.digests()[id] })

        // A game begun at the start of time and lost at its end, and a share
        // of its played time: the bound on the share (how long the game
        // lasted, and an hour) is past the largest number and saturates.
        let long = try author.genesis(
            parameters: generated.parameters, layout: generated.layout, seed: 10, questionMarks: true, createdAtMillis: 0)
        replica.insert(long)
        let mine = try #require(generated.layout.mineIndices.first)
        let longGame = try #require(replica.games[long.gameID])
        let lost = try #require(try author.reveal(mine, in: longGame, atMillis: .max - 1))
        p.send(sync: .ops([try #require(OpSegment(verifiedOps: [long, lost]))]))
        let longID = long.gameID.description
        #expect(eventually(15) { try target.digests()[longID] != nil }, "the member's long game was not kept")
        let offset = target.log().utf8.count
        let share = try #require(PlayNote(signing: member, game: long.gameID.bytes, serial: 1, earlier: 4_000, periods: []))
        p.send(message: PeerMessage.play(share).encoded)
        // A share of a game not held, behind it on the link, is refused and
        // says so: the share before it was taken in, and the daemon lives.
        let probe = try #require(PlayNote(signing: member, game: [UInt8](repeating: 0xEE, count: 16), serial: 1, earlier: 1, periods: []))
        p.send(message: PeerMessage.play(probe).encoded)
        expectLoggedOnce(target, since: offset, ["refused a share of played time"], what: "the share behind the long game's")
        #expect(try scene.stillServes() == nil)
    }

    @Test func floodsAndStalledHandshakesDoNotStarveHonestPeersOrLeak() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        let (target, port, circle) = (scene.target, scene.port, scene.circle)
        let descriptors = target.openDescriptors()
        let before = try target.digests()

        // 300 connections at once from one address, saying nothing.
        var offset = target.log().utf8.count
        let flood = try (0..<300).map { _ in try WireClient(port: port, from: "127.0.0.40") }
        // Meanwhile: a member from elsewhere links, the daemon serves its player and its peer.
        let member = try AdversaryPeer(port: port, from: "127.0.0.41", circle: circle)
        member.sendHello()
        #expect(member.nextSync() != nil)
        #expect(try scene.stillServes() == nil)
        // Each pushes out the oldest of its address: all but the last few are
        // closed at once, the rest when their handshake times out.
        let closed = flood.filter { $0.waitForClose(seconds: 0.05) }.count
        #expect(closed >= 300 - 8 - 1, "only \(closed) of 300 idle connections closed early")
        #expect(flood.allSatisfy { $0.waitForClose(seconds: 40) })
        expectLoggedOnce(target, since: offset, ["remote=127.0.0.40:"], what: "the flood")
        #expect(target.log(since: offset).contains("a stalled handshake made room for a newer one"))

        // Handshakes that stall after the first exchange: 8 from one address
        // hold its slots, a 9th pushes out the oldest; the daemon drops them all in time.
        offset = target.log().utf8.count
        var stalled: [WireClient] = []
        for _ in 0..<8 { stalled.append(try stallAfterFirstExchange(port: port, from: "127.0.0.42", circle: circle)) }
        let ninth = try stallAfterFirstExchange(port: port, from: "127.0.0.42", circle: circle)
        #expect(stalled[0].waitForClose(seconds: 2), "a 9th stalled handshake from one address pushes out the oldest")
        stalled.append(ninth)
        let lone = try stallAfterFirstExchange(port: port, from: "127.0.0.43", circle: circle)
        #expect(try scene.stillServes() == nil)
        let other = try AdversaryPeer(port: port, from: "127.0.0.44", circle: circle)
        other.sendHello()
        #expect(other.nextSync() != nil, "a member from another address links while handshakes stall")
        #expect((stalled + [lone]).allSatisfy { $0.waitForClose(seconds: 40) }, "stalled handshakes are dropped after the timeout")
        expectLoggedOnce(target, since: offset, ["remote=127.0.0.42:"], what: "stalls from one address")
        expectLoggedOnce(target, since: offset, ["handshake timed out", "remote=127.0.0.43:"], what: "a lone stall")

        #expect(try target.digests().count == before.count)
        #expect(target.isRunning)
        withExtendedLifetime((member, other)) {}
        #expect(
            eventually(40) { target.openDescriptors() <= descriptors + 2 },
            "descriptors: \(descriptors) before, \(target.openDescriptors()) after")
    }

    /// A connection that sends the first handshake message with the circle
    /// key, reads the daemon's answer, then says nothing more.
    private func stallAfterFirstExchange(port: Int, from source: String, circle: CircleKey) throws -> WireClient {
        let w = try WireClient(port: port, from: source)
        w.sendFrame(SecretHandshakeHello.first(circle))
        guard w.readFrame() != nil else { throw AdversaryError.wire("the daemon did not answer a stalled handshake's first message") }
        return w
    }
}

/// The client's first handshake message for `circle`, from a real handshake.
enum SecretHandshakeHello {
    static func first(_ circle: CircleKey) -> [UInt8] {
        var h = SecretHandshake(role: .client, circle: circle, identity: SigningIdentity())
        return h.start() ?? []
    }
}
