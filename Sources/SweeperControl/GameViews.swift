import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SweeperConventions

// The games as answers and events show them: status, summary, full view,
// players, cells.

/// Where a game stands: `playing`, `won` or `lost`.
public enum PlayStatus: String, Codable, Equatable, Sendable, CaseIterable {
    /// Cells remain to be opened.
    case playing
    /// Every safe cell is open.
    case won
    /// A mine was opened.
    case lost
}

/// What a hint says of its cell.
public enum HintKind: String, Codable, Equatable, Sendable {
    /// The cell can be proven free of mines.
    case safe
}

/// One player of a game and their score.
public struct PlayerScore: Codable, Equatable, Sendable {
    /// The player's peer id.
    public var id: String
    /// The player's name.
    public var name: String
    /// The safe cells they opened first (the opening is nobody's).
    public var score: Int
    /// The colour the player chose (1–8, see ``PlayerColours``); absent
    /// for the one derived from their id.
    public var colour: Int?
    /// Their letter beside a cell, the same on every screen
    /// (``PlayerLetters``); absent from older daemons.
    public var letter: String?

    /// Creates a player score.
    public init(id: String, name: String, score: Int, colour: Int? = nil) {
        self.id = id
        self.name = name
        self.score = score
        self.colour = colour
    }
}

/// A game as listed by `games`.
public struct GameSummary: Codable, Equatable, Sendable {
    /// The full game id.
    public var id: String
    /// Width in cells.
    public var width: Int
    /// Height in cells.
    public var height: Int
    /// Number of mines.
    public var mines: Int
    /// `playing`, `won` or `lost`.
    public var status: PlayStatus
    /// Share of safe cells revealed, 0...1.
    public var progress: Double
    /// Played time in seconds: while at least one player had the game open
    /// in a viewer (or moved in it), to its end (see `Docs/control-protocol.md`).
    public var elapsedSeconds: Int
    /// Names of the players who made a move.
    public var players: [String]
    /// Creation time, seconds since 1970.
    public var created: Double
    /// When the game was won or lost, seconds since 1970; absent while playing.
    public var ended: Double?
    /// Whether a player used the cheat.
    public var assisted: Bool
    /// The names of the devices that may move, when the creator chose them
    /// (creator first); absent when every member of the circle may.
    public var chosenPlayers: [String]?
    /// True when this device may not move in the game (it watches); absent otherwise.
    public var watching: Bool?
    /// True when the game is archived (hidden from lists unless asked for); absent otherwise.
    public var archived: Bool?
    /// True when the game is private (only its players read it); absent otherwise.
    public var privateGame: Bool?
    /// True when the game is only on this device: held from before it
    /// joined its circle, readable here and never sent to the circle; absent otherwise.
    public var onlyHere: Bool?
    /// True for a race (each racer on a board of its own); absent otherwise.
    public var race: Bool?
    /// True for a no-guess board; absent otherwise.
    public var noGuess: Bool?
    /// For a board of the day: its day (`YYYY-MM-DD`); absent otherwise.
    public var daily: String?
    /// True when its seed was chosen: practice, never a record; absent otherwise.
    public var seeded: Bool?

    /// Creates a summary.
    public init(
        id: String, width: Int, height: Int, mines: Int, status: PlayStatus, progress: Double, elapsedSeconds: Int,
        players: [String], created: Double, ended: Double? = nil, assisted: Bool, chosenPlayers: [String]? = nil,
        watching: Bool? = nil, archived: Bool? = nil, privateGame: Bool? = nil, onlyHere: Bool? = nil, race: Bool? = nil
    ) {
        self.race = race
        self.privateGame = privateGame
        self.onlyHere = onlyHere
        self.chosenPlayers = chosenPlayers
        self.watching = watching
        self.archived = archived
        self.ended = ended
        self.id = id
        self.width = width
        self.height = height
        self.mines = mines
        self.status = status
        self.progress = progress
        self.elapsedSeconds = elapsedSeconds
        self.players = players
        self.created = created
        self.assisted = assisted
    }
}

/// A cell's position.
public struct CellPosition: Codable, Equatable, Hashable, Sendable {
    /// Column.
    public var x: Int
    /// Row.
    public var y: Int

    /// Creates a position.
    public init(x: Int, y: Int) {
        self.x = x
        self.y = y
    }
}

/// A whole game as shown by `show`.
public struct GameView: Codable, Equatable, Sendable {
    /// The full game id.
    public var id: String
    /// Width in cells.
    public var width: Int
    /// Height in cells.
    public var height: Int
    /// Number of mines.
    public var mines: Int
    /// `playing`, `won` or `lost`.
    public var status: PlayStatus
    /// A digest of the replicated state; equal on peers holding the same ops.
    public var digest: String
    /// Number of revealed cells.
    public var revealed: Int
    /// Number of flags on covered cells.
    public var flags: Int
    /// One string per row: `#` covered, `F` flag, `?` question, `.` zero, `1`–`8`,
    /// `*` a mine shown after the game ends, `X` the mine that went off.
    public var board: [String]
    /// Players and scores, highest score first.
    public var players: [PlayerScore]
    /// The peer id of the player who tripped the mine, if any.
    public var trippedBy: String?
    /// Played time in seconds: while at least one player had the game open
    /// in a viewer (or moved in it), to its end (see `Docs/control-protocol.md`).
    public var elapsedSeconds: Int
    /// Share of safe cells revealed, 0...1.
    public var progress: Double
    /// Whether a player used the cheat.
    public var assisted: Bool
    /// Whether flags cycle through question marks.
    public var questionMarks: Bool
    /// With `--cheat`: rows of `.` and `*`.
    public var mineLayout: [String]?
    /// After a loss: the flagged cells that held no mine (absent otherwise).
    public var wrongFlags: [CellPosition]?
    /// Creation time, seconds since 1970.
    public var created: Double?
    /// When the game was won or lost, seconds since 1970; absent while playing.
    public var ended: Double?
    /// The names of the devices that may move, when the creator chose them
    /// (creator first); absent when every member of the circle may.
    public var chosenPlayers: [String]?
    /// True when this device may not move in the game (it watches); absent otherwise.
    public var watching: Bool?
    /// True when the game is archived; absent otherwise.
    public var archived: Bool?
    /// True when the game is private (only its players read it); absent otherwise.
    public var privateGame: Bool?
    /// Players shown to have signed two different moves at one place in
    /// their chain (a broken device, or an attack: devices that got the
    /// moves in other orders show different boards); absent when none.
    public var equivocatedBy: [String]?
    /// Names of players whose moves past what a game can take were refused
    /// (``GameReplica/opQuota``: a device in bad faith); absent when none.
    public var overQuotaBy: [String]?
    /// True when the game is only on this device (see ``GameSummary/onlyHere``); absent otherwise.
    public var onlyHere: Bool?
    /// The opening: the mine-free cell revealed when the game began (where a viewer opens).
    public var start: CellPosition?
    /// True for a no-guess board; absent otherwise.
    public var noGuess: Bool?
    /// True when the creator chose the seed (practice: not a record); absent otherwise.
    public var seeded: Bool?
    /// Who asked for hints, and how many; absent when nobody did.
    public var hints: [Commands.HintCount]?
    /// Who looked at the mines, and when; absent when nobody did.
    public var peeks: [Commands.Peek]?
    /// Once the game is won or lost: how it ended, the same on every device.
    public var ending: GameEnding?
    /// For a board of the day: the day's results and streaks.
    public var daily: Commands.DailyTable?
    /// For a race: whose board this view shows, and every racer's standing.
    public var race: Commands.RaceTable?

    /// Creates a view.
    public init(
        id: String, width: Int, height: Int, mines: Int, status: PlayStatus, digest: String, revealed: Int, flags: Int,
        board: [String], players: [PlayerScore], trippedBy: String?, elapsedSeconds: Int, progress: Double,
        assisted: Bool, questionMarks: Bool, mineLayout: [String]? = nil, wrongFlags: [CellPosition]? = nil,
        created: Double? = nil, ended: Double? = nil, chosenPlayers: [String]? = nil, watching: Bool? = nil,
        archived: Bool? = nil, privateGame: Bool? = nil, equivocatedBy: [String]? = nil, onlyHere: Bool? = nil,
        start: CellPosition? = nil
    ) {
        self.start = start
        self.privateGame = privateGame
        self.equivocatedBy = equivocatedBy
        self.onlyHere = onlyHere
        self.chosenPlayers = chosenPlayers
        self.watching = watching
        self.archived = archived
        self.created = created
        self.ended = ended
        self.id = id
        self.width = width
        self.height = height
        self.mines = mines
        self.status = status
        self.digest = digest
        self.revealed = revealed
        self.flags = flags
        self.board = board
        self.players = players
        self.trippedBy = trippedBy
        self.elapsedSeconds = elapsedSeconds
        self.progress = progress
        self.assisted = assisted
        self.questionMarks = questionMarks
        self.mineLayout = mineLayout
        self.wrongFlags = wrongFlags
    }

    private enum CodingKeys: String, CodingKey {
        case id, width, height, mines, status, digest, revealed, flags, board, players, trippedBy, elapsedSeconds
        case progress, assisted, questionMarks, mineLayout, wrongFlags, created, ended, chosenPlayers, watching, archived, privateGame
        case equivocatedBy, overQuotaBy, onlyHere, start, noGuess, seeded, hints, peeks, ending, daily, race
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(width, forKey: .width)
        try c.encode(height, forKey: .height)
        try c.encode(mines, forKey: .mines)
        try c.encode(status, forKey: .status)
        try c.encode(digest, forKey: .digest)
        try c.encode(revealed, forKey: .revealed)
        try c.encode(flags, forKey: .flags)
        try c.encode(board, forKey: .board)
        try c.encode(players, forKey: .players)
        // Absent, like every field without a value, unless a mine went off.
        try c.encodeIfPresent(trippedBy, forKey: .trippedBy)
        try c.encode(elapsedSeconds, forKey: .elapsedSeconds)
        try c.encode(progress, forKey: .progress)
        try c.encode(assisted, forKey: .assisted)
        try c.encode(questionMarks, forKey: .questionMarks)
        try c.encodeIfPresent(mineLayout, forKey: .mineLayout)
        try c.encodeIfPresent(wrongFlags, forKey: .wrongFlags)
        try c.encodeIfPresent(created, forKey: .created)
        try c.encodeIfPresent(ended, forKey: .ended)
        try c.encodeIfPresent(chosenPlayers, forKey: .chosenPlayers)
        try c.encodeIfPresent(watching, forKey: .watching)
        try c.encodeIfPresent(archived, forKey: .archived)
        try c.encodeIfPresent(privateGame, forKey: .privateGame)
        try c.encodeIfPresent(equivocatedBy, forKey: .equivocatedBy)
        try c.encodeIfPresent(overQuotaBy, forKey: .overQuotaBy)
        try c.encodeIfPresent(onlyHere, forKey: .onlyHere)
        try c.encodeIfPresent(start, forKey: .start)
        try c.encodeIfPresent(noGuess, forKey: .noGuess)
        try c.encodeIfPresent(seeded, forKey: .seeded)
        try c.encodeIfPresent(hints, forKey: .hints)
        try c.encodeIfPresent(peeks, forKey: .peeks)
        try c.encodeIfPresent(ending, forKey: .ending)
        try c.encodeIfPresent(daily, forKey: .daily)
        try c.encodeIfPresent(race, forKey: .race)
    }
}

/// One cell whose look changed, with its new look (a `board` character).
public struct CellChange: Codable, Equatable, Sendable {
    /// Column.
    public var x: Int
    /// Row.
    public var y: Int
    /// The cell's new look, as in ``GameView/board``.
    public var value: String

    /// Creates a cell change.
    public init(x: Int, y: Int, value: String) {
        self.x = x
        self.y = y
        self.value = value
    }
}

/// Which games a device syncs (the daemon and its clients agree on it:
/// it lives in SweeperConventions).
public typealias SyncMode = SweeperConventions.SyncMode

/// A game linked peers hold and this device does not, known from their
/// summaries only (no board until it is followed).
public struct AvailableGame: Codable, Equatable, Sendable {
    /// The full game id.
    public var id: String
    /// The most ops any of those peers holds of it.
    public var ops: Int
    /// How many players made those ops.
    public var players: Int
    /// The peers that hold it (their names, or short ids when unnamed).
    public var heldBy: [String]
    /// Whether this device forgot it.
    public var forgotten: Bool
    /// The players who made those ops, by name (creator first).
    public var playerNames: [String]?
    /// Columns, rows and mines; absent when no peer described the game (a
    /// private game, or peers older than protocol 11).
    public var width: Int?, height: Int?, mines: Int?
    /// Whether it is a no-guess board (with the size).
    public var noGuess: Bool?
    /// Who created it (with the size).
    public var creator: String?
    /// When it was created, seconds since 1970 (with the size).
    public var created: Double?
    /// Where it stands and the share of safe cells revealed, as the peer
    /// that described it says (with the size).
    public var status: PlayStatus?, progress: Double?
    /// The devices the creator chose to move, when it chose (with the size).
    public var chosenPlayers: [String]?

    /// Creates an entry.
    public init(id: String, ops: Int, players: Int, heldBy: [String], forgotten: Bool) {
        self.id = id
        self.ops = ops
        self.players = players
        self.heldBy = heldBy
        self.forgotten = forgotten
    }
}

/// How a game ended: what `show` prints and every viewer shows at the win
/// or the loss. Everything in it is derived from the game's ops and the
/// players' signed shares of time, so every device shows the same.
public struct GameEnding: Codable, Equatable, Sendable {
    /// `won` or `lost`.
    public var status: PlayStatus
    /// Played time in seconds.
    public var seconds: Int
    /// The same in milliseconds (3BV/s is reckoned from it). Absent from older daemons.
    public var millis: Int?
    /// The board's 3BV (Bechtel's Board Benchmark Value).
    public var threeBV: Int
    /// The 3BV revealed (all of it after a win).
    public var solvedThreeBV: Int
    /// Solved 3BV per second of played time (absent for no time).
    public var threeBVPerSecond: Double?
    /// Moves, the opening counted as one and a chord as one.
    public var clicks: Int
    /// Solved 3BV / clicks.
    public var efficiency: Double
    /// Each player's part, most 3BV first.
    public var parts: [PlayerPart]
    /// Who tripped the mine, where, and how far into the game (seconds from its start).
    public var trippedBy: String?, trippedAt: CellPosition?, trippedAfterSeconds: Int?
    /// In a loss: a player whose reveal completed the board, a win that did
    /// not stand because a mine went off first while they were apart.
    public var winThatDidNotStand: String?
    /// Whether the game is a ranked win: won by playing, with no hint, no look at the mines and no seed chosen.
    public var ranked: Bool
    /// Why it does not, in words ("Mum asked for 2 hints"); absent when it does.
    public var notRanked: String?
    /// A new record set by this game, in words ("Best 16×16 (40) no-guess time: Sam & Mum, 0:01:42").
    public var record: String?

    /// One player's part.
    public struct PlayerPart: Codable, Equatable, Sendable {
        /// The player.
        public var name: String
        /// Safe cells they revealed first, and the 3BV they opened.
        public var cellsOpened: Int, threeBV: Int
        /// Flags they set on mines, and on safe cells.
        public var flagsRight: Int, flagsWrong: Int
        /// Their moves.
        public var clicks: Int
        /// Hints they asked for.
        public var hints: Int
        /// When they first looked at the mines, seconds since 1970; absent if they did not.
        public var peekedAt: Double?
        /// Creates a part.
        public init(name: String, cellsOpened: Int, threeBV: Int, flagsRight: Int, flagsWrong: Int, clicks: Int, hints: Int, peekedAt: Double?) {
            self.name = name
            self.cellsOpened = cellsOpened
            self.threeBV = threeBV
            self.flagsRight = flagsRight
            self.flagsWrong = flagsWrong
            self.clicks = clicks
            self.hints = hints
            self.peekedAt = peekedAt
        }
    }

    /// Creates an ending.
    public init(
        status: PlayStatus, seconds: Int, threeBV: Int, solvedThreeBV: Int, threeBVPerSecond: Double?, clicks: Int, efficiency: Double,
        parts: [PlayerPart], trippedBy: String? = nil, trippedAt: CellPosition? = nil, trippedAfterSeconds: Int? = nil,
        winThatDidNotStand: String? = nil, ranked: Bool, notRanked: String? = nil, record: String? = nil
    ) {
        self.notRanked = notRanked
        self.status = status
        self.seconds = seconds
        self.threeBV = threeBV
        self.solvedThreeBV = solvedThreeBV
        self.threeBVPerSecond = threeBVPerSecond
        self.clicks = clicks
        self.efficiency = efficiency
        self.parts = parts
        self.trippedBy = trippedBy
        self.trippedAt = trippedAt
        self.trippedAfterSeconds = trippedAfterSeconds
        self.winThatDidNotStand = winThatDidNotStand
        self.ranked = ranked
        self.record = record
    }
}
