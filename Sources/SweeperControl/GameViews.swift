import FoundationEssentials
import SweeperConventions

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The games as answers and events show them: status, listing, full view,
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
    public var peer: String
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
    public init(peer: String, name: String, score: Int, colour: Int? = nil) {
        self.peer = peer
        self.name = name
        self.score = score
        self.colour = colour
    }
}

/// A game as listed by `games`.
public struct GameListing: Codable, Equatable, Sendable {
    /// The full game id.
    public var game: String
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
    /// Played time in milliseconds: while at least one player had the game open
    /// in a viewer (or moved in it), to its end (see `Docs/control-protocol.md`).
    public var elapsedMillis: Int
    /// Names of the players who made a move.
    public var playerNames: [String]
    /// Creation time, milliseconds since 1970.
    public var createdAt: Int64
    /// When the game was won or lost, milliseconds since 1970; absent while playing.
    public var endedAt: Int64?
    /// Whether a player had help: a hint, or a peek at the mines.
    public var assisted: Bool
    /// The names of the devices that may move, when the creator chose them
    /// (creator first); absent when every member of the circle may.
    public var chosenPlayerNames: [String]?
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
    public var day: String?
    /// True when its seed was chosen: practice, never a record; absent otherwise.
    public var seeded: Bool?

    /// Creates a listing.
    public init(
        game: String, width: Int, height: Int, mines: Int, status: PlayStatus, progress: Double, elapsedMillis: Int,
        playerNames: [String], createdAt: Int64, endedAt: Int64? = nil, assisted: Bool, chosenPlayerNames: [String]? = nil,
        watching: Bool? = nil, archived: Bool? = nil, privateGame: Bool? = nil, onlyHere: Bool? = nil, race: Bool? = nil
    ) {
        self.race = race
        self.privateGame = privateGame
        self.onlyHere = onlyHere
        self.chosenPlayerNames = chosenPlayerNames
        self.watching = watching
        self.archived = archived
        self.endedAt = endedAt
        self.game = game
        self.width = width
        self.height = height
        self.mines = mines
        self.status = status
        self.progress = progress
        self.elapsedMillis = elapsedMillis
        self.playerNames = playerNames
        self.createdAt = createdAt
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
    public var game: String
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
    public var trippedByPeer: String?
    /// Played time in milliseconds: while at least one player had the game open
    /// in a viewer (or moved in it), to its end (see `Docs/control-protocol.md`).
    public var elapsedMillis: Int
    /// Share of safe cells revealed, 0...1.
    public var progress: Double
    /// Whether a player had help: a hint, or a peek at the mines.
    public var assisted: Bool
    /// Whether flags cycle through question marks.
    public var questionMarks: Bool
    /// With `--peek`: rows of `.` and `*`.
    public var mineLayout: [String]?
    /// After a loss: the flagged cells that held no mine (absent otherwise).
    public var wrongFlags: [CellPosition]?
    /// Creation time, milliseconds since 1970.
    public var createdAt: Int64?
    /// When the game was won or lost, milliseconds since 1970; absent while playing.
    public var endedAt: Int64?
    /// The names of the devices that may move, when the creator chose them
    /// (creator first); absent when every member of the circle may.
    public var chosenPlayerNames: [String]?
    /// True when this device may not move in the game (it watches); absent otherwise.
    public var watching: Bool?
    /// True when the game is archived; absent otherwise.
    public var archived: Bool?
    /// True when the game is private (only its players read it); absent otherwise.
    public var privateGame: Bool?
    /// Players shown to have signed two different moves at one place in
    /// their chain (a broken device, or an attack: devices that got the
    /// moves in other orders show different boards); absent when none.
    public var equivocatedByNames: [String]?
    /// Names of players whose moves past what a game can take were refused
    /// (``GameReplica/opQuota``: a device in bad faith); absent when none.
    public var overQuotaByNames: [String]?
    /// True when the game is only on this device (see ``GameListing/onlyHere``); absent otherwise.
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
        game: String, width: Int, height: Int, mines: Int, status: PlayStatus, digest: String, revealed: Int, flags: Int,
        board: [String], players: [PlayerScore], trippedByPeer: String?, elapsedMillis: Int, progress: Double,
        assisted: Bool, questionMarks: Bool, mineLayout: [String]? = nil, wrongFlags: [CellPosition]? = nil,
        createdAt: Int64? = nil, endedAt: Int64? = nil, chosenPlayerNames: [String]? = nil, watching: Bool? = nil,
        archived: Bool? = nil, privateGame: Bool? = nil, equivocatedByNames: [String]? = nil, onlyHere: Bool? = nil,
        start: CellPosition? = nil
    ) {
        self.start = start
        self.privateGame = privateGame
        self.equivocatedByNames = equivocatedByNames
        self.onlyHere = onlyHere
        self.chosenPlayerNames = chosenPlayerNames
        self.watching = watching
        self.archived = archived
        self.createdAt = createdAt
        self.endedAt = endedAt
        self.game = game
        self.width = width
        self.height = height
        self.mines = mines
        self.status = status
        self.digest = digest
        self.revealed = revealed
        self.flags = flags
        self.board = board
        self.players = players
        self.trippedByPeer = trippedByPeer
        self.elapsedMillis = elapsedMillis
        self.progress = progress
        self.assisted = assisted
        self.questionMarks = questionMarks
        self.mineLayout = mineLayout
        self.wrongFlags = wrongFlags
    }

    private enum CodingKeys: String, CodingKey {
        case game, width, height, mines, status, digest, revealed, flags, board, players, trippedByPeer, elapsedMillis
        case progress, assisted, questionMarks, mineLayout, wrongFlags, createdAt, endedAt, chosenPlayerNames, watching, archived, privateGame
        case equivocatedByNames, overQuotaByNames, onlyHere, start, noGuess, seeded, hints, peeks, ending, daily, race
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(game, forKey: .game)
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
        try c.encodeIfPresent(trippedByPeer, forKey: .trippedByPeer)
        try c.encode(elapsedMillis, forKey: .elapsedMillis)
        try c.encode(progress, forKey: .progress)
        try c.encode(assisted, forKey: .assisted)
        try c.encode(questionMarks, forKey: .questionMarks)
        try c.encodeIfPresent(mineLayout, forKey: .mineLayout)
        try c.encodeIfPresent(wrongFlags, forKey: .wrongFlags)
        try c.encodeIfPresent(createdAt, forKey: .createdAt)
        try c.encodeIfPresent(endedAt, forKey: .endedAt)
        try c.encodeIfPresent(chosenPlayerNames, forKey: .chosenPlayerNames)
        try c.encodeIfPresent(watching, forKey: .watching)
        try c.encodeIfPresent(archived, forKey: .archived)
        try c.encodeIfPresent(privateGame, forKey: .privateGame)
        try c.encodeIfPresent(equivocatedByNames, forKey: .equivocatedByNames)
        try c.encodeIfPresent(overQuotaByNames, forKey: .overQuotaByNames)
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
    public var game: String
    /// The most ops any of those peers holds of it.
    public var ops: Int
    /// How many players made those ops.
    public var playerCount: Int
    /// The peers that hold it, by name.
    public var heldByPeers: [String]
    /// Their names (or short ids when unnamed), in the order of ``heldByPeers``.
    public var heldByNames: [String]
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
    public var creatorName: String?
    /// When it was created, milliseconds since 1970 (with the size).
    public var createdAt: Int64?
    /// Where it stands and the share of safe cells revealed, as the peer
    /// that described it says (with the size).
    public var status: PlayStatus?, progress: Double?
    /// The devices the creator chose to move, when it chose (with the size).
    public var chosenPlayerNames: [String]?

    /// Creates an entry.
    public init(game: String, ops: Int, playerCount: Int, heldByPeers: [String], heldByNames: [String], forgotten: Bool) {
        self.game = game
        self.ops = ops
        self.playerCount = playerCount
        self.heldByPeers = heldByPeers
        self.heldByNames = heldByNames
        self.forgotten = forgotten
    }
}

/// How a game ended: what `show` prints and every viewer shows at the win
/// or the loss. Everything in it is derived from the game's ops and the
/// players' signed shares of time, so every device shows the same.
public struct GameEnding: Codable, Equatable, Sendable {
    /// `won` or `lost`.
    public var status: PlayStatus
    /// Played time in milliseconds (3BV/s is reckoned from it).
    public var playedMillis: Int
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
    /// Who tripped the mine (a name), where, and how far into the game
    /// (milliseconds of played time from its start).
    public var trippedByName: String?, trippedCell: CellPosition?, trippedAfterMillis: Int?
    /// In a loss: the name of a player whose reveal completed the board, a
    /// win that did not stand because a mine went off first while they were apart.
    public var winThatDidNotStandName: String?
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
        public var hintCount: Int
        /// When they first looked at the mines, milliseconds since 1970; absent if they did not.
        public var peekedAt: Int64?
        /// Creates a part.
        public init(name: String, cellsOpened: Int, threeBV: Int, flagsRight: Int, flagsWrong: Int, clicks: Int, hintCount: Int, peekedAt: Int64?) {
            self.name = name
            self.cellsOpened = cellsOpened
            self.threeBV = threeBV
            self.flagsRight = flagsRight
            self.flagsWrong = flagsWrong
            self.clicks = clicks
            self.hintCount = hintCount
            self.peekedAt = peekedAt
        }
    }

    /// Creates an ending.
    public init(
        status: PlayStatus, playedMillis: Int, threeBV: Int, solvedThreeBV: Int, threeBVPerSecond: Double?, clicks: Int, efficiency: Double,
        parts: [PlayerPart], trippedByName: String? = nil, trippedCell: CellPosition? = nil, trippedAfterMillis: Int? = nil,
        winThatDidNotStandName: String? = nil, ranked: Bool, notRanked: String? = nil, record: String? = nil
    ) {
        self.notRanked = notRanked
        self.status = status
        self.playedMillis = playedMillis
        self.threeBV = threeBV
        self.solvedThreeBV = solvedThreeBV
        self.threeBVPerSecond = threeBVPerSecond
        self.clicks = clicks
        self.efficiency = efficiency
        self.parts = parts
        self.trippedByName = trippedByName
        self.trippedCell = trippedCell
        self.trippedAfterMillis = trippedAfterMillis
        self.winThatDidNotStandName = winThatDidNotStandName
        self.ranked = ranked
        self.record = record
    }
}
