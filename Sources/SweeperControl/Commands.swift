import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The commands of the control protocol.
public enum Commands {
    /// `status`: who this daemon is and what it holds.
    public enum Status: ControlCommand {
        public static let name = "status"
        public typealias Arguments = Empty
        /// The daemon's status.
        public struct Result: Codable, Equatable, Sendable {
            /// This daemon's printable peer id.
            public var peerID: String
            /// The player's name.
            public var name: String
            /// A short tag derived from the circle key (not the key).
            public var circleTag: String
            /// Addresses the daemon listens on for peers.
            public var listening: [String]
            /// The mDNS state (`disabled`, `running`, `unavailable: …`).
            public var mdns: String
            /// Connected peers.
            public var peers: Int
            /// Stored games.
            public var games: Int
            /// The daemon's version.
            public var version: String
            /// The daemon's process id.
            public var pid: Int32
            /// Who has a game open in a viewer now, and where (this daemon's
            /// own player included, marked `own`).
            public var presence: [PresenceInfo]?
            /// When this device was removed from its circle: who removed it,
            /// when, and what to do (absent while it is a member).
            public var removed: String?
            /// Creates a status result.
            public init(
                peerID: String, name: String, circleTag: String, listening: [String], mdns: String, peers: Int,
                games: Int, version: String, pid: Int32, presence: [PresenceInfo]? = nil, removed: String? = nil
            ) {
                self.presence = presence
                self.removed = removed
                self.peerID = peerID
                self.name = name
                self.circleTag = circleTag
                self.listening = listening
                self.mdns = mdns
                self.peers = peers
                self.games = games
                self.version = version
                self.pid = pid
            }
        }
    }

    /// `games`: every game, newest first; with `available`, also the games
    /// linked peers hold that this device does not.
    public enum Games: ControlCommand {
        public static let name = "games"
        /// Whether to list the games peers have too.
        public struct Arguments: Codable, Equatable, Sendable {
            /// Also list the games linked peers hold and this device does not.
            public var available: Bool?
            /// Also list archived games (marked `archived`).
            public var archived: Bool?
            /// Creates arguments.
            public init(available: Bool? = nil, archived: Bool? = nil) {
                self.available = available
                self.archived = archived
            }
        }
        /// The list.
        public struct Result: Codable, Equatable, Sendable {
            /// The games, newest first.
            public var games: [GameSummary]
            /// With `available`: the games linked peers hold and this device does not, most ops first.
            public var available: [AvailableGame]?
            /// Creates the list.
            public init(games: [GameSummary], available: [AvailableGame]? = nil) {
                self.games = games
                self.available = available
            }
        }
    }

    /// `follow`: take a game a peer has (or one forgotten) and catch it up at once.
    public enum Follow: ControlCommand {
        public static let name = "follow"
        public typealias Arguments = GameChoiceArguments
        public typealias Result = GameChoiceResult
    }

    /// `forget`: remove a game from this device: its ops leave the database,
    /// it leaves every list, and peers stop sending it, until `follow`.
    public enum Forget: ControlCommand {
        public static let name = "forget"
        public typealias Arguments = GameChoiceArguments
        public typealias Result = GameChoiceResult
    }

    /// `add-players`: lets more devices move in a game whose players its
    /// creator chose (the creator's request alone; players are never removed).
    public enum AddPlayers: ControlCommand {
        public static let name = "add-players"
        /// The game and who to add.
        public struct Arguments: Codable, Equatable, Sendable {
            /// A full game id or a unique prefix.
            public var game: String
            /// Names or peer ids of the circle's devices.
            public var players: [String]
            /// Creates arguments.
            public init(game: String, players: [String]) {
                self.game = game
                self.players = players
            }
        }
        /// Who may move now.
        public struct Result: Codable, Equatable, Sendable {
            /// The full game id.
            public var game: String
            /// The names of the devices that may move, creator first.
            public var chosenPlayers: [String]
            /// How many were added by this request (0 when all could move already).
            public var added: Int
            /// Creates the result.
            public init(game: String, chosenPlayers: [String], added: Int) {
                self.game = game
                self.chosenPlayers = chosenPlayers
                self.added = added
            }
        }
    }

    /// `archive`: hides a game from every device's `games` (a signed op),
    /// or shows it again.
    public enum Archive: ControlCommand {
        public static let name = "archive"
        /// The game, and which way.
        public struct Arguments: Codable, Equatable, Sendable {
            /// A full game id or a unique prefix.
            public var game: String
            /// `false` shows an archived game again; absent or `true` archives it.
            public var archived: Bool?
            /// Creates arguments.
            public init(game: String, archived: Bool? = nil) {
                self.game = game
                self.archived = archived
            }
        }
        /// Where the game stands now.
        public struct Result: Codable, Equatable, Sendable {
            /// The full game id.
            public var game: String
            /// Whether it is archived now.
            public var archived: Bool
            /// Whether this request changed it (false when it already was so).
            public var changed: Bool
            /// Creates the result.
            public init(game: String, archived: Bool, changed: Bool) {
                self.game = game
                self.archived = archived
                self.changed = changed
            }
        }
    }

    /// The game a `follow` or `forget` names.
    public struct GameChoiceArguments: Codable, Equatable, Sendable {
        /// A full game id or a unique prefix.
        public var game: String
        /// Creates arguments.
        public init(game: String) { self.game = game }
    }

    /// What a `follow` or `forget` did.
    public struct GameChoiceResult: Codable, Equatable, Sendable {
        /// The full game id.
        public var game: String
        /// `follow`: whether the game is held here already (else it comes
        /// from the peers that have it). `forget`: always false.
        public var held: Bool
        /// `forget`: the ops deleted from the database; `follow`: the ops held.
        public var ops: Int
        /// Creates the result.
        public init(game: String, held: Bool, ops: Int) {
            self.game = game
            self.held = held
            self.ops = ops
        }
    }

    /// `sync`: which games this device syncs; with a mode, sets it (kept
    /// across restarts, over the configuration's `sync`).
    public enum Sync: ControlCommand {
        public static let name = "sync"
        /// The mode to set, if any.
        public struct Arguments: Codable, Equatable, Sendable {
            /// `all` or `mine`; absent, the mode is only read.
            public var mode: SyncMode?
            /// Creates arguments.
            public init(mode: SyncMode? = nil) { self.mode = mode }
        }
        /// The mode in force and the choices made.
        public struct Result: Codable, Equatable, Sendable {
            /// The mode in force.
            public var mode: SyncMode
            /// Games followed (full ids, sorted).
            public var followed: [String]
            /// Games forgotten (full ids, sorted).
            public var forgotten: [String]
            /// Creates the result.
            public init(mode: SyncMode, followed: [String], forgotten: [String]) {
                self.mode = mode
                self.followed = followed
                self.forgotten = forgotten
            }
        }
    }

    /// `new`: make a game.
    public enum New: ControlCommand {
        public static let name = "new"
        /// Size by preset or by width, height and mines; options.
        public struct Arguments: Codable, Equatable, Sendable {
            /// `beginner`, `intermediate` or `expert`.
            public var preset: String?
            /// Width in cells.
            public var width: Int?
            /// Height in cells.
            public var height: Int?
            /// Number of mines.
            public var mines: Int?
            /// Whether the board must be solvable without guessing.
            public var noGuess: Bool?
            /// The generator's seed (random when absent).
            public var seed: UInt64?
            /// The start cell's column (centre when absent).
            public var startX: Int?
            /// The start cell's row (centre when absent).
            public var startY: Int?
            /// Whether marks cycle through question marks.
            public var questionMarks: Bool?
            /// Who may move besides the creator: names or peer ids of the
            /// circle's devices (the others watch). Absent: every member may.
            public var players: [String]?
            /// Whether only the players read the game (its moves sealed with
            /// a key sealed to each of them); needs `players`.
            public var privateGame: Bool?
            /// Whether the players race: each plays the same layout on a
            /// board of their own. The racers are this device and
            /// `players`, or every member of the circle when absent.
            public var race: Bool?
            /// Creates arguments.
            public init(
                preset: String? = nil, width: Int? = nil, height: Int? = nil, mines: Int? = nil, noGuess: Bool? = nil,
                seed: UInt64? = nil, startX: Int? = nil, startY: Int? = nil, questionMarks: Bool? = nil,
                players: [String]? = nil, privateGame: Bool? = nil, race: Bool? = nil
            ) {
                self.race = race
                self.players = players
                self.privateGame = privateGame
                self.preset = preset
                self.width = width
                self.height = height
                self.mines = mines
                self.noGuess = noGuess
                self.seed = seed
                self.startX = startX
                self.startY = startY
                self.questionMarks = questionMarks
            }
        }
        public typealias Result = GameView
    }

    /// Names a game: a full id, a unique prefix, or nothing for the most recent.
    public struct GameArguments: Codable, Equatable, Sendable {
        /// The game id or prefix.
        public var game: String?
        /// With `show`: add the mine layout, marking the game as assisted.
        public var cheat: Bool?
        /// With `show` and `replay` of a race: whose board (a racer's name
        /// or peer id); this device's own, or the creator's, when absent.
        public var racer: String?
        /// Creates arguments.
        public init(game: String?, cheat: Bool? = nil, racer: String? = nil) {
            self.game = game
            self.cheat = cheat
            self.racer = racer
        }
    }

    /// `resign GAME`: this player gives up its board in a race. Its part
    /// ends, lost; the others race on. The result is the game as `show`
    /// gives it.
    public enum Resign: ControlCommand {
        public static let name = "resign"
        public typealias Arguments = GameArguments
        public typealias Result = GameView
    }

    /// A race as it stands: each racer's own board, the same layout for all.
    public struct RaceTable: Codable, Equatable, Sendable {
        /// The peer id of the racer whose board the view shows.
        public var shown: String
        /// Every racer: those who won (fastest first), then those still
        /// playing (furthest first), then those who lost or gave up.
        public var racers: [RacerStanding]
        /// Once every racer finished: the winner's name (the fastest of
        /// those who cleared their board), absent when nobody did.
        public var winner: String?
        /// True once every racer's board ended; absent while racing.
        public var over: Bool?
        /// Creates a table.
        public init(shown: String, racers: [RacerStanding], winner: String? = nil, over: Bool? = nil) {
            self.shown = shown
            self.racers = racers
            self.winner = winner
            self.over = over
        }

        /// `racers` in the table's order: won (fastest first), playing
        /// (furthest first), then lost or given up; by name within each.
        public static func ordered(_ racers: [RacerStanding]) -> [RacerStanding] {
            let rank = { (r: RacerStanding) -> Int in r.status == .won ? 0 : r.status == .playing ? 1 : 2 }
            let key = { (r: RacerStanding) in (rank(r), r.status == .won ? Double(r.seconds ?? 0) : -r.progress, r.name) }
            return racers.sorted { key($0) < key($1) }
        }
    }

    /// One racer's board in a race.
    public struct RacerStanding: Codable, Equatable, Sendable {
        /// The racer's peer id.
        public var id: String
        /// The racer's name.
        public var name: String
        /// The colour the racer chose (1–8), when it chose one.
        public var colour: Int?
        /// How the racer's board stands.
        public var status: PlayStatus
        /// True when the racer gave up (its status is then `lost`).
        public var gaveUp: Bool?
        /// Share of safe cells the racer revealed.
        public var progress: Double
        /// Flags on the racer's board.
        public var flags: Int
        /// Seconds from the race's start to the racer's end, once it ended
        /// (by the racer's clock).
        public var seconds: Int?
        /// True when the racer asked for a hint or looked at the mines.
        public var assisted: Bool?
        /// Creates a standing.
        public init(id: String, name: String, colour: Int? = nil, status: PlayStatus, gaveUp: Bool? = nil, progress: Double, flags: Int,
                    seconds: Int? = nil, assisted: Bool? = nil) {
            self.id = id
            self.name = name
            self.colour = colour
            self.status = status
            self.gaveUp = gaveUp
            self.progress = progress
            self.flags = flags
            self.seconds = seconds
            self.assisted = assisted
        }
    }

    /// `show`: one game in full.
    public enum Show: ControlCommand {
        public static let name = "show"
        public typealias Arguments = GameArguments
        public typealias Result = GameView
    }

    /// Names a cell of a game, with an optional mark for `flag`.
    public struct MoveArguments: Codable, Equatable, Sendable {
        /// The game id or prefix.
        public var game: String?
        /// Column.
        public var x: Int
        /// Row.
        public var y: Int
        /// With `flag`: `flag`, `question` or `none`; cycles when absent.
        public var mark: String?
        /// Creates arguments.
        public init(game: String?, x: Int, y: Int, mark: String? = nil) {
            self.game = game
            self.x = x
            self.y = y
            self.mark = mark
        }

        /// The request line of `command` (a move) with these arguments, as
        /// ``ControlCoding/line(_:)`` writes a ``Request`` (keys sorted),
        /// written directly into bytes: a player's every key sends one.
        func requestLine(command: String, id: RequestID) -> [UInt8] {
            var out = JSONLineWriter()
            out.begin()
            out.key("command"); out.string(command)
            if let game { out.key("game"); out.string(game) }
            out.key("id"); out.id(id)
            if let mark { out.key("mark"); out.string(mark) }
            out.key("x"); out.int(x)
            out.key("y"); out.int(y)
            out.end()
            out.byte(0x0A)
            return out.bytes
        }

        /// The arguments of a move's request line from its members as
        /// ``JSONLineReader`` read them, other keys aside as JSONDecoder
        /// leaves them; nil when one is missing or of another type (a
        /// `null` too), for JSONDecoder to judge and say what is wrong.
        public init?(members: [String: JSONValue]) {
            guard let x = members["x"]?.int, let y = members["y"]?.int else { return nil }
            self.init(game: nil, x: x, y: y)
            let game: JSONValue? = members["game"], mark: JSONValue? = members["mark"]
            switch game {
            case .none: break
            case .some(.string(let s)): self.game = s
            default: return nil
            }
            switch mark {
            case .none: break
            case .some(.string(let s)): self.mark = s
            default: return nil
            }
        }
    }

    /// What a move changed.
    public struct MoveResult: Codable, Equatable, Sendable {
        /// The full game id.
        public var game: String
        /// The cells whose look changed.
        public var changed: [CellChange]
        /// The status after the move.
        public var status: PlayStatus
        /// Share of safe cells revealed after the move.
        public var progress: Double
        /// The player who tripped the mine (peer id), if the game is lost.
        public var trippedBy: String?
        /// That player's name, when known.
        public var trippedByName: String?
        /// Creates a move result.
        public init(game: String, changed: [CellChange], status: PlayStatus, progress: Double, trippedBy: String?, trippedByName: String? = nil) {
            self.game = game
            self.changed = changed
            self.status = status
            self.progress = progress
            self.trippedBy = trippedBy
            self.trippedByName = trippedByName
        }
    }

    /// `reveal GAME X Y`.
    public enum Reveal: ControlCommand {
        public static let name = "reveal"
        public typealias Arguments = MoveArguments
        public typealias Result = MoveResult
    }

    /// `flag GAME X Y [--mark …]`.
    public enum Flag: ControlCommand {
        public static let name = "flag"
        public typealias Arguments = MoveArguments
        public typealias Result = MoveResult
    }

    /// `chord GAME X Y`.
    public enum Chord: ControlCommand {
        public static let name = "chord"
        public typealias Arguments = MoveArguments
        public typealias Result = MoveResult
    }

    /// `replay GAME`: a game's moves in the order every device ranks them,
    /// each with what it changed, to play the game again.
    public enum Replay: ControlCommand {
        public static let name = "replay"
        public typealias Arguments = GameArguments
        /// The game from its opening, and its moves.
        public struct Result: Codable, Equatable, Sendable {
            /// The full game id.
            public var game: String
            /// Columns, rows and mines.
            public var width: Int, height: Int, mines: Int
            /// The board right after the opening: rows as `show` gives them.
            public var opening: [String]
            /// When the game began, seconds since 1970.
            public var started: Double
            /// The moves, in order.
            public var moves: [ReplayMove]
            /// Where the game stands now.
            public var status: PlayStatus
            /// Creates a replay.
            public init(game: String, width: Int, height: Int, mines: Int, opening: [String], started: Double, moves: [ReplayMove], status: PlayStatus) {
                self.game = game
                self.width = width
                self.height = height
                self.mines = mines
                self.opening = opening
                self.started = started
                self.moves = moves
                self.status = status
            }
        }
    }

    /// One move of a replay.
    public struct ReplayMove: Codable, Equatable, Sendable {
        /// Its place, from 1.
        public var index: Int
        /// Who made it: name and peer id.
        public var name: String, author: String
        /// `reveal`, `chord`, `flag`, `question`, `unmark`, `hint`, `peek`,
        /// `resign` (a racer gave up) or `other`.
        public var kind: String
        /// The cell acted on; absent for a move that names none.
        public var x: Int?, y: Int?
        /// The cells whose look changed, with their look after it.
        public var changed: [CellChange]
        /// Seconds from the game's start to the move, by its author's clock.
        public var seconds: Double
        /// When it was made, seconds since 1970 (its author's clock).
        public var wall: Double
        /// Where the game stood after it.
        public var status: PlayStatus
        /// Creates a move.
        public init(index: Int, name: String, author: String, kind: String, x: Int?, y: Int?, changed: [CellChange], seconds: Double, wall: Double,
                    status: PlayStatus) {
            self.index = index
            self.name = name
            self.author = author
            self.kind = kind
            self.x = x
            self.y = y
            self.changed = changed
            self.seconds = seconds
            self.wall = wall
            self.status = status
        }
    }

    /// `point GAME X Y`: points at a cell ("look here"). Every player who
    /// has the game open, on this device and on every linked one, sees the
    /// cell flash in this player's colour for a few seconds (a `point`
    /// event). Nothing is stored. A player points at most 4 times in 2
    /// seconds (`rate-limited` beyond).
    public enum Point: ControlCommand {
        public static let name = "point"
        public typealias Arguments = MoveArguments
        /// Where the point went.
        public struct Result: Codable, Equatable, Sendable {
            /// The full game id.
            public var game: String
            /// The cell's column.
            public var x: Int
            /// The cell's row.
            public var y: Int
            /// Creates the result.
            public init(game: String, x: Int, y: Int) {
                self.game = game
                self.x = x
                self.y = y
            }
        }
    }

    /// `hint GAME`: a cell that is certainly safe (or a mine), if one can be deduced.
    public enum Hint: ControlCommand {
        public static let name = "hint"
        public typealias Arguments = GameArguments
        /// The hint.
        public struct Result: Codable, Equatable, Sendable {
            /// The full game id.
            public var game: String
            /// The cell's column, when there is a hint.
            public var x: Int?
            /// The cell's row, when there is a hint.
            public var y: Int?
            /// `safe` or `mine`, when there is a hint.
            public var kind: HintKind?
            /// A sentence for people.
            public var message: String
            /// Creates a hint.
            public init(game: String, x: Int?, y: Int?, kind: HintKind?, message: String) {
                self.game = game
                self.x = x
                self.y = y
                self.kind = kind
                self.message = message
            }
        }
    }

    /// One best time.
    public struct BestTime: Codable, Equatable, Sendable {
        /// Width in cells.
        public var width: Int
        /// Height in cells.
        public var height: Int
        /// Number of mines.
        public var mines: Int
        /// The best time in seconds (played time).
        public var seconds: Int
        /// The game that set it.
        public var game: String
        /// Its players.
        public var players: [String]
        /// When it was played (its start), seconds since 1970.
        public var date: Double
        /// When it was won, seconds since 1970.
        public var ended: Double?
        /// Whether the board was a no-guess one (ranked apart from classic boards).
        public var noGuess: Bool?
        /// The board's 3BV per second of played time (absent for no time).
        public var threeBVPerSecond: Double?
        /// Creates a best time.
        public init(width: Int, height: Int, mines: Int, seconds: Int, game: String, players: [String], date: Double, ended: Double? = nil) {
            self.ended = ended
            self.width = width
            self.height = height
            self.mines = mines
            self.seconds = seconds
            self.game = game
            self.players = players
            self.date = date
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
            public var assisted: [AssistedWin]?
            /// Games won whose creator chose the seed (practice), not ranked.
            public var practice: [BestTime]?
            /// With `player`: that player's records and totals.
            public var player: PlayerRecord?
            /// With `daily`: today's board of the day, its results and streaks.
            public var daily: DailyTable?
            /// Creates the list.
            public init(scores: [BestTime], classes: [ScoreClass]? = nil, assisted: [AssistedWin]? = nil, practice: [BestTime]? = nil,
                        player: PlayerRecord? = nil, daily: DailyTable? = nil) {
                self.scores = scores
                self.classes = classes
                self.assisted = assisted
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
        /// Its played time, in seconds.
        public var seconds: Int
        /// Share of safe cells revealed.
        public var progress: Double
        /// 3BV per second, once won.
        public var threeBVPerSecond: Double?
        /// Whether they asked for a hint or looked at the mines.
        public var assisted: Bool?
        /// Creates a result.
        public init(name: String, peer: String, game: String, status: PlayStatus, seconds: Int, progress: Double,
                    threeBVPerSecond: Double? = nil, assisted: Bool? = nil) {
            self.name = name
            self.peer = peer
            self.game = game
            self.status = status
            self.seconds = seconds
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
        public var game: BestTime
        /// Who asked for hints, and how many.
        public var hints: [HintCount]
        /// Who looked at the mines, and when (seconds since 1970).
        public var peeks: [Peek]
        /// Creates an entry.
        public init(game: BestTime, hints: [HintCount], peeks: [Peek]) {
            self.game = game
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
        public var hints: Int
        /// Creates a count.
        public init(name: String, hints: Int) {
            self.name = name
            self.hints = hints
        }
    }

    /// A player who looked at the mines.
    public struct Peek: Codable, Equatable, Sendable {
        /// The player.
        public var name: String
        /// When they first looked, seconds since 1970.
        public var at: Double
        /// Creates a peek.
        public init(name: String, at: Double) {
            self.name = name
            self.at = at
        }
    }

    /// Every command name the protocol defines.
    public static let all: [String] = [
        Status.name, Games.name, New.name, Show.name, Reveal.name, Flag.name, Chord.name, Point.name, Hint.name, Scores.name, Daily.name, Replay.name,
        Invite.name, Join.name, Connect.name, Peers.name, Profile.name, Presence.name, Subscribe.name, Cursor.name,
        AddPlayers.name, Archive.name, Web.name, WebLAN.name, WebPair.name, WebDevices.name, WebRevoke.name,
        PlayerAdd.name, PlayerPair.name, PlayerList.name, PlayerRemove.name,
    ]
}
