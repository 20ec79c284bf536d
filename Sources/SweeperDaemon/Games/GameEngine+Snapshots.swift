import FoundationEssentials
import SweeperCrypto
import SweeperStore
import SweeperSync

/// The snapshots a start reads instead of replaying games: each sleeping
/// game's form, by game and circle, for the readers it was written for.
/// What the store hands back was written here and is dropped there the
/// moment any op of its game changes (see ``Store/saveSnapshots(_:)``).
struct SnapshotShelf {
    /// What each (game, circle tag) holds: a sleeping game, or `nil` when
    /// the circle holds nothing of that game.
    private var shelf: [String: [String: SleepingGame?]] = [:]
    /// Snapshots that did not decode (left for the replay to replace).
    private(set) var unreadable = 0

    /// The snapshots of `store` written for `readers`.
    init(_ store: Store, readers: Data) {
        guard let rows = try? store.snapshots() else { return }
        for row in rows where row.readers == readers {
            let tag = String(decoding: row.circle, as: UTF8.self)
            if row.bytes.isEmpty {
                shelf[row.gameID, default: [:]][tag] = .some(nil)
            } else if let asleep = try? SleepingGame(snapshot: [UInt8](row.bytes)) {
                shelf[row.gameID, default: [:]][tag] = .some(asleep)
            } else {
                unreadable += 1
            }
        }
    }

    /// Puts `game` into `replica` as its snapshot says; whether there was
    /// one to put (a circle that holds nothing of the game counts).
    func install(_ game: String, into replica: inout Replica) -> Bool {
        guard let held = shelf[game]?[replica.circle.tag] else { return false }
        guard let asleep = held else { return true }
        guard let id = GameID(hex: game) else { return false }
        return replica.holdAsleep(id, asleep)
    }
}

extension GameEngine {
    /// Who reads the games of `replica`, as a snapshot records them: their
    /// keys in order (the first is this device's player).
    static func readersKey(of replica: Replica) -> Data {
        Data(replica.readers.flatMap(\.peerID.bytes))
    }

    /// The snapshot of `game` in `replica` when it sleeps or may (`nil`
    /// otherwise); `absentWith` ops stored, a snapshot that the circle
    /// holds nothing of it.
    /// With it goes the game's frozen board, made of the game awake:
    /// `awake` (the game as it was before it went to sleep) or the
    /// replica's, when it is a long open game (see ``GameReplica/frozenBoard(minimumOps:)``).
    static func snapshot(of game: GameID, in replica: Replica, absentWith storedOps: Int? = nil, awake: GameReplica? = nil) -> StoredSnapshot? {
        let circle = Data(replica.circle.tag.utf8), readers = readersKey(of: replica)
        if let form = replica.sleepingForm(of: game) {
            let board = (replica.games[game] ?? awake)?.frozenBoard().map { Data($0) }
            return StoredSnapshot(
                gameID: game.description, circle: circle, readers: readers, opCount: form.opCount, bytes: Data(form.snapshot), board: board)
        }
        guard let storedOps, replica.games[game] == nil else { return nil }
        return StoredSnapshot(gameID: game.description, circle: circle, readers: readers, opCount: storedOps, bytes: Data())
    }

    /// Keeps a snapshot of each of `games` that sleeps or may, in every
    /// circle, for the next start. Only while the readers are those the
    /// engine loaded with (a player hosted since changes what the games
    /// show, and their snapshots wait for the next start's replay).
    /// `awake` holds, per circle, the games as they were before they went
    /// to sleep, for their frozen boards. Returns how many were kept.
    @discardableResult
    func keepSnapshots(of games: some Sequence<GameID>, awake: [[GameID: GameReplica]] = []) -> Int {
        guard snapshotsServe else { return 0 }
        var rows: [StoredSnapshot] = []
        for game in games {
            for (i, c) in circles.enumerated() {
                if let row = Self.snapshot(of: game, in: c.replica, awake: i < awake.count ? awake[i][game] : nil) { rows.append(row) }
            }
        }
        return (try? archive.store.saveSnapshots(rows)) ?? 0
    }

    /// Keeps a snapshot of every awake game that may sleep (a daemon that
    /// stops: its next start reads them instead of replaying them).
    @discardableResult
    func keepSnapshotsOfAwakeGames() -> Int {
        keepSnapshots(of: Set(circles.flatMap(\.replica.games.keys)))
    }
}
