import FoundationEssentials

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

/// One game as listed: its parameters and cached status (the truth is its ops).
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

    /// Creates a game record.
    public init(id: String, params: Data, created: Date, lastActivity: Date, status: String) {
        self.id = id
        self.params = params
        self.created = created
        self.lastActivity = lastActivity
        self.status = status
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
    /// Whether the op came without a signature over its author's own link
    /// (a live push), and no signature vouches for it yet.
    public var vouched: Bool

    /// Creates an op record.
    public init(gameID: String, author: Data, seq: Int64, lamport: Int64, bytes: Data, vouched: Bool = false) {
        self.gameID = gameID
        self.author = author
        self.seq = seq
        self.lamport = lamport
        self.bytes = bytes
        self.vouched = vouched
    }
}
