import FoundationEssentials

/// A game's sleeping form kept for the next start (see the
/// `v8-game-snapshots` migration): read at start instead of replaying the
/// game's ops.
public struct StoredSnapshot: Equatable, Sendable {
    /// The game (printable id, as ``StoredOp/gameID``).
    public var gameID: String
    /// The circle whose replica holds it so (the circle's tag bytes).
    public var circle: Data
    /// Who read the game when it was written (their keys, in order): a
    /// snapshot serves only the same readers.
    public var readers: Data
    /// How many ops of the game the store held when it was written.
    public var opCount: Int
    /// The encoded sleeping game; empty when the circle holds nothing of it.
    public var bytes: Data
    /// The game's frozen board (see the `v9-frozen-boards` migration), when
    /// one was written: read by a wake alone (``Store/frozenBoard(game:circle:)``),
    /// never by ``Store/snapshots()``.
    public var board: Data?

    /// Creates a snapshot row.
    public init(gameID: String, circle: Data, readers: Data, opCount: Int, bytes: Data, board: Data? = nil) {
        self.gameID = gameID
        self.circle = circle
        self.readers = readers
        self.opCount = opCount
        self.bytes = bytes
        self.board = board
    }
}

extension Store {
    /// Every snapshot kept, without its frozen board. The store drops a
    /// game's snapshots whenever any of its ops is written, changed or
    /// deleted, so each one describes the ops the store holds now.
    public func snapshots() throws(StoreError) -> [StoredSnapshot] {
        try read { db in
            try db.rows("SELECT game, circle, readers, opCount, snapshot FROM game_snapshots").map { row in
                StoredSnapshot(
                    gameID: try row.get("game"), circle: try row.get("circle"), readers: try row.get("readers"),
                    opCount: try row.get("opCount"), bytes: try row.get("snapshot"))
            }
        }
    }

    /// Keeps snapshots, replacing any of the same game and circle, without
    /// an fsync (a snapshot lost is a game replayed at the next start). A
    /// snapshot whose game holds another number of ops than it says is not
    /// kept: it was taken of ops the store does not hold. Returns how many
    /// were kept.
    @discardableResult
    public func saveSnapshots(_ snapshots: [StoredSnapshot]) throws(StoreError) -> Int {
        guard !snapshots.isEmpty else { return 0 }
        return try write(.deferred) { db in
            var kept = 0
            for s in snapshots {
                let held = try db.scalar("SELECT count(*) FROM ops WHERE gameID = ?", [s.gameID], as: Int.self) ?? 0
                guard held == s.opCount else { continue }
                try db.run(
                    "INSERT OR REPLACE INTO game_snapshots (game, circle, readers, opCount, snapshot, board) VALUES (?, ?, ?, ?, ?, ?)",
                    [s.gameID, s.circle, s.readers, s.opCount, s.bytes, s.board], cached: true)
                kept += 1
            }
            return kept
        }
    }

    /// The frozen board kept with `game`'s snapshot for `circle`, if any: it
    /// describes the ops the store holds now (the triggers that drop a
    /// snapshot drop its board with it).
    public func frozenBoard(game: String, circle: Data) throws(StoreError) -> Data? {
        try read { db in
            try db.scalar("SELECT board FROM game_snapshots WHERE game = ? AND circle = ?", [game, circle], as: Data?.self) ?? nil
        }
    }

    /// How many snapshots are kept.
    public func snapshotCount() throws(StoreError) -> Int {
        try read { db in try db.scalar("SELECT count(*) FROM game_snapshots", as: Int.self) ?? 0 }
    }
}
