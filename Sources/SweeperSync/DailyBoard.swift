import SweeperConventions
import SweeperCrypto
import SweeperGame

/// The board of the day: one no-guess intermediate board a day (16×16, 40
/// mines, the centre opened first) for a whole circle, the same on every
/// member's device, derived from the circle's first key and the day. No
/// player chooses it, and nobody outside the circle can make it; a member
/// who runs the derivation ahead of time can know tomorrow's, as with any
/// board made from a rule (the daily puzzles of newspapers likewise).
///
/// Each player plays the day's board once, as a game of their own (its
/// genesis is the derived board and a ``OpPayload/daily(day:)`` op by its
/// creator names the day), so a device that was apart all day plays the
/// same board, and its result joins the day's table when it links.
public enum DailyBoard {
    /// The largest day a daily op may name (days since 1970-01-01).
    public static let dayLimit = 10_000_000

    /// The board of every day: intermediate, no-guess, opened from the centre.
    public static func parameters() throws(ParameterError) -> GameParameters {
        try GameParameters(width: 16, height: 16, mines: 40, start: Cell(x: 8, y: 8), noGuess: true)
    }

    /// The generator's seed of `day`'s board in the circle whose first key
    /// is `circle`: keyed BLAKE2b-64 of "sweeper/daily/v1" and the day
    /// (varint), read big-endian.
    public static func seed(circle: CircleKey, day: Int) -> UInt64 {
        var w = ByteWriter(capacity: 4)
        w.varint(day)
        let digest = Blake2b.keyedHash(key: circle.secret, Array("sweeper/daily/v1".utf8), w.bytes, length: 8)
        return digest.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// `day`'s board in the circle whose first key is `circle`.
    public static func board(circle: CircleKey, day: Int) throws -> GeneratedBoard {
        try Generator.generate(try parameters(), seed: seed(circle: circle, day: day))
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
