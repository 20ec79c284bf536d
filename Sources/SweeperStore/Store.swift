import CSQLite
import FoundationEssentials
import SweeperConventions
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
    /// The one connection that writes (WAL mode allows one writer at a time),
    /// `nil` once closed.
    private let writer: Mutex<SQLiteConnection?>
    /// Read-only connections not in use: a read takes one (or opens one)
    /// and gives it back, so reads run beside a write and beside each other,
    /// each on its own snapshot.
    private let idleReaders = Mutex<[SQLiteConnection]>([])
    /// Whether ``close()`` ran: no connection opens after it.
    private let closed = Atomic<Bool>(false)
    /// Whether opening read every page to check it (else a clean close's
    /// stamp said the file was as it left it; see `CleanStamp`).
    public let checkedEveryPage: Bool
    /// When every page was last checked (ms since 1970), for the stamp a clean close leaves.
    let wholeCheckMillis: UInt64

    /// Opens (creating if needed) the store in `directory`, which is made with
    /// mode 0700 if missing; the database files are kept 0600. An existing
    /// database is checked first, every page of it unless a clean close
    /// left it as it is (see ``wholeCheckInterval``).
    public convenience init(directory: String) throws(StoreError) {
        try self.init(directory: directory, nowMillis: UInt64(max(0, Date().timeIntervalSince1970 * 1000)))
    }

    init(directory: String, nowMillis: UInt64) throws(StoreError) {
        try Self.prepareDirectory(directory)
        let path = directory + "/" + Self.fileName
        self.path = path
        var stamp: CleanStamp?
        if FileManager.default.fileExists(atPath: path) {
            stamp = Self.cleanStamp(for: path, nowMillis: nowMillis)
            try Self.inspectExisting(path: path, everyPage: stamp == nil)
        }
        checkedEveryPage = stamp == nil
        wholeCheckMillis = stamp?.checkedMillis ?? nowMillis
        // From here on the file may change: a crash leaves no stamp, and the next open checks every page.
        CleanStamp.remove(for: path)
        let connection: SQLiteConnection
        do {
            let old = umask(0o077)
            defer { umask(old) }
            connection = try SQLiteConnection(path: path)
        } catch {
            throw Self.classify(error, path: path)
        }
        chmod(path, 0o600)
        do {
            // WAL: readers never wait for the writer. The one writer
            // connection commits with an fsync (FULL) unless a write says otherwise.
            try connection.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON")
            try Self.migrate(connection)
            // Written only when it changes: a start writes nothing to an
            // up-to-date database, so it can start (and serve reads) on a full disk.
            if try connection.scalar("PRAGMA user_version", as: Int.self) != Self.schemaVersion {
                try connection.execute("PRAGMA user_version = \(Self.schemaVersion)")
            }
        } catch {
            connection.close()
            switch Self.classify(error, path: path) {
            case .database(let detail): throw .database("migration failed: \(detail)")
            case let other: throw other
            }
        }
        writer = Mutex(connection)
    }

    /// Checkpoints the WAL into the database file, then closes the
    /// database; later calls fail. After a clean close the database file
    /// holds every commit by itself (a copy of it is a whole backup): the
    /// readers close first, and the writer checkpoints before it closes.
    /// A close whose checkpoint took every commit leaves a stamp of the
    /// file, so that the next open need not read every page again.
    public func close() {
        closed.store(true, ordering: .sequentiallyConsistent)
        for reader in idleReaders.withLock({ readers in
            let all = readers
            readers = []
            return all
        }) {
            reader.close()
        }
        let clean = writer.withLock { connection -> Bool in
            guard let open = connection else { return false }
            // (busy, log frames, frames checkpointed): every frame in the file, none left in the log.
            let outcome = try? open.rows("PRAGMA wal_checkpoint(TRUNCATE)").first.map { row in
                (try row.get(0, as: Int.self), try row.get(1, as: Int.self), try row.get(2, as: Int.self))
            }
            open.close()
            connection = nil
            guard let (busy, frames, moved) = outcome ?? nil else { return false }
            return busy == 0 && frames == moved
        }
        if clean, let file = FileIdentity(path: path) {
            _ = CleanStamp(file: file, checkedMillis: wholeCheckMillis).write(for: path)
        }
    }

    // MARK: Opening checks

    private static func prepareDirectory(_ directory: String) throws(StoreError) {
        do {
            try PrivateDirectory.make(directory, tighten: true)
        } catch {
            throw .stateDirectory(path: directory, detail: error.detail)
        }
    }

    /// Looks at an existing file without writing to it: header, integrity
    /// (every page, when `everyPage`), schema version.
    static func inspectExisting(path: String, everyPage: Bool = true) throws(StoreError) {
        guard let header = try? FileDescriptorReader.readAll(path: path, limit: 99) else {
            throw .corrupt(path: path, detail: "cannot be read")
        }
        if header.isEmpty { return }  // an empty file: SQLite treats it as a new database
        guard header.count == 100, header.prefix(16).elementsEqual("SQLite format 3\0".utf8) else {
            throw .corrupt(path: path, detail: "not an SQLite database")
        }
        let outcome: Result<Void, StoreError>
        do {
            let connection = try SQLiteConnection(path: path, readOnly: true)
            defer { connection.close() }
            outcome = try connection.transaction(immediate: false) { db in try check(db, path: path, everyPage: everyPage) }
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
    private static func check(_ db: SQLiteConnection, path: String, everyPage: Bool) throws -> Result<Void, StoreError> {
        if everyPage {
            let check = try db.column("PRAGMA quick_check", as: String.self)
            if check != ["ok"] {
                return .failure(.corrupt(path: path, detail: check.prefix(3).joined(separator: "; ")))
            }
        }
        let version = try db.scalar("PRAGMA user_version", as: Int.self) ?? 0
        if version > schemaVersion {
            return .failure(.newerSchema(path: path, found: version, known: schemaVersion))
        }
        if try db.tableExists(migrationsTable),
            try !Set(db.column("SELECT identifier FROM \(migrationsTable)", as: String.self))
                .isSubset(of: migrations.map(\.identifier))
        {
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

    /// The table that lists the migrations a database has had, by
    /// identifier. It keeps the name the GRDB library gave it, which wrote
    /// this store's databases before: their history reads as it was written.
    static let migrationsTable = "grdb_migrations"

    /// One step of the schema, run once in a database's life.
    struct Migration: Sendable {
        /// Its name in the migrations table.
        var identifier: String
        /// What it does, inside the transaction that records it.
        var run: @Sendable (SQLiteConnection) throws -> Void
    }

    /// Brings the database's schema up to this build's: each migration it
    /// has not had, in order, each in a transaction of its own with its
    /// line in the migrations table.
    static func migrate(_ db: SQLiteConnection) throws {
        try db.execute("CREATE TABLE IF NOT EXISTS \(migrationsTable) (identifier TEXT NOT NULL PRIMARY KEY)")
        let applied = Set(try db.column("SELECT identifier FROM \(migrationsTable)", as: String.self))
        for migration in migrations where !applied.contains(migration.identifier) {
            try db.transaction(immediate: true) { db in
                try migration.run(db)
                try db.run("INSERT INTO \(migrationsTable) (identifier) VALUES (?)", [migration.identifier])
            }
        }
    }

    static let migrations: [Migration] = [
        Migration(identifier: "v1") { db in
            try db.execute(
                """
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
        },
        // Players' signed profiles (name and colour), the newest of each author.
        Migration(identifier: "v2-profiles") { db in
            try db.execute(
                """
                CREATE TABLE profiles (
                    author BLOB PRIMARY KEY NOT NULL,
                    serial INTEGER NOT NULL,
                    note BLOB NOT NULL
                );
                """)
        },
        // Players' signed shares of each game's played time, the newest of each (author, game).
        Migration(identifier: "v3-play-time") { db in
            try db.execute(
                """
                CREATE TABLE play_notes (
                    author BLOB NOT NULL,
                    game BLOB NOT NULL,
                    serial INTEGER NOT NULL,
                    note BLOB NOT NULL,
                    PRIMARY KEY (author, game)
                );
                """)
            // Games made before this are timed as before (creation to end) while nobody's share of them is known.
            try db.run(
                "INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)",
                [Store.playTimeSinceSetting, String(UInt64(max(0, Date().timeIntervalSince1970 * 1000)))])
        },
        // What this device chose to sync: games it follows or forgot.
        Migration(identifier: "v4-game-choices") { db in
            try db.execute(
                """
                CREATE TABLE game_choices (
                    game TEXT PRIMARY KEY NOT NULL,
                    choice TEXT NOT NULL CHECK (choice IN ('follow', 'forget')),
                    changed DATETIME NOT NULL
                );
                """)
        },
        // Who is in the circle: its signed membership records, by circle id;
        // the circle's later keys a member handed over (a device admitted
        // after them was sealed none); the secrets of invitations made here.
        Migration(identifier: "v5-membership") { db in
            try db.execute(
                """
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
        },
        // Ops that came without a signature over their author's own link (a
        // live push) are kept so, flagged, until a signature vouches for them:
        // a release before this one would drop them on reading, so it is
        // refused this database (schema version 2). Ops stored before were
        // all vouched for by a signature.
        Migration(identifier: "v6-vouched-ops") { db in
            try db.execute("ALTER TABLE ops ADD COLUMN vouched INTEGER NOT NULL DEFAULT 0")
        },
        // Games are rebuilt from their ops at start: the summary each commit
        // cached beside a game was never read, so it goes. A release before
        // this one writes it, so it is refused this database (schema 3).
        Migration(identifier: "v7-no-game-summary") { db in
            try db.execute("ALTER TABLE games DROP COLUMN summary")
        },
        // Each sleeping game's form, kept so that a start reads it instead of
        // replaying the game's ops. Triggers drop a game's snapshots the
        // moment any of its ops is written, changed or deleted, whichever
        // release writes them: a snapshot kept always describes the ops held.
        Migration(identifier: "v8-game-snapshots") { db in
            try db.execute(
                """
                CREATE TABLE game_snapshots (
                    game TEXT NOT NULL,
                    circle BLOB NOT NULL,
                    readers BLOB NOT NULL,
                    opCount INTEGER NOT NULL,
                    snapshot BLOB NOT NULL,
                    PRIMARY KEY (game, circle)
                );
                CREATE TRIGGER game_snapshots_op_written AFTER INSERT ON ops
                BEGIN DELETE FROM game_snapshots WHERE game = NEW.gameID; END;
                CREATE TRIGGER game_snapshots_op_changed AFTER UPDATE ON ops
                BEGIN DELETE FROM game_snapshots WHERE game = OLD.gameID OR game = NEW.gameID; END;
                CREATE TRIGGER game_snapshots_op_deleted AFTER DELETE ON ops
                BEGIN DELETE FROM game_snapshots WHERE game = OLD.gameID; END;
                """)
        },
        // A long game's frozen board beside its snapshot: a wake reads it and
        // each chain's newest ops instead of replaying every op. The
        // snapshot's triggers drop it with the row. A release before this one
        // writes snapshots without it, which leaves it empty.
        Migration(identifier: "v9-frozen-boards") { db in
            try db.execute("ALTER TABLE game_snapshots ADD COLUMN board BLOB")
        },
        // No query orders ops by Lamport time: every lookup by game is served
        // by the (gameID, author, seq) index. The second index cost every
        // move a page more in the write-ahead log (4.7 against 3.5) and the
        // ops a tenth more space.
        Migration(identifier: "v10-ops-without-lamport-index") { db in
            try db.execute("DROP INDEX IF EXISTS ops_by_game")
        },
    ]

    // MARK: Access helpers

    @discardableResult
    func write<T: Sendable>(_ durability: Durability = .synced, _ body: (SQLiteConnection) throws -> T) throws(StoreError) -> T {
        try writeWithoutTransaction { db in
            switch durability {
            case .synced:
                return try db.transaction(immediate: true, body)
            case .deferred:
                try db.run("PRAGMA synchronous = NORMAL", cached: true)
                defer { _ = try? db.run("PRAGMA synchronous = FULL", cached: true) }
                return try db.transaction(immediate: true, body)
            }
        }
    }

    /// Runs `body` on the writer connection outside a transaction (what
    /// `VACUUM` needs, and what ``write(_:_:)`` opens its transaction on).
    private func writeWithoutTransaction<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws(StoreError) -> T {
        do {
            return try writer.withLock { connection in
                guard let db = connection else { throw StoreError.database("the store is closed") }
                return try body(db)
            }
        } catch {
            throw Self.classify(error, path: path)
        }
    }

    /// Gives freed space back to the file system (`VACUUM`) and empties the
    /// write-ahead log. It rewrites the whole file: run it off any thread
    /// that must not wait.
    public func compact() throws(StoreError) {
        try writeWithoutTransaction { db in
            try db.execute("VACUUM")
            try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    /// Runs `body` in a read transaction on a read-only connection of its
    /// own: it sees one snapshot, and neither waits for a write nor holds one up.
    func read<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws(StoreError) -> T {
        do {
            guard !closed.load(ordering: .sequentiallyConsistent) else { throw StoreError.database("the store is closed") }
            let db = try idleReaders.withLock { $0.popLast() } ?? Self.openReader(path)
            let result: T
            do {
                result = try db.transaction(immediate: false, body)
            } catch {
                // A connection that failed is not kept: the next read opens a fresh one.
                db.close()
                throw error
            }
            if closed.load(ordering: .sequentiallyConsistent) {
                db.close()
            } else {
                idleReaders.withLock { $0.append(db) }
            }
            return result
        } catch {
            throw Self.classify(error, path: path)
        }
    }

    private static func openReader(_ path: String) throws -> SQLiteConnection {
        let db = try SQLiteConnection(path: path, readOnly: true)
        try db.execute("PRAGMA foreign_keys = ON")
        return db
    }

    /// Sorts a failure into what a user can act on: a full disk, a read-only
    /// file system, a damaged file, an I/O error, or another database error.
    /// SQLite reports a write refused by a read-only file system (`EROFS`) as
    /// a plain I/O error, and a full disk met while syncing as one too, so
    /// I/O errors are told apart by looking at the file system itself.
    static func classify(_ error: any Error, path: String) -> StoreError {
        if let error = error as? StoreError { return error }
        guard let error = error as? SQLiteError else { return .database("\(error)") }
        let detail = error.message
        let directory = SweeperPaths.folder(of: path)
        switch error.code {
        case SQLITE_FULL:
            return .full(path: path, detail: detail)
        case SQLITE_READONLY:
            return .readOnly(path: path, detail: detail)
        case SQLITE_CORRUPT, SQLITE_NOTADB:
            return .corrupt(path: path, detail: detail)
        case SQLITE_IOERR, SQLITE_CANTOPEN:
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
        let probe = directory + "/.sweeperd-write-probe-\(getpid())"
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
        do {
            let connection = try SQLiteConnection(path: path, readOnly: true)
            defer { connection.close() }
            return try connection.transaction(immediate: false) { db in try db.column("PRAGMA integrity_check", as: String.self) }
        } catch {
            throw classify(error, path: path)
        }
    }
}
