import Foundation
import GRDB
import NIOPosix
import SweeperControl
import SweeperConventions
import SweeperStore
import Testing
@testable import SweeperDaemon

/// A database written by the release of 2026-11-23 (schema migrations v1 to
/// v5, every op stored with its own signature), kept as an SQL dump in
/// `Fixtures/`: three games, one lost, one archived, one made by another
/// device with moves by both. Whatever the store's format becomes, this
/// database must open, migrate, show the same games in the same state, and
/// take new moves that survive a restart.
@Suite struct StoredReleaseTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// A state directory holding the fixture database, and the digests the old release showed.
    static func restoredDirectory() throws -> (String, [String: String]) {
        let directory = NSTemporaryDirectory() + "sweeper-release-\(UUID().uuidString)"
        try PrivateDirectory.make(directory, tighten: true)
        let sql = try String(contentsOf: fixtures.appendingPathComponent("database-2026-11-23.sql"), encoding: .utf8)
        let queue = try DatabaseQueue(path: directory + "/" + Store.fileName)
        try queue.writeWithoutTransaction { db in try db.execute(sql: sql) }
        try queue.close()
        let json = try Data(contentsOf: fixtures.appendingPathComponent("database-2026-11-23.digests.json"))
        let digests = try JSONDecoder().decode([String: String].self, from: json)
        return (directory, digests)
    }

    @Test func aDatabaseOfTheLastReleaseOpensWithItsGamesAsTheyWere() async throws {
        let (directory, digests) = try Self.restoredDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
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

        // A new move in the game another device made, then a restart.
        let game = try #require(listed.games.first { $0.status == .playing }?.id)
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
        store.close()

        // Migrated: this release's schema, and every op the old release wrote vouched for by a signature.
        let queue = try DatabaseQueue(path: directory + "/" + Store.fileName)
        let (version, vouchedFor) = try await queue.read { db in
            (try Int.fetchOne(db, sql: "PRAGMA user_version"), try Int.fetchOne(db, sql: "SELECT count(*) FROM ops WHERE vouched = 0"))
        }
        #expect(version == Store.schemaVersion && Store.schemaVersion == 2)
        // 17 ops of the old release, and the flag made here.
        #expect(vouchedFor == 18)
        try queue.close()
    }
}
