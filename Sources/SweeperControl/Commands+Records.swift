import FoundationEssentials

/// The records: best times, the boards of the day, who was helped.
extension Commands {
    /// One best time.
    public struct BestTime: Codable, Equatable, Sendable {
        /// Width in cells.
        public var width: Int
        /// Height in cells.
        public var height: Int
        /// Number of mines.
        public var mines: Int
        /// The best time in milliseconds of played time, which ranks it: a
        /// win in under a second keeps its real time.
        public var playedMillis: Int
        /// The game that set it.
        public var game: String
        /// Its players.
        public var playerNames: [String]
        /// When it was played (its start), milliseconds since 1970.
        public var startedAt: Int64
        /// When it was won, milliseconds since 1970.
        public var endedAt: Int64?
        /// Whether the board was a no-guess one (ranked apart from classic boards).
        public var noGuess: Bool?
        /// The board's 3BV per second of played time (absent for no time).
        public var threeBVPerSecond: Double?
        /// Creates a best time.
        public init(width: Int, height: Int, mines: Int, playedMillis: Int, game: String, playerNames: [String], startedAt: Int64, endedAt: Int64? = nil) {
            self.endedAt = endedAt
            self.width = width
            self.height = height
            self.mines = mines
            self.playedMillis = playedMillis
            self.game = game
            self.playerNames = playerNames
            self.startedAt = startedAt
        }
    }

    /// `scores`: the records of games won by playing (no hint, no look at
    /// the mines, no seed chosen), ranked per class; the others apart.
    public enum Scores: ControlCommand {
        public static let name = "scores"
        /// `player`: also that player's records and totals (a name);
        /// `daily`: also today's board of the day, its results and streaks.
        public struct Arguments: Codable, Equatable, Sendable {
            /// A player's name.
            public var player: String?
            /// Whether to give the day's table.
            public var daily: Bool?
            /// Creates the arguments.
            public init(player: String? = nil, daily: Bool? = nil) {
                self.player = player
                self.daily = daily
            }
        }
        /// The records.
        public struct Result: Codable, Equatable, Sendable {
            /// The best time of each class (as before classes: kept for scripts).
            public var scores: [BestTime]
            /// Each class of board (size and mines, no-guess or classic) with
            /// its ten best times, fastest first; classes by size.
            public var classes: [ScoreClass]?
            /// Games won with help, not ranked: who asked for hints, who looked at the mines.
            public var assistedWins: [AssistedWin]?
            /// Games won whose creator chose the seed (practice), not ranked.
            public var practice: [BestTime]?
            /// With `player`: that player's records and totals.
            public var player: PlayerRecord?
            /// With `daily`: today's board of the day, its results and streaks.
            public var daily: DailyTable?
            /// Creates the list.
            public init(
                scores: [BestTime], classes: [ScoreClass]? = nil, assistedWins: [AssistedWin]? = nil, practice: [BestTime]? = nil,
                player: PlayerRecord? = nil, daily: DailyTable? = nil
            ) {
                self.scores = scores
                self.classes = classes
                self.assistedWins = assistedWins
                self.practice = practice
                self.player = player
                self.daily = daily
            }
        }
    }

    /// `daily`: this player's board of the day (today by this device's
    /// clock and time zone): the one it began, else a new one, the same
    /// board on every member's device. The result is the game, as `show`
    /// gives it, with the day's table.
    public enum Daily: ControlCommand {
        public static let name = "daily"
        public typealias Arguments = Empty
        public typealias Result = GameView
    }

    /// A day's board of the day: every player's result, and who has won it
    /// how many days in a row.
    public struct DailyTable: Codable, Equatable, Sendable {
        /// The day, as YYYY-MM-DD.
        public var date: String
        /// Each player's game of the day: won first (fastest first), then
        /// those still playing (furthest first), then lost.
        public var results: [DailyResult]
        /// Each player who has won the board of the day on the days before
        /// and on this one (or up to yesterday, today not won yet), most days first.
        public var streaks: [DailyStreak]
        /// Creates a table.
        public init(date: String, results: [DailyResult], streaks: [DailyStreak]) {
            self.date = date
            self.results = results
            self.streaks = streaks
        }
    }

    /// One player's game of the day.
    public struct DailyResult: Codable, Equatable, Sendable {
        /// The player's name.
        public var name: String
        /// Their peer id.
        public var peer: String
        /// The game's full id.
        public var game: String
        /// How it stands.
        public var status: PlayStatus
        /// Its played time, in milliseconds (times rank by it).
        public var playedMillis: Int
        /// Share of safe cells revealed.
        public var progress: Double
        /// 3BV per second, once won.
        public var threeBVPerSecond: Double?
        /// Whether they asked for a hint or looked at the mines.
        public var assisted: Bool?
        /// Creates a result.
        public init(
            name: String, peer: String, game: String, status: PlayStatus, playedMillis: Int, progress: Double,
            threeBVPerSecond: Double? = nil, assisted: Bool? = nil
        ) {
            self.name = name
            self.peer = peer
            self.game = game
            self.status = status
            self.playedMillis = playedMillis
            self.progress = progress
            self.threeBVPerSecond = threeBVPerSecond
            self.assisted = assisted
        }
    }

    /// A player's run of days with the board of the day won.
    public struct DailyStreak: Codable, Equatable, Sendable {
        /// The player's name.
        public var name: String
        /// Their peer id.
        public var peer: String
        /// Days in a row.
        public var days: Int
        /// Creates a streak.
        public init(name: String, peer: String, days: Int) {
            self.name = name
            self.peer = peer
            self.days = days
        }
    }

    /// One class of records: a size with its mines, no-guess or classic.
    public struct ScoreClass: Codable, Equatable, Sendable {
        /// How the class is named: a preset's name and size, or the size.
        public var name: String
        /// The board.
        public var width: Int, height: Int, mines: Int
        /// No-guess boards are ranked apart (they are easier at equal size).
        public var noGuess: Bool
        /// The ten best times, fastest first (ties: the earlier game first).
        public var best: [BestTime]
        /// Creates a class.
        public init(name: String, width: Int, height: Int, mines: Int, noGuess: Bool, best: [BestTime]) {
            self.name = name
            self.width = width
            self.height = height
            self.mines = mines
            self.noGuess = noGuess
            self.best = best
        }
    }

    /// A game won with help: not a record.
    public struct AssistedWin: Codable, Equatable, Sendable {
        /// The win.
        public var win: BestTime
        /// Who asked for hints, and how many.
        public var hints: [HintCount]
        /// Who looked at the mines, and when (ms since 1970).
        public var peeks: [Peek]
        /// Creates an entry.
        public init(win: BestTime, hints: [HintCount], peeks: [Peek]) {
            self.win = win
            self.hints = hints
            self.peeks = peeks
        }
    }

    /// A player's records and totals, as `scores --player` gives them.
    public struct PlayerRecord: Codable, Equatable, Sendable {
        /// The player.
        public var name: String
        /// Games this player made a move in.
        public var played: Int
        /// Of those, won and lost.
        public var won: Int, lost: Int
        /// Mines this player tripped.
        public var minesTripped: Int
        /// The player's best 3BV per second over ranked wins (absent without one).
        public var bestThreeBVPerSecond: Double?
        /// The player's best time in each class (ranked wins they played in).
        public var records: [BestTime]
        /// Creates a record.
        public init(name: String, played: Int, won: Int, lost: Int, minesTripped: Int, bestThreeBVPerSecond: Double?, records: [BestTime]) {
            self.name = name
            self.played = played
            self.won = won
            self.lost = lost
            self.minesTripped = minesTripped
            self.bestThreeBVPerSecond = bestThreeBVPerSecond
            self.records = records
        }
    }

    /// How many hints a player asked for.
    public struct HintCount: Codable, Equatable, Sendable {
        /// The player.
        public var name: String
        /// Hints asked for.
        public var hintCount: Int
        /// Creates a count.
        public init(name: String, hintCount: Int) {
            self.name = name
            self.hintCount = hintCount
        }
    }

    /// A player who looked at the mines.
    public struct Peek: Codable, Equatable, Sendable {
        /// The player.
        public var name: String
        /// When they first looked, milliseconds since 1970.
        public var peekedAt: Int64
        /// Creates a peek.
        public init(name: String, peekedAt: Int64) {
            self.name = name
            self.peekedAt = peekedAt
        }
    }
}
