import SweeperConventions
import SweeperCrypto
import SweeperGame

/// The board of the day: one no-guess intermediate board a day (16×16, 40
/// mines, the centre opened first) for a whole circle, the same on every
/// member's device, derived from the circle key in force that day
/// (``DailyKeys``) and the day. No player chooses it; nobody outside the
/// circle can make it, nor can a device removed before the day began
/// anywhere (it never gets the keys made after its removal). A member who
/// runs the derivation ahead of time can know tomorrow's, as with any board
/// made from a rule (the daily puzzles of newspapers likewise).
///
/// Each player plays the day's board once, as a game of their own (its
/// genesis is the derived board and a ``OpPayload/daily(day:)`` op by its
/// creator names the day), so a device that was apart all day plays the
/// same board, and its result joins the day's table when it links.
public enum DailyBoard {
    /// The largest day a daily op may name (days since 1970-01-01).
    public static let dayLimit = 10_000_000

    /// The first day whose board is derived from the key in force that day
    /// alone (2026-11-28). The release before derived every day's board
    /// from the circle's first key; for the days before this one, a board
    /// made so counts too (``boards(day:keys:)``), so that the tables and
    /// streaks of those days stay as they were.
    public static let keyedByEpochSince = 20_785

    /// How long before the day's own midnight (UTC) a day begins somewhere:
    /// at UTC+14, 14 hours before (in ms). A key counts for a day when its
    /// rekey record was made before then, so the key of a day never
    /// changes while anyone is playing it.
    public static let earliestStartMillis: UInt64 = 14 * 3_600_000

    /// The board of every day: intermediate, no-guess, opened from the centre.
    public static func parameters() throws(ParameterError) -> GameParameters {
        try GameParameters(width: 16, height: 16, mines: 40, start: Cell(x: 8, y: 8), noGuess: true)
    }

    /// The generator's seed of `day`'s board made with `key`: BLAKE2b with
    /// a 16-byte output (libsodium's shortest), keyed with the key's 32
    /// bytes, of the 16 ASCII bytes "sweeper/daily/v1" followed by the day
    /// as a LEB128 varint; its last 8 bytes read as a big-endian integer.
    /// (The release before asked for 8 bytes, which libsodium's minimum
    /// raised to 16, and kept the last 8 by shifting: the same seed, said
    /// plainly here.)
    public static func seed(circle key: CircleKey, day: Int) -> UInt64 {
        var w = ByteWriter(capacity: 4)
        w.varint(day)
        let digest = Blake2b.keyedHash(key: key.secret, Array("sweeper/daily/v1".utf8), w.bytes, length: 16)
        return digest.suffix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// `day`'s board made with `key` (``seed(circle:day:)``).
    public static func board(circle key: CircleKey, day: Int) throws -> GeneratedBoard {
        try Generator.generate(try parameters(), seed: seed(circle: key, day: day))
    }

    /// The board of `day` in the circle whose keys are `keys`: made with
    /// the key in force that day (``DailyKeys/key(for:)``). `nil` when this
    /// device does not hold that key.
    public static func board(day: Int, keys: DailyKeys) throws -> GeneratedBoard? {
        guard let key = keys.key(for: day) else { return nil }
        return try board(circle: key, day: day)
    }

    /// Every board that counts as `day`'s: the one made with the key in
    /// force that day, and, for a day before ``keyedByEpochSince`` whose key
    /// is not the first, the one made with the first key (as the release
    /// before made it).
    public static func boards(day: Int, keys: DailyKeys) throws -> [GeneratedBoard] {
        var out: [GeneratedBoard] = []
        let key = keys.key(for: day)
        if let key { out.append(try board(circle: key, day: day)) }
        if day < keyedByEpochSince, key != keys.first { out.append(try board(circle: keys.first, day: day)) }
        return out
    }

    /// Whether `genesis` is the day's `board` (``board(circle:day:)``): its
    /// parameters, seed and layout are the derived ones. A game whose daily
    /// op names a day its board is not counts as an ordinary game, and so
    /// does a race on the day's board (each player's board of the day is a
    /// game of its own).
    public static func matches(_ genesis: Genesis, _ board: GeneratedBoard) -> Bool {
        !genesis.isRace && genesis.seed == board.seed && genesis.parameters == board.parameters && genesis.layout == board.layout
    }

    /// The day (days since 1970-01-01) that `millis` (ms since 1970) falls
    /// on, `utcOffsetSeconds` from UTC (the device's time zone).
    public static func day(ofMillis millis: UInt64, utcOffsetSeconds: Int) -> Int {
        let seconds = Int(millis / 1000) + utcOffsetSeconds
        return seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
    }

    /// The calendar date of `day`, as YYYY-MM-DD.
    public static func date(of day: Int) -> String {
        CivilDate(daysSince1970: Int64(day)).text
    }
}

/// The keys a circle's boards of the day are made with: its first key, and
/// each later key (epoch 1, 2, …) with the time its rekey record says it
/// was made (its author's clock).
public struct DailyKeys: Sendable {
    /// The circle's first key (epoch 0).
    public let first: CircleKey
    /// The later keys in epoch order: when each rekey record was made (ms
    /// since 1970), and the key when this device holds it.
    public let later: [(madeMillis: UInt64, key: CircleKey?)]

    /// The keys of a circle whose first key is `first` and whose later
    /// keys are `later`, in epoch order.
    public init(first: CircleKey, later: [(madeMillis: UInt64, key: CircleKey?)] = []) {
        self.first = first
        self.later = later
    }

    /// The epoch whose key makes `day`'s board: the newest one whose rekey
    /// record was made before the day began anywhere (its midnight UTC less
    /// ``DailyBoard/earliestStartMillis``), 0 (the first key) when none was.
    public func epoch(for day: Int) -> Int {
        let start = UInt64(max(0, day)) * 86_400_000
        let cutoff = start > DailyBoard.earliestStartMillis ? start - DailyBoard.earliestStartMillis : 0
        return later.indices.last { later[$0].madeMillis < cutoff }.map { $0 + 1 } ?? 0
    }

    /// The key that makes `day`'s board (``epoch(for:)``), `nil` when this
    /// device does not hold it.
    public func key(for day: Int) -> CircleKey? {
        let e = epoch(for: day)
        return e == 0 ? first : later[e - 1].key
    }
}

extension GameReplica {
    /// In a board of the day, drops every op of an author other than the
    /// creator (accepted before the creator's daily op came, or waiting)
    /// and derives the state again, so that the game holds what it would
    /// had the daily op come first. Returns the accepted ops dropped.
    mutating func dropOthersFromDaily() throws -> [Op] {
        guard let creator, state?.isDaily == true else { return [] }
        var dropped: [Op] = []
        for author in Set(authors).union(pendingAuthors).sorted() where author != creator { dropped += try truncate(author, keeping: 0) }
        return dropped
    }

    /// Whether an author other than the creator has an op held or waiting
    /// in a board of the day (see ``dropOthersFromDaily()``).
    var holdsOthersInDaily: Bool {
        guard let creator, state?.isDaily == true else { return false }
        return authors.contains { $0 != creator } || pendingAuthors.contains { $0 != creator }
    }
}
