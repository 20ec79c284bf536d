import Foundation
import GRDB
import SweeperConventions

/// The daemon's SQLite database (WAL mode) under its state directory.
///
/// Every write is one transaction committed before the call returns. By
/// default it is committed with `synchronous=FULL` (``Durability/synced``):
/// in WAL mode `NORMAL` survives a killed process but may lose the last
/// commits on power loss, and local moves come at human speed, so the extra
/// fsync per move costs nothing that matters. Ops another peer holds anyway
/// (a peer's own moves) are written ``Durability/deferred``. A database that
/// is damaged, or that a newer version wrote, is refused and never written.
public final class Store: Sendable {
    /// How far a write is on disk when the call returns.
    public enum Durability: Sendable {
        /// Committed and fsynced (`synchronous=FULL`): survives power loss.
        case synced
        /// Committed without an fsync (`synchronous=NORMAL` in WAL mode):
        /// survives a killed process; power loss may lose it until the next
        /// synced write or checkpoint. For data that also lives elsewhere.
        case deferred
    }

    /// The schema version this build writes and understands.
    public static let schemaVersion = 3
    /// The database file name inside the state directory.
    public static let fileName = "sweeper.sqlite"

    /// The database file path.
    public let path: String
    private let pool: DatabasePool

    /// Opens (creating if needed) the store in `directory`, which is made with
    /// mode 0700 if missing; the database files are kept 0600.
    public init(directory: String) throws(StoreError) {
        try Self.prepareDirectory(directory)
        let path = (directory as NSString).appendingPathComponent(Self.fileName)
        self.path = path
        let fm = FileManager.default
        if fm.fileExists(atPath: path) {
            try Self.inspectExisting(path: path)
        }
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(5)
        do {
            let old = umask(0o077)
            defer { umask(old) }
            pool = try DatabasePool(path: path, configuration: config)
        } catch {
            throw Self.classify(error, path: path)
        }
        chmod(path, 0o600)
        do {
            // GRDB sets NORMAL when it turns WAL on; the pool has one writer
            // connection, so this holds for every write.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            try Self.migrator.migrate(pool)
            // Written only when it changes: a start writes nothing to an
            // up-to-date database, so it can start (and serve reads) on a full disk.
            try pool.write { db in
                if try Int.fetchOne(db, sql: "PRAGMA user_version") != Self.schemaVersion {
                    try db.execute(sql: "PRAGMA user_version = \(Self.schemaVersion)")
                }
            }
        } catch {
            try? pool.close()
            switch Self.classify(error, path: path) {
            case .database(let detail): throw .database("migration failed: \(detail)")
            case let other: throw other
            }
        }
    }

    /// Checkpoints the WAL into the database file, then closes the
    /// database; later calls fail. After a clean close the database file
    /// holds every commit by itself (a copy of it is a whole backup): GRDB
    /// closes its writer before its read-only readers, and a read-only
    /// connection closing last cannot checkpoint, so without this the
    /// commits would stay in the `-wal` file.
    public func close() {
        _ = try? pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        try? pool.close()
    }

    // MARK: Opening checks

    private static func prepareDirectory(_ directory: String) throws(StoreError) {
        do {
            try PrivateDirectory.make(directory, tighten: true)
        } catch {
            throw .stateDirectory(path: directory, detail: error.detail)
        }
    }

    /// Looks at an existing file without writing to it: header, integrity, schema version.
    private static func inspectExisting(path: String) throws(StoreError) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .corrupt(path: path, detail: "cannot be read")
        }
        let header = (try? handle.read(upToCount: 100)) ?? Data()
        try? handle.close()
        if header.isEmpty { return }  // an empty file: SQLite treats it as a new database
        guard header.count == 100, header.prefix(16) == Data("SQLite format 3\0".utf8) else {
            throw .corrupt(path: path, detail: "not an SQLite database")
        }
        var config = Configuration()
        config.readonly = true
        let outcome: Result<Void, StoreError>
        do {
            let queue = try DatabaseQueue(path: path, configuration: config)
            defer { try? queue.close() }
            outcome = try queue.read { db in try check(db, path: path) }
        } catch {
            // Only SQLite's own verdict makes a file damaged: a full disk, a
            // read-only file system or an I/O error while opening is said as such.
            switch classify(error, path: path) {
            case .database: outcome = .failure(.corrupt(path: path, detail: "\(error)"))
            case let other: outcome = .failure(other)
            }
        }
        try outcome.get()
    }

    /// Integrity and version checks on a read-only connection.
    private static func check(_ db: Database, path: String) throws -> Result<Void, StoreError> {
        let check = try String.fetchAll(db, sql: "PRAGMA quick_check")
        if check != ["ok"] {
            return .failure(.corrupt(path: path, detail: check.prefix(3).joined(separator: "; ")))
        }
        let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        if version > schemaVersion {
            return .failure(.newerSchema(path: path, found: version, known: schemaVersion))
        }
        if try db.tableExists("grdb_migrations"), try migrator.hasBeenSuperseded(db) {
            return .failure(.newerSchema(path: path, found: max(version, schemaVersion + 1), known: schemaVersion))
        }
        return .success(())
    }

    // MARK: Schema

    /// The setting that holds when this database began keeping played time
    /// (ms since 1970): the games made before then, of which no player's
    /// share is known, keep the time from their creation to their end.
    public static let playTimeSinceSetting = "play.since"

    /// The setting that holds which games this device syncs when chosen at
    /// run time (`all` or `mine`); absent, the configuration decides.
    public static let syncModeSetting = "sync.mode"

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE identity (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    secretKey BLOB NOT NULL,
                    publicKey BLOB NOT NULL,
                    created DATETIME NOT NULL
                );
                CREATE TABLE circle (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    key BLOB NOT NULL,
                    joined DATETIME NOT NULL
                );
                CREATE TABLE settings (
                    key TEXT PRIMARY KEY NOT NULL,
                    value TEXT NOT NULL
                );
                CREATE TABLE peers (
                    peerID TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL,
                    address TEXT,
                    lastSeen DATETIME NOT NULL
                );
                CREATE TABLE games (
                    id TEXT PRIMARY KEY NOT NULL,
                    params BLOB NOT NULL,
                    created DATETIME NOT NULL,
                    lastActivity DATETIME NOT NULL,
                    status TEXT NOT NULL,
                    summary BLOB NOT NULL
                );
                CREATE TABLE ops (
                    rowid INTEGER PRIMARY KEY,
                    gameID TEXT NOT NULL,
                    author BLOB NOT NULL,
                    seq INTEGER NOT NULL,
                    lamport INTEGER NOT NULL,
                    bytes BLOB NOT NULL,
                    UNIQUE (gameID, author, seq)
                );
                CREATE INDEX ops_by_game ON ops (gameID, lamport);
                """)
        }
        // Players' signed profiles (name and colour), the newest of each author.
        migrator.registerMigration("v2-profiles") { db in
            try db.execute(sql: """
                CREATE TABLE profiles (
                    author BLOB PRIMARY KEY NOT NULL,
                    serial INTEGER NOT NULL,
                    note BLOB NOT NULL
                );
                """)
        }
        // Players' signed shares of each game's played time, the newest of each (author, game).
        migrator.registerMigration("v3-play-time") { db in
            try db.execute(sql: """
                CREATE TABLE play_notes (
                    author BLOB NOT NULL,
                    game BLOB NOT NULL,
                    serial INTEGER NOT NULL,
                    note BLOB NOT NULL,
                    PRIMARY KEY (author, game)
                );
                """)
            // Games made before this are timed as before (creation to end) while nobody's share of them is known.
            try db.execute(
                sql: "INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)",
                arguments: [Store.playTimeSinceSetting, String(UInt64(max(0, Date().timeIntervalSince1970 * 1000)))])
        }
        // What this device chose to sync: games it follows or forgot.
        migrator.registerMigration("v4-game-choices") { db in
            try db.execute(sql: """
                CREATE TABLE game_choices (
                    game TEXT PRIMARY KEY NOT NULL,
                    choice TEXT NOT NULL CHECK (choice IN ('follow', 'forget')),
                    changed DATETIME NOT NULL
                );
                """)
        }
        // Who is in the circle: its signed membership records, by circle id;
        // the circle's later keys a member handed over (a device admitted
        // after them was sealed none); the secrets of invitations made here.
        migrator.registerMigration("v5-membership") { db in
            try db.execute(sql: """
                CREATE TABLE membership_records (
                    hash BLOB PRIMARY KEY NOT NULL,
                    circle BLOB NOT NULL,
                    record BLOB NOT NULL,
                    received DATETIME NOT NULL
                );
                CREATE INDEX membership_records_by_circle ON membership_records (circle);
                CREATE TABLE circle_keys (
                    circle BLOB NOT NULL,
                    key BLOB NOT NULL,
                    PRIMARY KEY (circle, key)
                );
                CREATE TABLE invitations (
                    invitation BLOB PRIMARY KEY NOT NULL,
                    circle BLOB NOT NULL,
                    secret BLOB NOT NULL,
                    made DATETIME NOT NULL
                );
                """)
        }
        // Ops that came without a signature over their author's own link (a
        // live push) are kept so, flagged, until a signature vouches for them:
        // a release before this one would drop them on reading, so it is
        // refused this database (schema version 2). Ops stored before were
        // all vouched for by a signature.
        migrator.registerMigration("v6-vouched-ops") { db in
            try db.execute(sql: "ALTER TABLE ops ADD COLUMN vouched INTEGER NOT NULL DEFAULT 0")
        }
        // Games are rebuilt from their ops at start: the summary each commit
        // cached beside a game was never read, so it goes. A release before
        // this one writes it, so it is refused this database (schema 3).
        migrator.registerMigration("v7-no-game-summary") { db in
            try db.execute(sql: "ALTER TABLE games DROP COLUMN summary")
        }
        return migrator
    }

    // MARK: Access helpers

    func write<T>(_ durability: Durability = .synced, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            switch durability {
            case .synced:
                return try pool.write(body)
            case .deferred:
                return try pool.writeWithoutTransaction { db in
                    try db.cachedStatement(sql: "PRAGMA synchronous = NORMAL").execute()
                    var result: T?
                    do {
                        try db.inTransaction(.immediate) {
                            result = try body(db)
                            return .commit
                        }
                    } catch {
                        try db.cachedStatement(sql: "PRAGMA synchronous = FULL").execute()
                        throw error
                    }
                    try db.cachedStatement(sql: "PRAGMA synchronous = FULL").execute()
                    guard let result else { throw StoreError.database("a deferred write produced no result") }
                    return result
                }
            }
        } catch {
            throw Self.classify(error, path: path)
        }
    }

    /// Gives freed space back to the file system (`VACUUM`) and empties the
    /// write-ahead log. It rewrites the whole file: run it off any thread
    /// that must not wait.
    public func compact() throws(StoreError) {
        do {
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "VACUUM")
                try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
        } catch {
            throw Self.classify(error, path: path)
        }
    }

    func read<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
        do { return try pool.read(body) } catch { throw Self.classify(error, path: path) }
    }

    /// Sorts a failure into what a user can act on: a full disk, a read-only
    /// file system, a damaged file, an I/O error, or another database error.
    /// SQLite reports a write refused by a read-only file system (`EROFS`) as
    /// a plain I/O error, and a full disk met while syncing as one too, so
    /// I/O errors are told apart by looking at the file system itself.
    static func classify(_ error: any Error, path: String) -> StoreError {
        if let error = error as? StoreError { return error }
        guard let error = error as? DatabaseError else { return .database("\(error)") }
        let detail = error.message ?? "\(error.resultCode)"
        let directory = (path as NSString).deletingLastPathComponent
        switch error.resultCode {
        case .SQLITE_FULL:
            return .full(path: path, detail: detail)
        case .SQLITE_READONLY:
            return .readOnly(path: path, detail: detail)
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return .corrupt(path: path, detail: detail)
        case .SQLITE_IOERR, .SQLITE_CANTOPEN:
            switch probeWritable(directory) {
            case EROFS: return .readOnly(path: path, detail: "read-only file system; \(detail)")
            case EACCES, EPERM: return .readOnly(path: path, detail: "permission denied; \(detail)")
            case ENOSPC, EDQUOT: return .full(path: path, detail: "no space left on device; \(detail)")
            default: return .ioError(path: path, detail: detail)
            }
        default:
            return .database("\(error)")
        }
    }

    /// Why `directory` cannot take a write, as an `errno` (0 when it can):
    /// its file system's flags and free space, then a one-byte probe file,
    /// removed at once. Some file systems (ext4 after an error) refuse writes
    /// while still reporting themselves writable, hence the probe.
    private static func probeWritable(_ directory: String) -> Int32 {
        var fs = statvfs()
        if statvfs(directory, &fs) == 0 {
            if fs.f_flag & UInt(ST_RDONLY) != 0 { return EROFS }
            if fs.f_bavail == 0 { return ENOSPC }
        }
        let probe = (directory as NSString).appendingPathComponent(".sweeperd-write-probe-\(getpid())")
        let fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return errno }
        defer {
            Glibc.close(fd)
            unlink(probe)
        }
        var byte: UInt8 = 0
        if Glibc.write(fd, &byte, 1) != 1 { return errno }
        if fsync(fd) != 0 { return errno }
        return 0
    }

    /// Runs SQLite's full `PRAGMA integrity_check` on the database at `path`
    /// over a read-only connection (it writes nothing to the database, though
    /// SQLite may rebuild the `-shm` index of a `-wal` left by a crash).
    /// Returns SQLite's report: `["ok"]` for a healthy database.
    public static func integrityCheck(path: String) throws(StoreError) -> [String] {
        var config = Configuration()
        config.readonly = true
        do {
            let queue = try DatabaseQueue(path: path, configuration: config)
            defer { try? queue.close() }
            return try queue.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        } catch {
            throw classify(error, path: path)
        }
    }
}
