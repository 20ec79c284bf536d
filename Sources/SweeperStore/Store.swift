import Foundation
import GRDB

/// Why the store refused to open or to act.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file at `path` is not a healthy SQLite database. It was left as it was.
    case corrupt(path: String, detail: String)
    /// The database was written by a newer Sweeper (schema `found`, this build knows up to `known`).
    /// It was left as it was.
    case newerSchema(path: String, found: Int, known: Int)
    /// The state directory could not be made or secured.
    case stateDirectory(path: String, detail: String)
    /// SQLite failed.
    case database(String)
    /// The file system holding the database at `path` has no space left
    /// (`SQLITE_FULL`): the write was rolled back and nothing was saved.
    case full(path: String, detail: String)
    /// The database at `path` cannot be written: its file system is
    /// read-only, or the file was opened read-only (`SQLITE_READONLY`, or an
    /// I/O error on a read-only file system). Nothing was saved.
    case readOnly(path: String, detail: String)
    /// Reading or writing the database at `path` failed at the operating
    /// system's level (`SQLITE_IOERR`, `SQLITE_CANTOPEN`). Nothing was saved.
    case ioError(path: String, detail: String)

    public var description: String {
        switch self {
        case let .corrupt(path, detail):
            "the database \(path) is damaged (\(detail)); it was left untouched — move it aside to start afresh, or restore a backup"
        case let .full(path, detail):
            "storage full: no space left for \(path) (\(detail)); nothing was saved — free some space and try again"
        case let .readOnly(path, detail):
            "storage read-only: \(path) cannot be written (\(detail)); nothing was saved — make its file system writable again"
        case let .ioError(path, detail):
            "storage I/O error on \(path) (\(detail)); nothing was saved — check the disk"
        case let .newerSchema(path, found, known):
            "the database \(path) has schema version \(found), newer than this sweeperd knows (\(known)); it was left untouched — run a newer sweeperd"
        case let .stateDirectory(path, detail):
            "cannot use the state directory \(path): \(detail)"
        case let .database(message):
            "database error: \(message)"
        }
    }
}

/// The daemon's identity as stored: Ed25519 key pair bytes, opaque to the store.
public struct StoredIdentity: Equatable, Sendable {
    /// The secret key bytes (libsodium's 64-byte form).
    public var secretKey: Data
    /// The public key bytes.
    public var publicKey: Data
    /// When it was made.
    public var created: Date

    /// Creates an identity record.
    public init(secretKey: Data, publicKey: Data, created: Date = Date()) {
        self.secretKey = secretKey
        self.publicKey = publicKey
        self.created = created
    }
}

/// A peer this daemon has seen or been told about.
public struct StoredPeer: Equatable, Sendable, Codable {
    /// The peer's printable id.
    public var peerID: String
    /// The player's name, as last heard.
    public var name: String
    /// The last address it was reached at (`host:port`), if any.
    public var address: String?
    /// When it was last seen.
    public var lastSeen: Date

    /// Creates a peer record.
    public init(peerID: String, name: String, address: String?, lastSeen: Date) {
        self.peerID = peerID
        self.name = name
        self.address = address
        self.lastSeen = lastSeen
    }
}

/// One game as listed: its parameters and a cached summary (the truth is its ops).
public struct StoredGame: Equatable, Sendable, Codable {
    /// The game id (printable).
    public var id: String
    /// The game's parameters, encoded by the caller (JSON).
    public var params: Data
    /// When the game was made.
    public var created: Date
    /// When an op of the game was last stored.
    public var lastActivity: Date
    /// The cached status (`playing`, `won`, `lost`).
    public var status: String
    /// A cached summary, encoded by the caller (JSON), for listing without replaying ops.
    public var summary: Data

    /// Creates a game record.
    public init(id: String, params: Data, created: Date, lastActivity: Date, status: String, summary: Data) {
        self.id = id
        self.params = params
        self.created = created
        self.lastActivity = lastActivity
        self.status = status
        self.summary = summary
    }
}

/// One signed op of a game, stored as opaque encoded bytes with the fields
/// needed to index and order it.
public struct StoredOp: Equatable, Sendable {
    /// The game it belongs to.
    public var gameID: String
    /// The author's public key (or any stable author id) bytes.
    public var author: Data
    /// The author's sequence number in this game (1, 2, …).
    public var seq: Int64
    /// The op's Lamport time.
    public var lamport: Int64
    /// The op as encoded and signed by its author.
    public var bytes: Data

    /// Creates an op record.
    public init(gameID: String, author: Data, seq: Int64, lamport: Int64, bytes: Data) {
        self.gameID = gameID
        self.author = author
        self.seq = seq
        self.lamport = lamport
        self.bytes = bytes
    }
}

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
    public static let schemaVersion = 1
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
        let fm = FileManager.default
        var isDir: ObjCBool = false
        if fm.fileExists(atPath: directory, isDirectory: &isDir) {
            guard isDir.boolValue else { throw .stateDirectory(path: directory, detail: "not a directory") }
        } else {
            do {
                try fm.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw .stateDirectory(path: directory, detail: "\(error.localizedDescription)")
            }
        }
        if chmod(directory, 0o700) != 0 {
            throw .stateDirectory(path: directory, detail: String(cString: strerror(errno)))
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
        return migrator
    }

    // MARK: Access helpers

    private func write<T>(_ durability: Durability = .synced, _ body: (Database) throws -> T) throws(StoreError) -> T {
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

    private func read<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
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

    // MARK: Identity and circle

    /// The stored identity, if one was made.
    public func identity() throws(StoreError) -> StoredIdentity? {
        try read { db in
            try Row.fetchOne(db, sql: "SELECT secretKey, publicKey, created FROM identity WHERE id = 1").map {
                StoredIdentity(secretKey: $0["secretKey"], publicKey: $0["publicKey"], created: $0["created"])
            }
        }
    }

    /// Stores the identity; refuses to replace an existing one (returns false).
    @discardableResult
    public func saveIdentity(_ identity: StoredIdentity) throws(StoreError) -> Bool {
        try write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO identity (id, secretKey, publicKey, created) VALUES (1, ?, ?, ?)",
                arguments: [identity.secretKey, identity.publicKey, identity.created])
            return db.changesCount == 1
        }
    }

    /// The circle key, if any.
    public func circleKey() throws(StoreError) -> Data? {
        try read { db in try Data.fetchOne(db, sql: "SELECT key FROM circle WHERE id = 1") }
    }

    /// Sets (or replaces) the circle key.
    public func setCircleKey(_ key: Data) throws(StoreError) {
        try write { db in
            try db.execute(
                sql: "INSERT INTO circle (id, key, joined) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET key = excluded.key, joined = excluded.joined",
                arguments: [key, Date()])
        }
    }

    // MARK: Settings

    /// A setting's value.
    public func setting(_ key: String) throws(StoreError) -> String? {
        try read { db in try String.fetchOne(db, sql: "SELECT value FROM settings WHERE key = ?", arguments: [key]) }
    }

    /// Sets a setting; `nil` removes it.
    public func setSetting(_ key: String, _ value: String?) throws(StoreError) {
        try write { db in
            if let value {
                try db.execute(
                    sql: "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    arguments: [key, value])
            } else {
                try db.execute(sql: "DELETE FROM settings WHERE key = ?", arguments: [key])
            }
        }
    }

    // MARK: Peers

    /// Adds or updates a known peer.
    public func savePeer(_ peer: StoredPeer) throws(StoreError) {
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO peers (peerID, name, address, lastSeen) VALUES (?, ?, ?, ?)
                    ON CONFLICT(peerID) DO UPDATE SET name = excluded.name,
                        address = coalesce(excluded.address, address), lastSeen = excluded.lastSeen
                    """,
                arguments: [peer.peerID, peer.name, peer.address, peer.lastSeen])
        }
    }

    /// All known peers, most recently seen first.
    public func peers() throws(StoreError) -> [StoredPeer] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM peers ORDER BY lastSeen DESC, peerID").map {
                StoredPeer(peerID: $0["peerID"], name: $0["name"], address: $0["address"], lastSeen: $0["lastSeen"])
            }
        }
    }

    // MARK: Games and ops

    private static func game(_ row: Row) -> StoredGame {
        StoredGame(
            id: row["id"], params: row["params"], created: row["created"], lastActivity: row["lastActivity"],
            status: row["status"], summary: row["summary"])
    }

    /// Stores a new game together with its first ops (normally its genesis),
    /// in one transaction. Returns false if a game with that id exists.
    @discardableResult
    public func createGame(_ game: StoredGame, ops: [StoredOp] = [], durability: Durability = .synced) throws(StoreError) -> Bool {
        try write(durability) { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO games (id, params, created, lastActivity, status, summary) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [game.id, game.params, game.created, game.lastActivity, game.status, game.summary])
            guard db.changesCount == 1 else { return false }
            for op in ops { try Self.insert(op, db) }
            return true
        }
    }

    /// Every game, most recent activity first.
    public func games() throws(StoreError) -> [StoredGame] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM games ORDER BY lastActivity DESC, created DESC, id").map(Self.game)
        }
    }

    /// One game by full id.
    public func game(id: String) throws(StoreError) -> StoredGame? {
        try read { db in try Row.fetchOne(db, sql: "SELECT * FROM games WHERE id = ?", arguments: [id]).map(Self.game) }
    }

    /// Ids of the games whose id starts with `prefix`.
    public func gameIDs(withPrefix prefix: String) throws(StoreError) -> [String] {
        try read { db in
            try String.fetchAll(
                db, sql: "SELECT id FROM games WHERE substr(id, 1, ?) = ? ORDER BY id",
                arguments: [prefix.count, prefix])
        }
    }

    private static func insert(_ op: StoredOp, _ db: Database) throws {
        // Cached statements: every move writes one, and parsing the SQL anew
        // each time cost more than the insert.
        try db.cachedStatement(sql: "INSERT OR IGNORE INTO ops (gameID, author, seq, lamport, bytes) VALUES (?, ?, ?, ?, ?)")
            .execute(arguments: [op.gameID, op.author, op.seq, op.lamport, op.bytes])
    }

    /// Appends ops and updates the game's cached status and summary, all in
    /// one committed transaction. Ops already stored (same game, author and
    /// seq) are skipped. Returns how many ops were new.
    @discardableResult
    public func append(
        _ ops: [StoredOp], updating gameID: String? = nil, status: String? = nil, summary: Data? = nil,
        at time: Date = Date(), durability: Durability = .synced
    ) throws(StoreError) -> Int {
        try write(durability) { db in
            var added = 0
            for op in ops {
                try Self.insert(op, db)
                added += db.changesCount
            }
            if let gameID {
                try db.cachedStatement(
                    sql: """
                        UPDATE games SET lastActivity = ?, status = coalesce(?, status),
                            summary = coalesce(?, summary) WHERE id = ?
                        """
                ).execute(arguments: [time, status, summary, gameID])
            }
            return added
        }
    }

    /// The ops of a game in storage order (the order they were committed).
    public func ops(gameID: String) throws(StoreError) -> [StoredOp] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM ops WHERE gameID = ? ORDER BY rowid", arguments: [gameID]).map {
                StoredOp(gameID: $0["gameID"], author: $0["author"], seq: $0["seq"], lamport: $0["lamport"], bytes: $0["bytes"])
            }
        }
    }

    /// The number of stored ops (all games).
    public func opCount() throws(StoreError) -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM ops") ?? 0 }
    }

    /// The journal mode and synchronous setting in force, for diagnostics and tests.
    public func durabilitySettings() throws(StoreError) -> (journalMode: String, synchronous: Int) {
        try write { db in
            (
                try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "",
                try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1
            )
        }
    }
}
