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
            public var peer: String
            /// The player's name.
            public var name: String
            /// A short tag derived from the circle key (not the key).
            public var circleTag: String
            /// Addresses the daemon listens on for peers.
            public var listening: [String]
            /// The mDNS state (`disabled`, `running`, `unavailable: …`).
            public var mdns: String
            /// Connected peers.
            public var peerCount: Int
            /// Stored games.
            public var gameCount: Int
            /// The daemon's version.
            public var version: String
            /// The daemon's process id.
            public var pid: Int32
            /// Who has a game open in a viewer now, and where (this daemon's
            /// own player included, marked `own`).
            public var presence: [PresenceInfo]?
            /// When this device was removed from its circle: who removed it,
            /// when, and what to do (absent while it is a member).
            public var removedNote: String?
            /// Creates a status result.
            public init(
                peer: String, name: String, circleTag: String, listening: [String], mdns: String, peerCount: Int,
                gameCount: Int, version: String, pid: Int32, presence: [PresenceInfo]? = nil, removedNote: String? = nil
            ) {
                self.presence = presence
                self.removedNote = removedNote
                self.peer = peer
                self.name = name
                self.circleTag = circleTag
                self.listening = listening
                self.mdns = mdns
                self.peerCount = peerCount
                self.gameCount = gameCount
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
            public var games: [GameListing]
            /// With `available`: the games linked peers hold and this device does not, most ops first.
            public var available: [AvailableGame]?
            /// Creates the list.
            public init(games: [GameListing], available: [AvailableGame]? = nil) {
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
            public var chosenPlayerNames: [String]
            /// How many were added by this request (0 when all could move already).
            public var added: Int
            /// Creates the result.
            public init(game: String, chosenPlayerNames: [String], added: Int) {
                self.game = game
                self.chosenPlayerNames = chosenPlayerNames
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
            public var didChange: Bool
            /// Creates the result.
            public init(game: String, archived: Bool, didChange: Bool) {
                self.game = game
                self.archived = archived
                self.didChange = didChange
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
            public var followedGames: [String]
            /// Games forgotten (full ids, sorted).
            public var forgottenGames: [String]
            /// Creates the result.
            public init(mode: SyncMode, followedGames: [String], forgottenGames: [String]) {
                self.mode = mode
                self.followedGames = followedGames
                self.forgottenGames = forgottenGames
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
        /// With `show`: add the mine layout (a peek at the mines), marking
        /// the game as assisted.
        public var peek: Bool?
        /// With `show` and `replay` of a race: whose board (a racer's name
        /// or peer id); this device's own, or the creator's, when absent.
        public var racer: String?
        /// With `show` and `replay` of another player's board of today,
        /// while this player's own has not ended: go on, and mark this
        /// player's board of the day as having looked at the mines (it is
        /// refused as `makes-practice` without it).
        public var look: Bool?
        /// Creates arguments.
        public init(game: String?, peek: Bool? = nil, racer: String? = nil, look: Bool? = nil) {
            self.game = game
            self.peek = peek
            self.racer = racer
            self.look = look
        }

        private enum CodingKeys: String, CodingKey { case game, peek, racer, look }
        /// What version 2 of the protocol named otherwise: refused by name,
        /// so that an older client is told rather than quietly answered
        /// without what it asked for.
        private enum Renamed: String, CodingKey { case cheat }

        /// Reads the arguments; `cheat`, version 2's name for `peek`, is refused.
        public init(from decoder: any Decoder) throws {
            if let old = try? decoder.container(keyedBy: Renamed.self), old.contains(.cheat) {
                throw ControlError.renamed("cheat", to: "peek", inVersion: 3)
            }
            let c = try decoder.container(keyedBy: CodingKeys.self)
            game = try c.decodeIfPresent(String.self, forKey: .game)
            peek = try c.decodeIfPresent(Bool.self, forKey: .peek)
            racer = try c.decodeIfPresent(String.self, forKey: .racer)
            look = try c.decodeIfPresent(Bool.self, forKey: .look)
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
        public var trippedByPeer: String?
        /// That player's name, when known.
        public var trippedByName: String?
        /// Creates a move result.
        public init(game: String, changed: [CellChange], status: PlayStatus, progress: Double, trippedByPeer: String?, trippedByName: String? = nil) {
            self.game = game
            self.changed = changed
            self.status = status
            self.progress = progress
            self.trippedByPeer = trippedByPeer
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

    /// Every command name the protocol defines.
    public static let all: [String] = [
        Status.name, Games.name, New.name, Show.name, Reveal.name, Flag.name, Chord.name, Point.name, Hint.name, Scores.name, Daily.name, Replay.name,
        Invite.name, Join.name, Connect.name, Peers.name, Profile.name, Presence.name, Subscribe.name, Cursor.name,
        AddPlayers.name, Archive.name, Web.name, WebLAN.name, WebPair.name, WebDevices.name, WebRevoke.name,
        PlayerAdd.name, PlayerPair.name, PlayerList.name, PlayerRemove.name, Backup.name,
    ]
}
