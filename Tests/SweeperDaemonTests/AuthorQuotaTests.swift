import Foundation
import SweeperControl
import SweeperCrypto
import SweeperGame
import SweeperSync
import Testing

@testable import SweeperDaemon

extension GameService {
    /// Puts a quota of other limits in place (the daemon's are too high to reach in a test).
    func limitQuota(_ quota: AuthorQuota) { authorQuota = quota }
}

/// A member whose ops fill more than a day's quota here: the ops past it
/// are refused (never stored), `circle` says so, its day's end lets it
/// write again, and this device's own player is never counted.
@Suite struct AuthorQuotaTests {
    @Test func aMemberOverItsDailyQuotaIsRefusedShownAndLetOutAfterADay() async throws {
        let f = try await DaemonFixture()
        var (bob, _, bobReplica, game) = try RemoteOpsTests.bobsGame(in: f.circle)
        try await f.admit(bob.identity.peerID)
        await f.service.limitQuota(AuthorQuota(opsLimit: 3))
        let state = try #require(bobReplica.state(of: game))
        let cell = try #require((0..<81).first { !state.board.isRevealed($0) })
        func flag(_ mark: Mark, at millis: UInt64) throws -> [OpSegment] {
            let before = try #require(bobReplica.games[game])
            let op = try #require(try bob.setMark(mark, on: cell, in: before, atMillis: millis))
            bobReplica.insert(op)
            return bobReplica.segments(for: game, after: before.vector)
        }
        var session = SyncSession()
        let opening = bobReplica.segments(for: game, after: VersionVector()) + (try flag(.flag, at: 2_000))
        let taken = try await f.service.receive(.ops(opening), in: &session, now: 100)
        #expect(taken.accepted.count == 2)
        let one = try await f.service.receive(.ops(try flag(.none, at: 3_000)), in: &session, now: 101)
        #expect(one.accepted.count == 1, "under the quota, refused: \(one.rejected.map(\.reason))")
        func shown() async throws -> Bool? {
            let circle = try await result(f.router, #"{"id":1,"command":"circle"}"#, as: Commands.Circle.Result.self)
            return circle.members.first { $0.peer == bob.identity.peerID.description }?.overDailyQuota
        }
        #expect(try await shown() == true)

        // Over it: refused, and not stored.
        let past = try flag(.flag, at: 4_000)
        let refused = try await f.service.receive(.ops(past), in: &session, now: 102)
        #expect(refused.accepted.isEmpty && refused.rejected.map(\.reason) == [.overDailyQuota])
        await f.service.writeRemoteOps()
        #expect(try f.store.ops(gameID: game.description).count == 3)

        // A day after its first op, it writes again.
        let later = try await f.service.receive(.ops(past), in: &session, now: 100 + AuthorQuota.day)
        #expect(later.accepted.count == 1)
        #expect(try await shown() == nil)
        await f.cleanup()
    }

    @Test func theQuotaCountsOpsAndBytesPerAuthorAndForgetsEndedDays() throws {
        let circle = CircleKey()
        let (genesis, run) = try Self.ops(in: circle)
        var quota = AuthorQuota(opsLimit: 4)
        let author = genesis.author
        #expect(quota.count([genesis], exempt: [], now: 0).isEmpty)
        #expect(quota.count(run.prefix(2), exempt: [], now: 1).isEmpty)
        #expect(quota.count(run.prefix(1), exempt: [], now: 2) == [author])
        #expect(quota.used[author]?.bytes ?? 0 >= 4 * 100, "bytes as stored: \(quota.used[author]?.bytes ?? 0)")
        #expect(quota.over(now: AuthorQuota.day - 1) == [author])
        #expect(quota.over(now: AuthorQuota.day).isEmpty && quota.used.isEmpty)
        // This device's own players never count; a quota of bytes counts bytes.
        #expect(quota.count(run + run, exempt: [author], now: 5).isEmpty && quota.used.isEmpty)
        // Room for the genesis as stored and one byte more: the next op goes past it.
        var bytes = AuthorQuota(bytesLimit: genesis.canonicalBytes.count + 65 + 1)
        #expect(bytes.count([genesis], exempt: [], now: 0).isEmpty)
        #expect(bytes.count(run.prefix(1), exempt: [], now: 0) == [author])
    }

    /// A genesis and three flags by one author (Bob's game of the remote-ops tests).
    static func ops(in circle: CircleKey) throws -> (Op, [Op]) {
        let (author, _, bobs, id) = try RemoteOpsTests.bobsGame(in: circle)
        var replica = bobs
        let genesis = try #require(replica.op(in: id, author: author.identity.peerID, seq: 1))
        var run: [Op] = []
        for i in 0..<3 {
            let game = try #require(replica.games[id])
            let cell = try #require((0..<81).first { !(game.state?.board.isRevealed($0) ?? true) })
            let op = try #require(try author.setMark(i % 2 == 0 ? .flag : .none, on: cell, in: game, atMillis: 2_000 + UInt64(i)))
            replica.insert(op)
            run.append(op)
        }
        return (genesis, run)
    }
}
