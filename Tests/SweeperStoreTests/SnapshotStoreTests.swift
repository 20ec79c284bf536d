import Foundation
import Testing

@testable import SweeperStore

/// Game snapshots (the `v8-game-snapshots` migration): kept only for the
/// ops the store holds, and dropped the moment any op of their game is
/// written, signed or deleted, whatever writes it.
@Suite struct SnapshotStoreTests {
    let a = Data([0xAA]), b = Data([0xBB])

    func snapshot(_ game: String, ops: Int, circle: String = "c1") -> StoredSnapshot {
        StoredSnapshot(gameID: game, circle: Data(circle.utf8), readers: Data([1, 2]), opCount: ops, bytes: Data([9, 9]))
    }

    func games(_ store: Store) throws -> [String] { try store.snapshots().map(\.gameID).sorted() }

    /// A store in `dir` holding one game, g1, of one op.
    func storeHoldingG1(in dir: TempDir) throws -> Store {
        let store = try Store(directory: dir.path)
        let game = StoredGame(
            id: "g1", params: Data("{}".utf8), created: Date(timeIntervalSince1970: 10), lastActivity: Date(timeIntervalSince1970: 10), status: "playing")
        #expect(try store.createGame(game, ops: [StoredOp(gameID: "g1", author: a, seq: 1, lamport: 1, bytes: Data([1]))]))
        return store
    }

    @Test func aSnapshotLastsUntilAnOpOfItsGameChanges() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try Store(directory: dir.path)
        defer { store.close() }
        for id in ["g1", "g2"] {
            let game = StoredGame(
                id: id, params: Data("{}".utf8), created: Date(timeIntervalSince1970: 10), lastActivity: Date(timeIntervalSince1970: 10), status: "playing")
            #expect(try store.createGame(game, ops: [StoredOp(gameID: id, author: a, seq: 1, lamport: 1, bytes: Data(id.utf8))]))
        }
        // A snapshot of ops the store does not hold (two, where it holds one) is not kept.
        #expect(try store.saveSnapshots([snapshot("g1", ops: 1), snapshot("g1", ops: 1, circle: "c2"), snapshot("g2", ops: 2)]) == 2)
        #expect(try games(store) == ["g1", "g1"])
        #expect(try store.snapshots().first { $0.circle == Data("c2".utf8) } == snapshot("g1", ops: 1, circle: "c2"))
        #expect(try store.saveSnapshots([snapshot("g2", ops: 1)]) == 1)
        #expect(try games(store) == ["g1", "g1", "g2"])

        // A new op of g2 drops g2's snapshot, and only g2's.
        try store.append([StoredOp(gameID: "g2", author: b, seq: 1, lamport: 2, bytes: Data("b1".utf8), vouched: true)], updating: "g2", status: nil)
        #expect(try games(store) == ["g1", "g1"])
        #expect(try store.saveSnapshots([snapshot("g2", ops: 2)]) == 1)
        // Its signature coming (the row rewritten, vouched no more) drops it again.
        #expect(try store.saveSignatures([StoredOp(gameID: "g2", author: b, seq: 1, lamport: 2, bytes: Data("b1-signed".utf8))]) == 1)
        #expect(try games(store) == ["g1", "g1"])
        // Forgetting g1 deletes its ops and so its snapshots.
        _ = try store.forgetGame(id: "g1", gameBytes: [1])
        #expect(try store.snapshotCount() == 0)
    }

    @Test func theTriggersHoldForAnyWriterOfTheDatabase() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        do {
            let store = try storeHoldingG1(in: dir)
            #expect(try store.saveSnapshots([snapshot("g1", ops: 1)]) == 1)
            store.close()
        }
        // Another program (the sqlite3 shell, an older build) adds an op: the snapshot goes with it.
        let db = try SQLiteConnection(path: dir.dbPath)
        try db.execute("INSERT INTO ops (gameID, author, seq, lamport, bytes) VALUES ('g1', x'BB', 1, 2, x'02')")
        #expect(try db.scalar("SELECT count(*) FROM game_snapshots", as: Int.self) == 0)
        db.close()
    }

    @Test func aFrozenBoardGoesWithItsSnapshotAndIsReadAlone() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try storeHoldingG1(in: dir)
        defer { store.close() }
        var row = snapshot("g1", ops: 1)
        row.board = Data([7, 7, 7])
        #expect(try store.saveSnapshots([row, snapshot("g1", ops: 1, circle: "c2")]) == 2)
        #expect(try store.frozenBoard(game: "g1", circle: Data("c1".utf8)) == Data([7, 7, 7]))
        #expect(try store.frozenBoard(game: "g1", circle: Data("c2".utf8)) == nil, "kept without one")
        #expect(try store.frozenBoard(game: "g2", circle: Data("c1".utf8)) == nil)
        // A start reads the snapshots alone, never their boards.
        #expect(try store.snapshots().allSatisfy { $0.board == nil })
        // A snapshot written again without a board leaves none.
        #expect(try store.saveSnapshots([snapshot("g1", ops: 1)]) == 1)
        #expect(try store.frozenBoard(game: "g1", circle: Data("c1".utf8)) == nil)
        #expect(try store.saveSnapshots([row]) == 1)
        // A new op drops the board with the snapshot.
        try store.append([StoredOp(gameID: "g1", author: b, seq: 1, lamport: 2, bytes: Data([2]))], updating: "g1", status: nil)
        #expect(try store.frozenBoard(game: "g1", circle: Data("c1".utf8)) == nil)
    }

    @Test func aDatabaseOfTheReleaseBeforeFrozenBoardsKeepsItsSnapshots() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        do {
            let store = try storeHoldingG1(in: dir)
            store.close()
        }
        // The table as the release before wrote it: no board column, its migration not run, a snapshot in it.
        let db = try SQLiteConnection(path: dir.dbPath)
        try db.execute(
            """
            ALTER TABLE game_snapshots DROP COLUMN board;
            DELETE FROM grdb_migrations WHERE identifier = 'v9-frozen-boards';
            INSERT INTO game_snapshots (game, circle, readers, opCount, snapshot) VALUES ('g1', x'6331', x'0102', 1, x'0909');
            """)
        db.close()
        let store = try Store(directory: dir.path)
        defer { store.close() }
        #expect(try store.snapshots() == [snapshot("g1", ops: 1)])
        #expect(try store.frozenBoard(game: "g1", circle: Data("c1".utf8)) == nil)
        var row = snapshot("g1", ops: 1)
        row.board = Data([7])
        #expect(try store.saveSnapshots([row]) == 1)
        #expect(try store.frozenBoard(game: "g1", circle: Data("c1".utf8)) == Data([7]))
    }
}
