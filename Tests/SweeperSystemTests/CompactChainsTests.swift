import Foundation
import SweeperConventions
import SweeperCrypto
import SweeperMessages
import SweeperTestSupport
import Testing

@testable import SweeperSync

/// Segments in the link's compact form against a real `sweeperd`: a
/// member's device of protocol 15 is caught up in chains messages, which it
/// rebuilds into the target's board; chains that name what the link never
/// gave drop the link, logged once however often they come, and the
/// daemon goes on serving.
@Suite(.serialized) struct CompactChainsTests {
    @Test func aPeerOfVersion15IsCaughtUpInChainsAndCraftedNamesDropIt() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        let (target, port, circle) = (scene.target, scene.port, scene.circle)
        let game = try #require(GameID(hex: scene.game))
        let expected = try target.digests()[scene.game]
        let mallory = try scene.admit(from: "127.0.0.48")

        // Caught up: every sync message the daemon sends goes into a session
        // of this side, as a daemon of version 15 takes it.
        let p = try AdversaryPeer(port: port, from: "127.0.0.48", circle: circle, identity: mallory)
        p.sendHello(version: PeerCapabilities.currentVersion)
        var session = SyncSession()
        session.peer = scene.targetID
        session.liveAuthor = mallory.peerID
        session.peerTakesChains = true
        var replica = Replica(circle: circle)
        for m in session.start(replica: replica) { p.send(sync: m) }
        var chains = 0, ops = 0
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, replica.state(of: game).map({ Hex.encode($0.digest) }) != expected {
            guard let message = p.nextSync(seconds: 5) else { break }
            switch message {
            case .chains(let segments): chains += segments.count
            case .ops(let segments): ops += segments.count
            default: break
            }
            let step = session.receive(message, replica: &replica)
            #expect(step.violation == nil && step.outcome.rejected.isEmpty)
            for reply in step.replies { p.send(sync: reply) }
        }
        #expect(replica.state(of: game).map { Hex.encode($0.digest) } == expected, "the catch-up did not rebuild the target's game")
        #expect(chains > 0 && ops == 0, "segments came \(chains) in chains messages and \(ops) in ops messages")

        // Crafted: an author by a place the daemon's first summary never had,
        // and a game by a number never given. Each drops the link.
        let held = try #require(replica.games[game])
        let creator = try #require(held.state?.creator)
        let segment = try #require(held.segment(of: creator, after: 0))
        // Each by its own member, from its own address: the log says each once.
        let crafted: [(LinkGameRef, LinkSegment.Author, String, SigningIdentity, String)] = [
            (.new(game), .summarized(4_000), "an author its summary did not", mallory, "127.0.0.48"),
            (.numbered(9), .key(creator), "a game never given", try scene.admit(from: "127.0.0.49"), "127.0.0.49"),
        ]
        for (ref, author, reason, member, address) in crafted {
            let offset = target.log().utf8.count
            for _ in 0..<3 {
                let q = try AdversaryPeer(port: port, from: address, circle: circle, identity: member)
                q.sendHello(version: PeerCapabilities.currentVersion)
                q.send(sync: .summary([:], wantsReply: false))
                q.send(sync: .chains([try #require(LinkSegment(segment, game: ref, author: author, previousKnown: false))]))
                #expect(q.isClosed(within: 5), "a chains message naming \(reason) kept the link")
            }
            #expect(eventually(15) { !target.logLines(since: offset, containing: "dropping a peer that sent a malformed sync message", reason).isEmpty })
            let lines = target.logLines(since: offset, containing: "dropping a peer that sent a malformed sync message", reason)
            #expect(lines.count == 1, "\(reason): not logged once:\n\(lines.joined(separator: "\n"))")
        }
        #expect(try target.digests()[scene.game] == expected)
        #expect(try scene.stillServes() == nil)
    }
}
