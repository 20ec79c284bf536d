import Foundation
import SweeperCrypto
import SweeperGame
import SweeperTestSupport
import Testing

@testable import SweeperSync

/// A member's move in a game that sleeps on a real `sweeperd` and takes
/// more to wake than one message may cost the event loop: the game is
/// woken off the loop, the member is asked for its summary, and the move
/// goes in when it comes again, and travels on to the other members.
@Suite(.serialized) struct WakeOffLoopTests {
    @Test func aMoveInABigSleepingGameWakesItOffTheLoopAndGoesIn() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        let (target, circle) = (scene.target, scene.circle)
        let member = try scene.admit(from: "127.0.0.50")
        let author = OpAuthor(identity: member, circle: circle)

        // The member's 60×60 game of 4,201 ops: more than one message may read back on the loop.
        let generated = try Generator.generate(try GameParameters(width: 60, height: 60, mines: 300), seed: 5)
        let genesis = try author.genesis(
            parameters: generated.parameters, layout: generated.layout, seed: 5, questionMarks: false, createdAtMillis: 1_790_000_000_000)
        let id = genesis.gameID
        var replica = Replica(circle: circle)
        replica.insert(genesis)
        let covered = try #require(replica.state(of: id)).board
        let cells = (0..<3_600).filter { !covered.isRevealed($0) }
        for i in 0..<4_200 {
            let game = try #require(replica.games[id])
            let op = try #require(try author.setMark(i % 2 == 0 ? .flag : .none, on: cells[0], in: game, atMillis: 1_790_000_000_000 + UInt64(i)))
            replica.insert(op)
        }
        #expect(replica.opCount(of: id) > Replica.wakeBudgetPerMessage)
        let p = try AdversaryPeer(port: scene.port, from: "127.0.0.50", circle: circle, identity: member)
        p.sendHello(version: 8)
        /// Waits (at most `seconds`) for `done`, answering the daemon's pings
        /// meanwhile, as a live peer does (a silent one is dropped).
        func live(_ seconds: Double, until done: () throws -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if (try? done()) == true { return true }
                _ = p.nextSync(seconds: 0.3) { _ in false }
            }
            return false
        }
        // `games` lists without waking anything; `show` (a player's command) wakes the game it shows.
        func listed() throws -> Int { (try target.result(#"{"id":1,"command":"games"}"#)["games"] as? [[String: Any]] ?? []).count }
        func digest() throws -> String? { try target.result(#"{"id":1,"command":"show","game":"\#(id)"}"#)["digest"] as? String }
        for segment in replica.segments(for: id, after: VersionVector()) { p.send(sync: .ops([segment])) }
        #expect(live(30) { try listed() == 2 }, "the member's big game was not kept")
        // Its digest as it is (showing it wakes it), two seconds for its ops
        // to be written (a game sleeps only when the store holds all of it);
        // then twenty small games: the daemon keeps the most recently used
        // awake, and the big one sleeps.
        let before = try #require(try digest())
        _ = live(2) { false }
        for seed in 1...20 {
            let small = try Generator.generate(try GameParameters(preset: .beginner), seed: UInt64(seed))
            let other = try author.genesis(
                parameters: small.parameters, layout: small.layout, seed: UInt64(seed), questionMarks: false, createdAtMillis: 1_790_000_000_000)
            p.send(ops: [other])
        }
        #expect(live(30) { try listed() == 22 }, "the member's small games were not kept")

        // A flag on another cell: refused for now, the game woken off the loop, the member asked again.
        let offset = target.log().utf8.count
        let game = try #require(replica.games[id])
        let move = try #require(try author.setMark(.flag, on: cells[1], in: game, atMillis: 1_790_000_010_000))
        p.send(ops: [move])
        #expect(
            live(30) { !target.logLines(since: offset, containing: "waking games off the event loop").isEmpty },
            "the game was not woken off the loop; log:\n\(target.log(since: offset))")
        #expect(try digest() == before, "the move went in before it came again")
        // As a live peer does: answer each summary that asks with what the daemon lacks (the move), pings answered meanwhile.
        var went = false, asked = 0
        let deadline = Date().addingTimeInterval(30)
        while !went, Date() < deadline {
            if p.nextSync(seconds: 2, where: { if case .summary(_, true) = $0 { return true } else { return false } }) != nil {
                asked += 1
                p.send(ops: [move])
            }
            went = (try? digest() != before) ?? false
        }
        #expect(asked > 0, "the daemon did not ask for the member's summary again")
        #expect(went, "the move did not go in; log:\n\(target.log(since: offset))")
        #expect(eventually(30) { try scene.honest.digests()[id.description] == target.digests()[id.description] }, "the move did not travel on")
        #expect(try scene.stillServes() == nil)
    }
}
