import FoundationEssentials

/// Races (each racer on a board of their own) and replays.
extension Commands {
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
        public var shownPeer: String
        /// Every racer: those who won (fastest first), then those still
        /// playing (furthest first), then those who lost or gave up.
        public var racers: [RacerStanding]
        /// Once every racer finished: the winner's name (the fastest of
        /// those who cleared their board), absent when nobody did.
        public var winnerName: String?
        /// True once every racer's board ended; absent while racing.
        public var over: Bool?
        /// Creates a table.
        public init(shownPeer: String, racers: [RacerStanding], winnerName: String? = nil, over: Bool? = nil) {
            self.shownPeer = shownPeer
            self.racers = racers
            self.winnerName = winnerName
            self.over = over
        }

        /// `racers` in the table's order: won (fastest first), playing
        /// (furthest first), then lost or given up; by name within each.
        public static func ordered(_ racers: [RacerStanding]) -> [RacerStanding] {
            let rank = { (r: RacerStanding) -> Int in r.status == .won ? 0 : r.status == .playing ? 1 : 2 }
            let key = { (r: RacerStanding) in (rank(r), r.status == .won ? Double(r.playedMillis ?? 0) : -r.progress, r.name) }
            return racers.sorted { key($0) < key($1) }
        }
    }

    /// One racer's board in a race.
    public struct RacerStanding: Codable, Equatable, Sendable {
        /// The racer's peer id.
        public var peer: String
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
        /// Milliseconds from the race's start to the racer's end, once it ended
        /// (by the racer's clock).
        public var playedMillis: Int?
        /// True when the racer asked for a hint or looked at the mines.
        public var assisted: Bool?
        /// True when the race ended without the racer: every racer that
        /// moved ended while it had not moved (absent, or an unused tablet).
        public var didNotStart: Bool?
        /// Creates a standing.
        public init(
            peer: String, name: String, colour: Int? = nil, status: PlayStatus, gaveUp: Bool? = nil, progress: Double, flags: Int,
            playedMillis: Int? = nil, assisted: Bool? = nil
        ) {
            self.peer = peer
            self.name = name
            self.colour = colour
            self.status = status
            self.gaveUp = gaveUp
            self.progress = progress
            self.flags = flags
            self.playedMillis = playedMillis
            self.assisted = assisted
        }
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
            /// When the game began, milliseconds since 1970.
            public var startedAt: Int64
            /// The moves, in order.
            public var moves: [ReplayMove]
            /// Where the game stands now.
            public var status: PlayStatus
            /// Creates a replay.
            public init(game: String, width: Int, height: Int, mines: Int, opening: [String], startedAt: Int64, moves: [ReplayMove], status: PlayStatus) {
                self.game = game
                self.width = width
                self.height = height
                self.mines = mines
                self.opening = opening
                self.startedAt = startedAt
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
        public var name: String, authorPeer: String
        /// `reveal`, `chord`, `flag`, `question`, `unmark`, `hint`, `peek`,
        /// `resign` (a racer gave up) or `other`.
        public var kind: String
        /// The cell acted on; absent for a move that names none.
        public var x: Int?, y: Int?
        /// The cells whose look changed, with their look after it.
        public var changed: [CellChange]
        /// Milliseconds from the game's start to the move, by its author's clock.
        public var atMillis: Int
        /// When it was made, milliseconds since 1970 (its author's clock).
        public var madeAt: Int64
        /// Where the game stood after it.
        public var status: PlayStatus
        /// Creates a move.
        public init(
            index: Int, name: String, authorPeer: String, kind: String, x: Int?, y: Int?, changed: [CellChange], atMillis: Int, madeAt: Int64,
            status: PlayStatus
        ) {
            self.index = index
            self.name = name
            self.authorPeer = authorPeer
            self.kind = kind
            self.x = x
            self.y = y
            self.changed = changed
            self.atMillis = atMillis
            self.madeAt = madeAt
            self.status = status
        }
    }
}
