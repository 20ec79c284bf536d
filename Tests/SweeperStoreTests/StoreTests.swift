import Foundation
import Testing

@testable import SweeperStore

/// A fresh temporary directory, removed by `cleanup()`.
struct TempDir {
    let path: String
    init() throws {
        path = NSTemporaryDirectory() + "sweeper-store-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    func cleanup() { try? FileManager.default.removeItem(atPath: path) }
    var dbPath: String { path + "/" + Store.fileName }
}

private func mode(_ path: String) throws -> Int {
    let attrs = try FileManager.default.attributesOfItem(atPath: path)
    return (attrs[.posixPermissions] as? Int ?? -1) & 0o777
}

@Suite struct StoreTests {
    @Test func createsSecureWALDatabase() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let state = dir.path + "/state"
        let store = try Store(directory: state)
        defer { store.close() }
        #expect(try mode(state) == 0o700)
        #expect(try mode(dir.dbPath.replacingOccurrences(of: dir.path, with: state)) == 0o600)
        let settings = try store.durabilitySettings()
        #expect(settings.journalMode == "wal")
        #expect(settings.synchronous == 2)  // FULL
    }

    /// A deferred write (a peer's ops) is committed without an fsync and
    /// leaves the connection at FULL for the next write.
    @Test func deferredWritesCommitAndLeaveTheNextWriteSynced() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try Store(directory: dir.path)
        defer { store.close() }
        let a = Data([0xAA])
        let genesis = StoredOp(gameID: "g1", author: a, seq: 1, lamport: 1, bytes: Data("genesis".utf8))
        let game = StoredGame(
            id: "g1", params: Data("{}".utf8), created: Date(timeIntervalSince1970: 10), lastActivity: Date(timeIntervalSince1970: 10), status: "playing")
        #expect(try store.createGame(game, ops: [genesis], durability: .deferred))
        #expect(try store.durabilitySettings().synchronous == 2)
        let added = try store.append(
            [StoredOp(gameID: "g1", author: a, seq: 2, lamport: 2, bytes: Data("a2".utf8))], updating: "g1", status: "won",
            durability: .deferred)
        #expect(added == 1)
        #expect(try store.durabilitySettings().synchronous == 2)
        #expect(try store.ops(gameID: "g1").map(\.seq) == [1, 2])
        #expect(try store.game(id: "g1")?.status == "won")
    }

    @Test func identityCircleSettingsAndPeersPersist() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        do {
            let store = try Store(directory: dir.path)
            #expect(try store.identity() == nil)
            let id = StoredIdentity(
                secretKey: Data(repeating: 7, count: 64), publicKey: Data(repeating: 9, count: 32), created: Date(timeIntervalSince1970: 1000))
            #expect(try store.saveIdentity(id))
            #expect(try store.saveIdentity(StoredIdentity(secretKey: Data([1]), publicKey: Data([2]))) == false)
            try store.setCircleKey(Data(repeating: 3, count: 32))
            try store.setCircleKey(Data(repeating: 4, count: 32))
            try store.setSetting("name", "ada")
            try store.savePeer(StoredPeer(peerID: "p1", name: "bob", address: "10.0.0.1:1", lastSeen: Date(timeIntervalSince1970: 5)))
            try store.savePeer(StoredPeer(peerID: "p1", name: "bobby", address: nil, lastSeen: Date(timeIntervalSince1970: 6)))
            store.close()
        }
        let store = try Store(directory: dir.path)
        defer { store.close() }
        #expect(try store.identity()?.secretKey == Data(repeating: 7, count: 64))
        #expect(try store.circleKey() == Data(repeating: 4, count: 32))
        #expect(try store.setting("name") == "ada")
        #expect(try store.setting("nothing") == nil)
        let peers = try store.peers()
        #expect(peers.count == 1)
        #expect(peers.first?.name == "bobby")
        #expect(peers.first?.address == "10.0.0.1:1")
    }

    @Test func gamesAndOpsAreUniquePerAuthorSeq() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try Store(directory: dir.path)
        defer { store.close() }
        let a = Data([0xAA]), b = Data([0xBB])
        let genesis = StoredOp(gameID: "g1", author: a, seq: 1, lamport: 1, bytes: Data("genesis".utf8))
        let game = StoredGame(
            id: "g1", params: Data("{}".utf8), created: Date(timeIntervalSince1970: 10), lastActivity: Date(timeIntervalSince1970: 10), status: "playing")
        #expect(try store.createGame(game, ops: [genesis]))
        #expect(try store.createGame(game) == false)
        let added = try store.append(
            [
                StoredOp(gameID: "g1", author: a, seq: 2, lamport: 2, bytes: Data("a2".utf8)),
                StoredOp(gameID: "g1", author: b, seq: 1, lamport: 2, bytes: Data("b1".utf8)),
                StoredOp(gameID: "g1", author: a, seq: 2, lamport: 9, bytes: Data("dup".utf8)),
            ], updating: "g1", status: "won", at: Date(timeIntervalSince1970: 20))
        #expect(added == 2)
        #expect(try store.append([genesis]) == 0)
        let ops = try store.ops(gameID: "g1")
        #expect(ops.map { String(decoding: $0.bytes, as: UTF8.self) } == ["genesis", "a2", "b1"])
        let stored = try store.game(id: "g1")
        #expect(stored?.status == "won")
        // Games are rebuilt from their ops: no summary is cached beside them.
        #expect(try !store.read { db in try db.columnNames(in: "games") }.contains("summary"))
        #expect(stored?.lastActivity == Date(timeIntervalSince1970: 20))
        #expect(try store.gameIDs(withPrefix: "g") == ["g1"])
        #expect(try store.gameIDs(withPrefix: "x") == [])
    }

    @Test func refusesGarbageFileAndLeavesItUntouched() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: dir.dbPath))
        #expect {
            _ = try Store(directory: dir.path)
        } throws: { error in
            guard case StoreError.corrupt = error else { return false }
            return "\(error)".contains("damaged")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.dbPath)) == garbage)
    }

    @Test func refusesDamagedPagesAndLeavesThemUntouched() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        do {
            let store = try Store(directory: dir.path)
            for i in 0..<200 {
                try store.append([StoredOp(gameID: "g", author: Data([1]), seq: Int64(i + 1), lamport: 1, bytes: Data(repeating: UInt8(i & 0xff), count: 300))])
            }
            store.close()  // checkpoints the WAL into the main file
        }
        var bytes = try Data(contentsOf: URL(fileURLWithPath: dir.dbPath))
        #expect(bytes.count > 4096 * 4)
        // Scribble over the second page onwards (b-tree pages), keeping the header valid.
        for i in 4096..<(4096 * 3) { bytes[i] = UInt8(truncatingIfNeeded: i &* 131) }
        try bytes.write(to: URL(fileURLWithPath: dir.dbPath))
        #expect {
            _ = try Store(directory: dir.path)
        } throws: { error in
            if case StoreError.corrupt = error { return true }
            return false
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.dbPath)) == bytes)
    }

    @Test func refusesNewerSchemaAndLeavesItUntouched() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        do {
            let store = try Store(directory: dir.path)
            store.close()
        }
        // A newer sweeperd would have bumped user_version and added a migration.
        try runSQLite(dir.dbPath, "PRAGMA user_version = 7; INSERT INTO grdb_migrations VALUES ('v7-future');")
        let before = try Data(contentsOf: URL(fileURLWithPath: dir.dbPath))
        #expect {
            _ = try Store(directory: dir.path)
        } throws: { error in
            guard case let StoreError.newerSchema(_, found, known) = error else { return false }
            return found == 7 && known == Store.schemaVersion && "\(error)".contains("newer")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.dbPath)) == before)
    }

    @Test func refusesUnknownMigrationEvenWithOldUserVersion() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        do { try Store(directory: dir.path).close() }
        try runSQLite(dir.dbPath, "INSERT INTO grdb_migrations VALUES ('v2-future');")
        #expect {
            _ = try Store(directory: dir.path)
        } throws: { error in
            if case StoreError.newerSchema = error { return true }
            return false
        }
    }
    @Test func aDatabaseOfTheFirstSchemaGainsProfilesAndKeepsEverything() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        // The schema the first release wrote, with a row in each table that matters.
        try runSQLite(
            dir.dbPath,
            """
            CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
            INSERT INTO grdb_migrations VALUES ('v1');
            \(firstSchema)
            INSERT INTO settings VALUES ('peer.port', '7456');
            INSERT INTO peers VALUES ('PEER', 'Mum', '198.18.0.2:7455', '2026-11-01 10:00:00.000');
            """)
        let store = try Store(directory: dir.path)
        defer { store.close() }
        #expect(try store.setting("peer.port") == "7456")
        #expect(try store.peers().map(\.name) == ["Mum"])
        #expect(try store.profiles().isEmpty)
        try store.saveProfile(author: [1, 2], serial: 5, note: [9])
        try store.saveProfile(author: [1, 2], serial: 4, note: [8])  // older: kept out
        #expect(try store.profiles() == [[9]])
        #expect(try store.playNotes().isEmpty)
    }

    @Test func aDatabaseWithProfilesGainsPlayedTimeAndDatesItsOlderGames() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        // The schema of the release before played time: the first one and profiles.
        try runSQLite(
            dir.dbPath,
            """
            CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
            INSERT INTO grdb_migrations VALUES ('v1'), ('v2-profiles');
            \(firstSchema)
            \(profilesSchema)
            INSERT INTO profiles VALUES (x'0102', 5, x'09');
            """)
        let before = UInt64(Date().timeIntervalSince1970 * 1000)
        let store = try Store(directory: dir.path)
        defer { store.close() }
        #expect(try store.profiles() == [[9]])
        // Games made before now keep their old time until someone's share of them is known.
        let since = try #require(try store.setting(Store.playTimeSinceSetting).flatMap(UInt64.init))
        #expect(since >= before && since <= UInt64(Date().timeIntervalSince1970 * 1000))
        try store.savePlayNote(author: [1], game: [2], serial: 3, note: [7])
        try store.savePlayNote(author: [1], game: [2], serial: 2, note: [6])  // older: kept out
        try store.savePlayNote(author: [1], game: [3], serial: 1, note: [5])
        #expect(try store.playNotes() == [[7], [5]])
    }

    /// A database of the release before game choices (played time its
    /// newest table) gains them and keeps its games; forgetting a game
    /// leaves none of its bytes in any of the database's files.
    @Test func aDatabaseWithPlayedTimeGainsGameChoicesAndForgetsWithoutATrace() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        try runSQLite(
            dir.dbPath,
            """
            CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
            INSERT INTO grdb_migrations VALUES ('v1'), ('v2-profiles'), ('v3-play-time');
            \(firstSchema)
            \(profilesSchema)
            CREATE TABLE play_notes (author BLOB NOT NULL, game BLOB NOT NULL, serial INTEGER NOT NULL, note BLOB NOT NULL,
                PRIMARY KEY (author, game));
            INSERT INTO settings VALUES ('play.since', '1');
            INSERT INTO games VALUES ('aa', x'7b7d', 0, 0, 'playing', x'7b7d'), ('bb', x'7b7d', 0, 0, 'won', x'7b7d');
            INSERT INTO ops (gameID, author, seq, lamport, bytes) VALUES
                ('aa', x'01', 1, 1, x'5345435245542d4c41594f55542d4f462d4141'),
                ('aa', x'02', 1, 2, x'5345435245542d4d4f56452d4f462d4141'),
                ('bb', x'01', 1, 1, x'4b4545502d4d452d4242');
            INSERT INTO play_notes VALUES (x'01', x'aa', 1, x'5345435245542d504c41592d4f462d4141');
            """)
        let store = try Store(directory: dir.path)
        defer { store.close() }
        #expect(try store.games().map(\.id).sorted() == ["aa", "bb"])
        #expect(try store.gameChoices().isEmpty)
        // Padding, so that the rebuilt file is visibly smaller than the one before.
        try store.append(
            (1...400).map { StoredOp(gameID: "aa", author: Data([3]), seq: Int64($0), lamport: Int64($0), bytes: Data(repeating: 0x5A, count: 200)) })
        let sizeBefore = try fileSize(dir.dbPath) + fileSize(dir.dbPath + "-wal")
        #expect(try store.forgetGame(id: "aa", gameBytes: [0xAA]) == 402)
        #expect(try store.games().map(\.id) == ["bb"])
        #expect(try store.ops(gameID: "aa").isEmpty)
        #expect(try store.ops(gameID: "bb").count == 1)
        #expect(try store.playNotes().isEmpty)
        #expect(try store.gameChoices() == ["aa": false])
        let sizeAfter = try fileSize(dir.dbPath) + fileSize(dir.dbPath + "-wal")
        #expect(sizeAfter < sizeBefore, "the space is given back: \(sizeBefore) → \(sizeAfter) bytes")
        // No byte of the forgotten game is left in the database, its log or its shared memory.
        for suffix in ["", "-wal", "-shm"] {
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: dir.dbPath + suffix))) ?? Data()
            for secret in ["SECRET-LAYOUT-OF-AA", "SECRET-MOVE-OF-AA", "SECRET-PLAY-OF-AA"] {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is still in sweeper.sqlite\(suffix)")
            }
            #expect(bytes.range(of: Data(repeating: 0x5A, count: 200)) == nil)
        }
        #expect((try Data(contentsOf: URL(fileURLWithPath: dir.dbPath))).range(of: Data("KEEP-ME-BB".utf8)) != nil)
        // Following it again is recorded; the choice is one per game.
        try store.followGame(id: "aa")
        #expect(try store.gameChoices() == ["aa": true])
    }
}

extension StoreTests {
    /// A database of the release before membership (game choices its
    /// newest table) gains the membership records and keeps its circle.
    @Test func aDatabaseWithGameChoicesGainsMembershipRecords() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        try runSQLite(
            dir.dbPath,
            """
            CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
            INSERT INTO grdb_migrations VALUES ('v1'), ('v2-profiles'), ('v3-play-time'), ('v4-game-choices');
            \(firstSchema)
            \(profilesSchema)
            CREATE TABLE play_notes (author BLOB NOT NULL, game BLOB NOT NULL, serial INTEGER NOT NULL, note BLOB NOT NULL,
                PRIMARY KEY (author, game));
            CREATE TABLE game_choices (game TEXT PRIMARY KEY NOT NULL, choice TEXT NOT NULL, changed DATETIME NOT NULL);
            INSERT INTO circle VALUES (1, x'c1c1', '2026-11-01 10:00:00.000');
            INSERT INTO game_choices VALUES ('aa', 'forget', '2026-11-01 10:00:00.000');
            """)
        let store = try Store(directory: dir.path)
        defer { store.close() }
        #expect(try store.circleKey() == Data([0xC1, 0xC1]))
        #expect(try store.gameChoices() == ["aa": false])
        #expect(try store.membershipRecords(circle: [1]).isEmpty)
        try store.saveMembershipRecords(circle: [1], [(hash: [7], record: [70]), (hash: [8], record: [80])])
        try store.saveMembershipRecords(circle: [1], [(hash: [7], record: [71])])  // held already: kept as it was
        try store.saveMembershipRecords(circle: [2], [(hash: [9], record: [90])])
        #expect(try store.membershipRecords(circle: [1]) == [[70], [80]])
        #expect(try store.membershipRecords(circle: [2]) == [[90]])
    }

    @Test func aDatabaseOfTheReleaseBeforeLosesTheLamportIndexAndKeepsItsOps() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let ops = [
            StoredOp(gameID: "g1", author: Data([1]), seq: 1, lamport: 5, bytes: Data([1])),
            StoredOp(gameID: "g1", author: Data([2]), seq: 1, lamport: 3, bytes: Data([2])),
            StoredOp(gameID: "g2", author: Data([1]), seq: 1, lamport: 4, bytes: Data([3])),
        ]
        do {
            let store = try Store(directory: dir.path)
            try store.append(ops)
            store.close()
        }
        func lamportIndexes() throws -> [String] {
            let db = try SQLiteConnection(path: dir.dbPath)
            defer { db.close() }
            return try db.column("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'ops_by_game'", as: String.self)
        }
        #expect(try lamportIndexes().isEmpty)
        // The database as the release before left it: the index there, this migration not run.
        try runSQLite(
            dir.dbPath,
            """
            CREATE INDEX ops_by_game ON ops (gameID, lamport);
            DELETE FROM grdb_migrations WHERE identifier = 'v10-ops-without-lamport-index';
            """)
        #expect(try lamportIndexes() == ["ops_by_game"])
        let store = try Store(directory: dir.path)
        defer { store.close() }
        #expect(try lamportIndexes().isEmpty)
        // Every op is there, in the order it was stored, and a game's ops are
        // still found through an index, not by reading the whole table.
        #expect(try store.ops(gameID: "g1").map(\.bytes) == [Data([1]), Data([2])])
        #expect(try store.ops(gameID: "g2").map(\.bytes) == [Data([3])])
        let db = try SQLiteConnection(path: dir.dbPath)
        defer { db.close() }
        let plan = try db.rows("EXPLAIN QUERY PLAN SELECT * FROM ops WHERE gameID = ? ORDER BY rowid", ["g1"]).map { try $0.get("detail") as String }
        #expect(plan.contains { $0.contains("USING INDEX sqlite_autoindex_ops_1 (gameID=?)") }, "\(plan)")
    }
}

private func fileSize(_ path: String) throws -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
}

/// The tables the first release made, as it made them (older releases'
/// databases are built from these in the migration tests).
private let firstSchema = """
    CREATE TABLE identity (id INTEGER PRIMARY KEY CHECK (id = 1), secretKey BLOB NOT NULL, publicKey BLOB NOT NULL, created DATETIME NOT NULL);
    CREATE TABLE circle (id INTEGER PRIMARY KEY CHECK (id = 1), key BLOB NOT NULL, joined DATETIME NOT NULL);
    CREATE TABLE settings (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
    CREATE TABLE peers (peerID TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, address TEXT, lastSeen DATETIME NOT NULL);
    CREATE TABLE games (id TEXT PRIMARY KEY NOT NULL, params BLOB NOT NULL, created DATETIME NOT NULL,
        lastActivity DATETIME NOT NULL, status TEXT NOT NULL, summary BLOB NOT NULL);
    CREATE TABLE ops (rowid INTEGER PRIMARY KEY, gameID TEXT NOT NULL, author BLOB NOT NULL, seq INTEGER NOT NULL,
        lamport INTEGER NOT NULL, bytes BLOB NOT NULL, UNIQUE (gameID, author, seq));
    CREATE INDEX ops_by_game ON ops (gameID, lamport);
    """

/// The table the profiles migration made.
private let profilesSchema = "CREATE TABLE profiles (author BLOB PRIMARY KEY NOT NULL, serial INTEGER NOT NULL, note BLOB NOT NULL);"
