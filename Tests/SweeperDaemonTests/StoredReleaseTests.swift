import Foundation
import NIOPosix
import SweeperControl
import SweeperConventions
import Testing

@testable import SweeperDaemon
@testable import SweeperStore

/// Databases written by earlier releases, kept as SQL dumps in `Fixtures/`
/// with the digests each release showed:
///
/// - 2026-11-23 (schema migrations v1 to v5, every op stored with its own
///   signature): three games, one lost, one archived, one made by another
///   device with moves by both;
/// - 2026-11-25 (migrations to v6, schema 2, with a games summary column):
///   the same kinds of games, and moves another device pushed live, kept
///   unsigned (vouched) because that device died before signing them;
/// - 2026-11-25-races (migrations to v7, schema 3, the last written through
///   the GRDB library): a lost game (archived), a game another device made
///   with moves by both, and a race both racers gave up.
///
/// Whatever the store's format becomes, each must open, migrate, show the
/// same games in the same state, and take new moves that survive a restart.
@Suite struct StoredReleaseTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// A state directory holding the fixture database of `release`, and the digests that release showed.
    static func restoredDirectory(_ release: String) throws -> (String, [String: String]) {
        let directory = NSTemporaryDirectory() + "sweeper-release-\(UUID().uuidString)"
        try PrivateDirectory.make(directory, tighten: true)
        let sql = try String(contentsOf: fixtures.appendingPathComponent("database-\(release).sql"), encoding: .utf8)
        let connection = try SQLiteConnection(path: directory + "/" + Store.fileName)
        try connection.execute(sql)
        connection.close()
        let json = try Data(contentsOf: fixtures.appendingPathComponent("database-\(release).digests.json"))
        let digests = try JSONDecoder().decode([String: String].self, from: json)
        return (directory, digests)
    }

    /// How many ops a database holds, and how many of them are held unsigned (vouched for by their link only).
    static func opCounts(_ directory: String) throws -> (all: Int, vouchedOnly: Int) {
        let db = try SQLiteConnection(path: directory + "/" + Store.fileName, readOnly: true)
        defer { db.close() }
        let all = try db.scalar("SELECT count(*) FROM ops", as: Int.self) ?? 0
        let flagged = try db.columnNames(in: "ops").contains("vouched")
        return (all, flagged ? try db.scalar("SELECT count(*) FROM ops WHERE vouched = 1", as: Int.self) ?? 0 : 0)
    }

    @Test(arguments: ["2026-11-23", "2026-11-25", "2026-11-25-races"])
    func aDatabaseOfAnEarlierReleaseOpensWithItsGamesAsTheyWere(_ release: String) async throws {
        let (directory, digests) = try Self.restoredDirectory(release)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let written = try Self.opCounts(directory)
        let store = try Store(directory: directory)
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let core = try await DaemonFixture.daemon(store: store, directory: directory, loop: loop)
        #expect(digests.count == 3)
        for (game, digest) in digests {
            let view = try await show(core.router, game)
            #expect(view.digest == digest, "game \(game)")
        }
        let listed: Commands.Games.Result = try await result(core.router, #"{"id":1,"command":"games"}"#)
        let archived: Commands.Games.Result = try await result(core.router, #"{"id":2,"command":"games","archived":true}"#)
        #expect(listed.games.count == 2 && archived.games.count == 3)
        // The same digests mean the same results, times and assistance;
        // the lost game now has its ending, derived from its old ops, and
        // the records answer over the old games.
        // A race's boards end without a mine tripped when their racers give up: the game lost by a mine is the one read.
        let lost = try #require(archived.games.first { $0.status == .lost && $0.race == nil })
        let lostView = try await show(core.router, lost.game)
        let ending = try #require(lostView.ending)
        #expect(ending.trippedByName != nil && ending.trippedCell != nil && ending.threeBV > 0 && ending.clicks > 1, "\(ending)")
        #expect(lostView.seeded == nil && lostView.hints == nil && lostView.assisted == lost.assisted)
        let scores: Commands.Scores.Result = try await result(core.router, #"{"id":9,"command":"scores"}"#)
        #expect(scores.classes != nil)

        // A new move in the game another device made, then a restart.
        let game = try #require(listed.games.first { $0.status == .playing && $0.race == nil }?.game)
        let before = try await show(core.router, game)
        let row = try #require(before.board.firstIndex { $0.contains("#") })
        let column = try #require(Array(before.board[row]).firstIndex(of: "#"))
        _ = try await result(core.router, #"{"id":3,"command":"flag","game":"\#(game)","x":\#(column),"y":\#(row)}"#, as: Commands.MoveResult.self)
        let after = try await show(core.router, game)
        #expect(after.flags == before.flags + 1 && after.digest != before.digest)
        await core.network.node.shutdown()

        let again = try await DaemonFixture.daemon(store: store, directory: directory, loop: loop)
        let reloaded = try await show(again.router, game)
        #expect(reloaded.digest == after.digest)
        await again.network.node.shutdown()
        // The first start of this release wrote each game down; the next reads them so, and shows the same.
        let third = try await DaemonFixture.daemon(store: store, directory: directory, loop: loop)
        let load = await third.service.engine.loaded
        #expect(load.fromSnapshots == 3 && load.replayed == 0, "\(load)")
        for (game, digest) in digests {
            let shown = try await show(third.router, game)
            #expect(game == after.game ? shown.digest == after.digest : shown.digest == digest, "game \(game) from its snapshot")
        }
        let thirdArchived: Commands.Games.Result = try await result(third.router, #"{"id":2,"command":"games","archived":true}"#)
        #expect(thirdArchived.games.count == 3)
        await third.network.node.shutdown()
        store.close()

        // Migrated: this release's schema (no summary cached beside a game),
        // every op the old release wrote kept, flagged as it was, and the flag made here.
        let db = try SQLiteConnection(path: directory + "/" + Store.fileName, readOnly: true)
        let version = try db.scalar("PRAGMA user_version", as: Int.self)
        let summaryKept = try db.columnNames(in: "games").contains("summary")
        db.close()
        #expect(version == Store.schemaVersion && Store.schemaVersion == 3)
        #expect(!summaryKept)
        let migrated = try Self.opCounts(directory)
        #expect(migrated.all == written.all + 1 && migrated.vouchedOnly == written.vouchedOnly)
        if release == "2026-11-25" { #expect(written.vouchedOnly > 0, "the fixture holds no unsigned op") }
        if release == "2026-11-25-races" {
            // The release that wrote it had races: one of its games is a race both racers gave up.
            #expect(archived.games.contains { $0.race != nil && $0.status == .lost })
        }
    }

    /// The circle of a release before roles (its device founded it with a
    /// record of version 1) keeps working: this device is its founder, the
    /// invitation it made is still open, and what it does now (an
    /// invitation) is a record of version 2 that is there after a restart.
    @Test(arguments: ["2026-11-23", "2026-11-25", "2026-11-25-races"])
    func aCircleOfAnEarlierReleaseMigratesWithItsDeviceAsFounder(_ release: String) async throws {
        let (directory, _) = try Self.restoredDirectory(release)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store(directory: directory)
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let core = try await DaemonFixture.daemon(store: store, directory: directory, loop: loop)
        let circle: Commands.Circle.Result = try await result(core.router, #"{"id":1,"command":"circle"}"#)
        let me = try #require(circle.members.first { $0.thisDevice })
        #expect(me.role == "founder" && me.founder)
        let before: Commands.Invitations.Result = try await result(core.router, #"{"id":2,"command":"invitations"}"#)
        if release != "2026-11-23" { #expect(!before.invitations.isEmpty, "the fixture's invitation is gone") }
        let made: Commands.Invite.Result = try await result(core.router, #"{"id":3,"command":"invite"}"#)
        await core.network.node.shutdown()

        let again = try await DaemonFixture.daemon(store: store, directory: directory, loop: loop)
        let reloaded: Commands.Circle.Result = try await result(again.router, #"{"id":4,"command":"circle"}"#)
        #expect(reloaded.members.first { $0.thisDevice }?.role == "founder")
        let after: Commands.Invitations.Result = try await result(again.router, #"{"id":5,"command":"invitations"}"#)
        #expect(after.invitations.count == before.invitations.count + 1)
        #expect(after.invitations.contains { $0.invitation == made.invitation && $0.state == .open })
        await again.network.node.shutdown()
        store.close()
    }
}
