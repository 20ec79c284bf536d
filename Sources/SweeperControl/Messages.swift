import Foundation

// MARK: Shared views

/// One player of a game and their score.
public struct PlayerScore: Codable, Equatable, Sendable {
    /// The player's peer id.
    public var id: String
    /// The player's name.
    public var name: String
    /// Points: 1 per first-revealed zero, N per first-revealed N.
    public var score: Int

    /// Creates a player score.
    public init(id: String, name: String, score: Int) {
        self.id = id
        self.name = name
        self.score = score
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
    public var status: String
    /// Share of safe cells revealed, 0...1.
    public var progress: Double
    /// Seconds from the start to the end (or to now while playing).
    public var elapsedSeconds: Int
    /// Names of the players who made a move.
    public var players: [String]
    /// Creation time, seconds since 1970.
    public var created: Double
    /// Whether a player used the cheat.
    public var assisted: Bool

    /// Creates a summary.
    public init(
        id: String, width: Int, height: Int, mines: Int, status: String, progress: Double, elapsedSeconds: Int,
        players: [String], created: Double, assisted: Bool
    ) {
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
    public var status: String
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
    /// Seconds from the start to the end (or to now while playing).
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

    /// Creates a view.
    public init(
        id: String, width: Int, height: Int, mines: Int, status: String, digest: String, revealed: Int, flags: Int,
        board: [String], players: [PlayerScore], trippedBy: String?, elapsedSeconds: Int, progress: Double,
        assisted: Bool, questionMarks: Bool, mineLayout: [String]? = nil, wrongFlags: [CellPosition]? = nil
    ) {
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
        case progress, assisted, questionMarks, mineLayout, wrongFlags
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
        // `trippedBy` is always present: a peer id or null.
        if let trippedBy { try c.encode(trippedBy, forKey: .trippedBy) } else { try c.encodeNil(forKey: .trippedBy) }
        try c.encode(elapsedSeconds, forKey: .elapsedSeconds)
        try c.encode(progress, forKey: .progress)
        try c.encode(assisted, forKey: .assisted)
        try c.encode(questionMarks, forKey: .questionMarks)
        try c.encodeIfPresent(mineLayout, forKey: .mineLayout)
        try c.encodeIfPresent(wrongFlags, forKey: .wrongFlags)
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

/// A peer as reported by `peers` and peer events.
public struct PeerInfo: Codable, Equatable, Sendable {
    /// Whether this daemon and the peer hold the same ops.
    public struct Sync: Codable, Equatable, Sendable {
        /// Ops this daemon holds that the peer does not (as far as its last summary says).
        public var theyLack: Int
        /// Ops the peer holds that this daemon does not.
        public var weLack: Int
        /// Whether neither side lacks anything.
        public var inSync: Bool { theyLack == 0 && weLack == 0 }

        /// Creates a sync state.
        public init(theyLack: Int, weLack: Int) {
            self.theyLack = theyLack
            self.weLack = weLack
        }

        private enum CodingKeys: String, CodingKey { case theyLack, weLack, inSync }
        /// Decodes the two counts (`inSync` is derived).
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            theyLack = try c.decode(Int.self, forKey: .theyLack)
            weLack = try c.decode(Int.self, forKey: .weLack)
        }
        /// Encodes the counts and `inSync`.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(theyLack, forKey: .theyLack)
            try c.encode(weLack, forKey: .weLack)
            try c.encode(inSync, forKey: .inSync)
        }
    }

    /// The peer's printable id.
    public var id: String
    /// The player's name.
    public var name: String
    /// Addresses it was seen or linked at.
    public var addresses: [String]
    /// `connected`, `connecting`, `discovered` or `offline`.
    public var state: String
    /// How it became known: `mdns`, `static`, `incoming`.
    public var via: [String]
    /// Seconds since anything was heard from it, if ever.
    public var lastSeenSecondsAgo: Double?
    /// The last keep-alive round trip, in milliseconds.
    public var roundTripMs: Double?
    /// The sync state, while linked.
    public var sync: Sync?
    /// Whether it is a daemon of another circle (seen by mDNS, never linked).
    public var otherCircle: Bool

    /// Creates a peer report.
    public init(
        id: String, name: String, addresses: [String], state: String, via: [String], lastSeenSecondsAgo: Double?,
        roundTripMs: Double?, sync: Sync?, otherCircle: Bool
    ) {
        self.id = id
        self.name = name
        self.addresses = addresses
        self.state = state
        self.via = via
        self.lastSeenSecondsAgo = lastSeenSecondsAgo
        self.roundTripMs = roundTripMs
        self.sync = sync
        self.otherCircle = otherCircle
    }
}

// MARK: Commands

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
            /// Creates a status result.
            public init(
                peerID: String, name: String, circleTag: String, listening: [String], mdns: String, peers: Int,
                games: Int, version: String, pid: Int32
            ) {
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

    /// `games`: every game, newest first.
    public enum Games: ControlCommand {
        public static let name = "games"
        public typealias Arguments = Empty
        /// The list.
        public struct Result: Codable, Equatable, Sendable {
            /// The games, newest first.
            public var games: [GameSummary]
            /// Creates the list.
            public init(games: [GameSummary]) { self.games = games }
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
            /// Creates arguments.
            public init(
                preset: String? = nil, width: Int? = nil, height: Int? = nil, mines: Int? = nil, noGuess: Bool? = nil,
                seed: UInt64? = nil, startX: Int? = nil, startY: Int? = nil, questionMarks: Bool? = nil
            ) {
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
        /// Creates arguments.
        public init(game: String?, cheat: Bool? = nil) {
            self.game = game
            self.cheat = cheat
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
    }

    /// What a move changed.
    public struct MoveResult: Codable, Equatable, Sendable {
        /// The full game id.
        public var game: String
        /// The cells whose look changed.
        public var changed: [CellChange]
        /// The status after the move.
        public var status: String
        /// Share of safe cells revealed after the move.
        public var progress: Double
        /// The player who tripped the mine, if the game is lost.
        public var trippedBy: String?
        /// Creates a move result.
        public init(game: String, changed: [CellChange], status: String, progress: Double, trippedBy: String?) {
            self.game = game
            self.changed = changed
            self.status = status
            self.progress = progress
            self.trippedBy = trippedBy
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
            public var kind: String?
            /// A sentence for people.
            public var message: String
            /// Creates a hint.
            public init(game: String, x: Int?, y: Int?, kind: String?, message: String) {
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
        /// The best time in seconds.
        public var seconds: Int
        /// The game that set it.
        public var game: String
        /// Its players.
        public var players: [String]
        /// When it was played, seconds since 1970.
        public var date: Double
        /// Creates a best time.
        public init(width: Int, height: Int, mines: Int, seconds: Int, game: String, players: [String], date: Double) {
            self.width = width
            self.height = height
            self.mines = mines
            self.seconds = seconds
            self.game = game
            self.players = players
            self.date = date
        }
    }

    /// `scores`: best time per size over won, unassisted games.
    public enum Scores: ControlCommand {
        public static let name = "scores"
        public typealias Arguments = Empty
        /// The best times, by width, height, mines.
        public struct Result: Codable, Equatable, Sendable {
            /// The best times.
            public var scores: [BestTime]
            /// Creates the list.
            public init(scores: [BestTime]) { self.scores = scores }
        }
    }

    /// `invite`: a code carrying the circle key.
    public enum Invite: ControlCommand {
        public static let name = "invite"
        public typealias Arguments = Empty
        /// The code.
        public struct Result: Codable, Equatable, Sendable {
            /// The invite code to type on the other machine.
            public var code: String
            /// The circle's tag.
            public var circleTag: String
            /// Creates the result.
            public init(code: String, circleTag: String) {
                self.code = code
                self.circleTag = circleTag
            }
        }
    }

    /// `join CODE`: move into the circle of an invite code.
    public enum Join: ControlCommand {
        public static let name = "join"
        /// The code.
        public struct Arguments: Codable, Equatable, Sendable {
            /// The invite code.
            public var code: String
            /// Creates arguments.
            public init(code: String) { self.code = code }
        }
        /// The circle joined.
        public struct Result: Codable, Equatable, Sendable {
            /// The new circle's tag.
            public var circleTag: String
            /// Creates the result.
            public init(circleTag: String) { self.circleTag = circleTag }
        }
    }

    /// `connect HOST:PORT`: dial a peer (issue 5).
    public enum Connect: ControlCommand {
        public static let name = "connect"
        /// The address.
        public struct Arguments: Codable, Equatable, Sendable {
            /// `host:port`.
            public var address: String
            /// Creates arguments.
            public init(address: String) { self.address = address }
        }
        public typealias Result = Empty
    }

    /// `peers`: known and connected peers.
    public enum Peers: ControlCommand {
        public static let name = "peers"
        /// Whether to list daemons of other circles too.
        public struct Arguments: Codable, Equatable, Sendable {
            /// Also daemons of other circles seen on the network.
            public var all: Bool?
            /// Creates arguments.
            public init(all: Bool = false) { self.all = all }
        }
        /// The peers.
        public struct Result: Codable, Equatable, Sendable {
            /// The peers.
            public var peers: [PeerInfo]
            /// Creates the list.
            public init(peers: [PeerInfo]) { self.peers = peers }
        }
    }

    /// `subscribe`: turn the connection into an event stream. After the
    /// answer, the daemon sends ``ControlEvent`` lines until the connection closes.
    public enum Subscribe: ControlCommand {
        public static let name = "subscribe"
        /// Optionally one game only.
        public struct Arguments: Codable, Equatable, Sendable {
            /// Only events of this game (full id or prefix); all when absent.
            public var game: String?
            /// Creates arguments.
            public init(game: String? = nil) { self.game = game }
        }
        /// The subscription's confirmation.
        public struct Result: Codable, Equatable, Sendable {
            /// The game followed, if one.
            public var game: String?
            /// Creates the result.
            public init(game: String?) { self.game = game }
        }
    }

    /// Every command name the protocol defines.
    public static let all: [String] = [
        Status.name, Games.name, New.name, Show.name, Reveal.name, Flag.name, Chord.name, Hint.name, Scores.name,
        Invite.name, Join.name, Connect.name, Peers.name, Subscribe.name,
    ]
}

// MARK: Events

/// An event line on a subscribed connection: `{"event":"cells", …}`.
public struct ControlEvent: Codable, Equatable, Sendable {
    /// Event kinds.
    public enum Kind: String, Codable, Sendable {
        /// Cells changed look (reveals, marks), with the new status.
        case cells
        /// A game was made or arrived from a peer.
        case gameAdded = "game-added"
        /// A peer connected, disconnected or changed.
        case peerChanged = "peer-changed"
    }

    /// The kind.
    public var event: Kind
    /// The game concerned.
    public var game: String?
    /// The cells that changed.
    public var cells: [CellChange]?
    /// The game's status after the change.
    public var status: String?
    /// Mines minus flags after the change.
    public var minesLeft: Int?
    /// The player who acted.
    public var by: String?
    /// The column of the cell the player acted on (cells events of a move).
    public var x: Int?
    /// The row of the cell the player acted on (cells events of a move).
    public var y: Int?
    /// Share of safe cells revealed after the change (cells events).
    public var progress: Double?
    /// Who tripped the mine, once the game is lost (cells events).
    public var trippedBy: String?
    /// The game added.
    public var summary: GameSummary?
    /// The peer that changed.
    public var peer: PeerInfo?

    /// Creates an event.
    public init(
        event: Kind, game: String? = nil, cells: [CellChange]? = nil, status: String? = nil, minesLeft: Int? = nil,
        by: String? = nil, summary: GameSummary? = nil, peer: PeerInfo? = nil, x: Int? = nil, y: Int? = nil,
        progress: Double? = nil, trippedBy: String? = nil
    ) {
        self.event = event
        self.game = game
        self.cells = cells
        self.status = status
        self.minesLeft = minesLeft
        self.by = by
        self.summary = summary
        self.peer = peer
        self.x = x
        self.y = y
        self.progress = progress
        self.trippedBy = trippedBy
    }
}
