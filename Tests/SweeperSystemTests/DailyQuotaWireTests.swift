import Foundation
import SweeperCrypto
import SweeperGame
import SweeperTestSupport
import Testing
@testable import SweeperSync

/// A member in bad faith fills a real `sweeperd` with its ops, as many as
/// its games can take, as one did with 959 MB in 24 s: past what one
/// author may fill in a day (250,000 ops) the daemon refuses its new ops,
/// logs it once, and `circle` names the device.
@Suite(.serialized) struct DailyQuotaWireTests {
    @Test func aMemberPastADaysOpsIsRefusedAndShown() throws {
        let scene = try AttackScene()
        defer { scene.cleanup() }
        let (target, circle) = (scene.target, scene.circle)
        let member = try scene.admit(from: "127.0.0.51")
        let author = OpAuthor(identity: member, circle: circle)
        // A 300×300 game takes 361,024 ops of one author: more than a day's quota.
        let generated = try Generator.generate(try GameParameters(width: 300, height: 300, mines: 100), seed: 6)
        let genesis = try author.genesis(
            parameters: generated.parameters, layout: generated.layout, seed: 6, questionMarks: false, createdAtMillis: 1_790_000_000_000)
        var replica = Replica(circle: circle)
        replica.insert(genesis)
        let board = try #require(replica.state(of: genesis.gameID)).board
        let cells = (0..<90_000).filter { !board.isRevealed($0) }.prefix(2)
        let proof = circle.membershipProof(for: member.peerID)
        // Flag and unflag one cell, chained; only each segment's last op is signed, as a catch-up's are.
        var previous = genesis.hash
        func segment(_ seqs: ClosedRange<UInt64>, cell: Int) throws -> OpSegment {
            var ops: [Op] = []
            for seq in seqs {
                let op = Op(
                    gameID: genesis.gameID, author: member.peerID, seq: seq, lamport: seq, previous: previous, wallClockMillis: 1_790_000_000_000,
                    membershipProof: proof, payload: .mark(cell: cell, mark: seq % 2 == 0 ? .flag : .none), signature: nil)
                ops.append(op)
                previous = op.hash
            }
            if let last = ops.popLast() { ops.append(last.with(signature: member.sign(Op.signatureDomain + last.canonicalBytes))) }
            return try #require(OpSegment(verifiedOps: ops))
        }
        let p = try AdversaryPeer(port: scene.port, from: "127.0.0.51", circle: circle, identity: member)
        p.sendHello(version: 8)
        p.send(sync: .ops([try #require(OpSegment(verifiedOps: [genesis]))]))
        let offset = target.log().utf8.count
        var seq: UInt64 = 2
        let step: UInt64 = 5_000
        while seq < 260_000 {
            p.send(sync: .ops([try segment(seq...(seq + step - 1), cell: cells[cells.startIndex])]))
            seq += step
        }
        /// Waits (at most `seconds`) for `done`, answering the daemon's pings
        /// meanwhile, as a live peer does (a silent one is dropped).
        func live(_ seconds: Double, until done: () throws -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if (try? done()) == true { return true }
                _ = p.nextSync(seconds: 0.5) { _ in false }
            }
            return false
        }
        func overQuota() throws -> Bool {
            let members = try target.result(#"{"id":1,"command":"circle"}"#)["members"] as? [[String: Any]] ?? []
            return members.contains { $0["peerID"] as? String == member.peerID.description && $0["overDailyQuota"] as? Bool == true }
        }
        #expect(live(120) { try overQuota() }, "circle does not name the member; log:\n\(target.log(since: offset))")
        #expect(target.logLines(since: offset, containing: "more moves in a day").count == 1)
        #expect(live(30) { !target.logLines(since: offset, containing: "refused ops", "reason=overDailyQuota").isEmpty },
                "the ops past the quota were not refused")
        // Its next move, on another cell, changes nothing.
        let before = try #require(try target.digests()[genesis.gameID.description])
        p.send(sync: .ops([try segment(seq...seq, cell: cells[cells.startIndex + 1])]))
        _ = p.nextSync(seconds: 3)
        #expect(try target.digests()[genesis.gameID.description] == before)
        #expect(target.logLines(since: offset, containing: "more moves in a day").count == 1, "the warning was said again")
        #expect(try scene.stillServes() == nil)
    }
}
