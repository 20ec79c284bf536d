import FoundationEssentials

// What the daemon reads and writes: identity, circle, settings, peers,
// games and their ops.

extension Store {
    // MARK: Identity and circle

    /// The stored identity, if one was made.
    public func identity() throws(StoreError) -> StoredIdentity? {
        try read { db in
            try db.rows("SELECT secretKey, publicKey, created FROM identity WHERE id = 1").first.map {
                StoredIdentity(secretKey: try $0.get("secretKey"), publicKey: try $0.get("publicKey"), created: try $0.get("created"))
            }
        }
    }

    /// Stores the identity; refuses to replace an existing one (returns false).
    @discardableResult
    public func saveIdentity(_ identity: StoredIdentity) throws(StoreError) -> Bool {
        try write { db in
            try db.run(
                "INSERT OR IGNORE INTO identity (id, secretKey, publicKey, created) VALUES (1, ?, ?, ?)",
                [identity.secretKey, identity.publicKey, identity.created])
            return db.changes == 1
        }
    }

    /// The circle key, if any.
    public func circleKey() throws(StoreError) -> Data? {
        try read { db in try db.scalar("SELECT key FROM circle WHERE id = 1", as: Data.self) }
    }

    /// Sets (or replaces) the circle key.
    public func setCircleKey(_ key: Data) throws(StoreError) {
        try write { db in
            try db.run(
                "INSERT INTO circle (id, key, joined) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET key = excluded.key, joined = excluded.joined",
                [key, Date()])
        }
    }

    // MARK: Membership

    /// Keeps membership records of a circle (hash, encoded record); ones
    /// already kept are left as they are. Records peers sent may be kept
    /// `.deferred`: the peers hold them and send them again.
    public func saveMembershipRecords(
        circle: [UInt8], _ records: [(hash: [UInt8], record: [UInt8])], durability: Durability = .synced
    ) throws(StoreError) {
        guard !records.isEmpty else { return }
        try write(durability) { db in
            let now = Date()
            for r in records {
                try db.run(
                    "INSERT OR IGNORE INTO membership_records (hash, circle, record, received) VALUES (?, ?, ?, ?)",
                    [Data(r.hash), Data(circle), Data(r.record), now])
            }
        }
    }

    /// Every membership record kept for a circle, in the order received.
    public func membershipRecords(circle: [UInt8]) throws(StoreError) -> [[UInt8]] {
        try read { db in
            try db.column("SELECT record FROM membership_records WHERE circle = ? ORDER BY rowid", [Data(circle)], as: Data.self)
                .map { [UInt8]($0) }
        }
    }

    /// Keeps circle keys handed over by a member (32 bytes each).
    public func saveCircleKeys(circle: [UInt8], _ keys: [[UInt8]]) throws(StoreError) {
        guard !keys.isEmpty else { return }
        try write { db in
            for key in keys {
                try db.run("INSERT OR IGNORE INTO circle_keys (circle, key) VALUES (?, ?)", [Data(circle), Data(key)])
            }
        }
    }

    /// The circle keys handed over for a circle.
    public func circleKeys(circle: [UInt8]) throws(StoreError) -> [[UInt8]] {
        try read { db in
            try db.column("SELECT key FROM circle_keys WHERE circle = ? ORDER BY rowid", [Data(circle)], as: Data.self).map { [UInt8]($0) }
        }
    }

    /// Keeps the secret of an invitation made here (its code can be shown again).
    public func saveInvitation(_ invitation: [UInt8], circle: [UInt8], secret: [UInt8], at time: Date = Date()) throws(StoreError) {
        try write { db in
            try db.run(
                "INSERT OR REPLACE INTO invitations (invitation, circle, secret, made) VALUES (?, ?, ?, ?)",
                [Data(invitation), Data(circle), Data(secret), time])
        }
    }

    /// The secrets of the invitations made here for a circle, by invitation key.
    public func invitationSecrets(circle: [UInt8]) throws(StoreError) -> [[UInt8]: [UInt8]] {
        try read { db in
            var out: [[UInt8]: [UInt8]] = [:]
            for row in try db.rows("SELECT invitation, secret FROM invitations WHERE circle = ?", [Data(circle)]) {
                let invitation: Data = try row.get("invitation")
                let secret: Data = try row.get("secret")
                out[[UInt8](invitation)] = [UInt8](secret)
            }
            return out
        }
    }

    // MARK: Settings

    /// A setting's value.
    public func setting(_ key: String) throws(StoreError) -> String? {
        try read { db in try db.scalar("SELECT value FROM settings WHERE key = ?", [key], as: String.self) }
    }

    /// Sets a setting; `nil` removes it.
    public func setSetting(_ key: String, _ value: String?) throws(StoreError) {
        try write { db in
            if let value {
                try db.run("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [key, value])
            } else {
                try db.run("DELETE FROM settings WHERE key = ?", [key])
            }
        }
    }

    // MARK: Peers

    /// Adds or updates a known peer (`.deferred` for what a peer says of
    /// itself at each hello: it says it again).
    public func savePeer(_ peer: StoredPeer, durability: Durability = .synced) throws(StoreError) {
        try write(durability) { db in
            try db.run(
                """
                INSERT INTO peers (peerID, name, address, lastSeen) VALUES (?, ?, ?, ?)
                ON CONFLICT(peerID) DO UPDATE SET name = excluded.name,
                    address = coalesce(excluded.address, address), lastSeen = excluded.lastSeen
                """, [peer.peerID, peer.name, peer.address, peer.lastSeen])
        }
    }

    /// All known peers, most recently seen first.
    public func peers() throws(StoreError) -> [StoredPeer] {
        try read { db in
            try db.rows("SELECT * FROM peers ORDER BY lastSeen DESC, peerID").map {
                StoredPeer(peerID: try $0.get("peerID"), name: try $0.get("name"), address: try $0.get("address"), lastSeen: try $0.get("lastSeen"))
            }
        }
    }

    // MARK: Profiles

    /// Keeps a player's signed profile (its encoding), replacing an older
    /// one. Without an fsync: a profile lost to a power cut comes again from
    /// any peer (its author's own is made again at start).
    public func saveProfile(author: [UInt8], serial: UInt64, note: [UInt8]) throws(StoreError) {
        try write(.deferred) { db in
            try db.run(
                """
                INSERT INTO profiles (author, serial, note) VALUES (?, ?, ?)
                ON CONFLICT(author) DO UPDATE SET serial = excluded.serial, note = excluded.note
                WHERE excluded.serial > serial
                """, [Data(author), Int64(bitPattern: serial), Data(note)])
        }
    }

    /// Every profile kept, as encoded.
    public func profiles() throws(StoreError) -> [[UInt8]] {
        try read { db in try db.column("SELECT note FROM profiles ORDER BY author", as: Data.self).map { Array($0) } }
    }

    // MARK: Played time

    /// Keeps a player's signed share of a game's played time (its
    /// encoding), replacing an older one of the same author and game.
    /// Without an fsync: a daemon that loses the last seconds of its own
    /// share to a power cut starts again from the one before (kept at most
    /// a few seconds earlier), and peers' shares come again from any peer.
    public func savePlayNote(author: [UInt8], game: [UInt8], serial: UInt64, note: [UInt8]) throws(StoreError) {
        try write(.deferred) { db in
            try db.run(
                """
                INSERT INTO play_notes (author, game, serial, note) VALUES (?, ?, ?, ?)
                ON CONFLICT(author, game) DO UPDATE SET serial = excluded.serial, note = excluded.note
                WHERE excluded.serial > serial
                """, [Data(author), Data(game), Int64(bitPattern: serial), Data(note)])
        }
    }

    /// Every share of played time kept, as encoded.
    public func playNotes() throws(StoreError) -> [[UInt8]] {
        try read { db in try db.column("SELECT note FROM play_notes ORDER BY game, author", as: Data.self).map { Array($0) } }
    }

    // MARK: Games and ops

    static func game(_ row: SQLiteRow) throws -> StoredGame {
        StoredGame(
            id: try row.get("id"), params: try row.get("params"), created: try row.get("created"), lastActivity: try row.get("lastActivity"),
            status: try row.get("status"))
    }

    /// Stores a new game together with its first ops (normally its genesis),
    /// in one transaction. Returns false if a game with that id exists.
    @discardableResult
    public func createGame(_ game: StoredGame, ops: [StoredOp] = [], durability: Durability = .synced) throws(StoreError) -> Bool {
        try write(durability) { db in
            try db.run(
                "INSERT OR IGNORE INTO games (id, params, created, lastActivity, status) VALUES (?, ?, ?, ?, ?)",
                [game.id, game.params, game.created, game.lastActivity, game.status])
            guard db.changes == 1 else { return false }
            for op in ops { try Self.insert(op, db) }
            return true
        }
    }

    /// Every game, most recent activity first.
    public func games() throws(StoreError) -> [StoredGame] {
        try read { db in
            try db.rows("SELECT * FROM games ORDER BY lastActivity DESC, created DESC, id").map { try Self.game($0) }
        }
    }

    /// One game by full id.
    public func game(id: String) throws(StoreError) -> StoredGame? {
        try read { db in try db.rows("SELECT * FROM games WHERE id = ?", [id]).first.map { try Self.game($0) } }
    }

    /// Ids of the games whose id starts with `prefix`.
    public func gameIDs(withPrefix prefix: String) throws(StoreError) -> [String] {
        try read { db in
            try db.column("SELECT id FROM games WHERE substr(id, 1, ?) = ? ORDER BY id", [prefix.count, prefix], as: String.self)
        }
    }

    static func insert(_ op: StoredOp, _ db: SQLiteConnection) throws {
        // Cached statements: every move writes one, and parsing the SQL anew
        // each time cost more than the insert.
        try db.run(
            "INSERT OR IGNORE INTO ops (gameID, author, seq, lamport, bytes, vouched) VALUES (?, ?, ?, ?, ?, ?)",
            [op.gameID, op.author, op.seq, op.lamport, op.bytes, op.vouched ? 1 : 0], cached: true)
    }

    /// Stores ops again with the signatures that came for them (each held
    /// already, unsigned): each is vouched for from now on, and so is every
    /// op before it in its author's chain. Returns how many ops were updated.
    @discardableResult
    public func saveSignatures(_ ops: [StoredOp], durability: Durability = .deferred) throws(StoreError) -> Int {
        guard !ops.isEmpty else { return 0 }
        return try write(durability) { db in
            var updated = 0
            for op in ops {
                try db.run(
                    "UPDATE ops SET bytes = ?, vouched = 0 WHERE gameID = ? AND author = ? AND seq = ?", [op.bytes, op.gameID, op.author, op.seq], cached: true)
                updated += db.changes
                try db.run(
                    "UPDATE ops SET vouched = 0 WHERE gameID = ? AND author = ? AND seq < ? AND vouched = 1", [op.gameID, op.author, op.seq], cached: true)
            }
            return updated
        }
    }

    /// Appends ops and updates the game's cached status, all in one
    /// committed transaction. Ops already stored (same game, author and
    /// seq) are skipped. Returns how many ops were new.
    @discardableResult
    public func append(
        _ ops: [StoredOp], updating gameID: String? = nil, status: String? = nil, at time: Date = Date(),
        durability: Durability = .synced
    ) throws(StoreError) -> Int {
        try write(durability) { db in
            var added = 0
            for op in ops {
                try Self.insert(op, db)
                added += db.changes
            }
            if let gameID {
                try db.run("UPDATE games SET lastActivity = ?, status = coalesce(?, status) WHERE id = ?", [time, status, gameID], cached: true)
            }
            return added
        }
    }

    /// Deletes `author`'s ops of a game after sequence number `seq` (a
    /// removed device's moves its removal did not keep) and updates the
    /// game's cached status; without a status (nothing of the game is left
    /// to show: its genesis went) the game and all its ops go. Returns how
    /// many ops were deleted.
    @discardableResult
    public func dropOps(gameID: String, author: Data, after seq: Int64, status: String?) throws(StoreError) -> Int {
        try write { db in
            guard let status else {
                try db.run("DELETE FROM ops WHERE gameID = ?", [gameID])
                let n = db.changes
                try db.run("DELETE FROM games WHERE id = ?", [gameID])
                return n
            }
            try db.run("DELETE FROM ops WHERE gameID = ? AND author = ? AND seq > ?", [gameID, author, seq])
            let n = db.changes
            try db.run("UPDATE games SET status = ? WHERE id = ?", [status, gameID])
            return n
        }
    }

    /// The ops of a game in storage order (the order they were committed).
    public func ops(gameID: String) throws(StoreError) -> [StoredOp] {
        try read { db in
            try db.rows("SELECT * FROM ops WHERE gameID = ? ORDER BY rowid", [gameID]).map {
                StoredOp(
                    gameID: try $0.get("gameID"), author: try $0.get("author"), seq: try $0.get("seq"), lamport: try $0.get("lamport"),
                    bytes: try $0.get("bytes"),
                    vouched: (try $0.get("vouched") as Int?) == 1)
            }
        }
    }

    /// The bytes of `author`'s ops of a game numbered `first` through
    /// `last`, in seq order (what a game's replica reads back of the ops it
    /// let go of; the ops' unique index serves it).
    public func opBytes(gameID: String, author: Data, seqs first: Int64, through last: Int64) throws(StoreError) -> [[UInt8]] {
        try read { db in
            try db.rows(
                "SELECT bytes FROM ops WHERE gameID = ? AND author = ? AND seq BETWEEN ? AND ? ORDER BY seq", [gameID, author, first, last], cached: true
            ).map { try $0.get(0, as: [UInt8].self) }
        }
    }

    /// The number of stored ops (all games).
    public func opCount() throws(StoreError) -> Int {
        try read { db in try db.scalar("SELECT count(*) FROM ops", as: Int.self) ?? 0 }
    }

    // MARK: What syncs

    /// This device's choices: game id → whether it follows (`true`) or forgot (`false`) the game.
    public func gameChoices() throws(StoreError) -> [String: Bool] {
        try read { db in
            var out: [String: Bool] = [:]
            for row in try db.rows("SELECT game, choice FROM game_choices") {
                let choice: String = try row.get("choice")
                out[try row.get("game")] = choice == "follow"
            }
            return out
        }
    }

    /// Follows a game: it syncs whatever the sync mode says, until forgotten.
    public func followGame(id: String, at time: Date = Date()) throws(StoreError) {
        try write { db in try Self.choose("follow", game: id, at: time, db) }
    }

    /// Records this device's choice for a game, replacing the one before.
    private static func choose(_ choice: String, game id: String, at time: Date, _ db: SQLiteConnection) throws {
        try db.run("INSERT OR REPLACE INTO game_choices (game, choice, changed) VALUES (?, ?, ?)", [id, choice, time])
    }

    /// Forgets a game: its ops, its row and every share of its played time
    /// are deleted, and the choice is kept so that it does not come back.
    /// The deleted bytes are overwritten (`secure_delete`), the file is
    /// rebuilt to give the space back (`VACUUM`) and the write-ahead log is
    /// emptied, so nothing of the game stays in any of the database's files;
    /// without `compacting`, the caller runs ``compact()`` itself (off the
    /// thread that must not wait for it).
    /// `gameBytes` is the game id's bytes, as play notes key it.
    /// With `recordingChoice` false nothing remembers it (a game of a
    /// circle left: no peer would send it again). Returns how many ops
    /// were deleted.
    @discardableResult
    public func forgetGame(
        id: String, gameBytes: [UInt8], at time: Date = Date(), recordingChoice: Bool = true, compacting: Bool = true
    ) throws(StoreError) -> Int {
        try forgetGames([(id, gameBytes)], at: time, recordingChoice: recordingChoice, compacting: compacting)
    }

    /// Forgets several games as ``forgetGame(id:gameBytes:at:recordingChoice:compacting:)``
    /// forgets one, in one transaction and one rebuild of the file. Returns
    /// how many ops were deleted in all.
    @discardableResult
    public func forgetGames(
        _ games: [(id: String, gameBytes: [UInt8])], at time: Date = Date(), recordingChoice: Bool = true, compacting: Bool = true
    ) throws(StoreError) -> Int {
        guard !games.isEmpty else { return 0 }
        let deleted = try write { db in
            try db.execute("PRAGMA secure_delete = ON")
            var count = 0
            for (id, gameBytes) in games {
                try db.run("DELETE FROM ops WHERE gameID = ?", [id])
                count += db.changes
                try db.run("DELETE FROM games WHERE id = ?", [id])
                try db.run("DELETE FROM play_notes WHERE game = ?", [Data(gameBytes)])
                if recordingChoice {
                    try Self.choose("forget", game: id, at: time, db)
                } else {
                    try db.run("DELETE FROM game_choices WHERE game = ?", [id])
                }
            }
            try db.execute("PRAGMA secure_delete = OFF")
            return count
        }
        if compacting { try compact() }
        return deleted
    }

    /// The journal mode and synchronous setting in force, for diagnostics and tests.
    public func durabilitySettings() throws(StoreError) -> (journalMode: String, synchronous: Int) {
        try write { db in
            (
                try db.scalar("PRAGMA journal_mode", as: String.self) ?? "",
                try db.scalar("PRAGMA synchronous", as: Int.self) ?? -1
            )
        }
    }
}
