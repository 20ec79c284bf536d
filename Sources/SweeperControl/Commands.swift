import Foundation

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
            /// Creates a status result.
            public init(
                peerID: String, name: String, circleTag: String, listening: [String], mdns: String, peers: Int,
                games: Int, version: String, pid: Int32, presence: [PresenceInfo]? = nil
            ) {
                self.presence = presence
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
            /// Creates arguments.
            public init(
                preset: String? = nil, width: Int? = nil, height: Int? = nil, mines: Int? = nil, noGuess: Bool? = nil,
                seed: UInt64? = nil, startX: Int? = nil, startY: Int? = nil, questionMarks: Bool? = nil,
                players: [String]? = nil, privateGame: Bool? = nil
            ) {
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
        public var status: PlayStatus
        /// Share of safe cells revealed after the move.
        public var progress: Double
        /// The player who tripped the mine, if the game is lost.
        public var trippedBy: String?
        /// Creates a move result.
        public init(game: String, changed: [CellChange], status: PlayStatus, progress: Double, trippedBy: String?) {
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

    /// `invite`: a single-use invite code that expires.
    public enum Invite: ControlCommand {
        public static let name = "invite"
        /// How long the code works.
        public struct Arguments: Codable, Equatable, Sendable {
            /// Seconds until it expires (1 to 30 days' worth; default 24 hours).
            public var validSeconds: Int?
            /// Creates arguments.
            public init(validSeconds: Int? = nil) { self.validSeconds = validSeconds }
        }
        /// The code.
        public struct Result: Codable, Equatable, Sendable {
            /// The invite code to type on the other machine.
            public var code: String
            /// The circle's tag.
            public var circleTag: String
            /// The invitation's id (its key, as `invitations` lists it).
            public var invitation: String
            /// When the code stops working, ms since 1970.
            public var expiresMillis: UInt64
            /// Creates the result.
            public init(code: String, circleTag: String, invitation: String, expiresMillis: UInt64) {
                self.code = code
                self.circleTag = circleTag
                self.invitation = invitation
                self.expiresMillis = expiresMillis
            }
        }
        /// The shortest and longest lifetimes, in seconds.
        public static let validRange = 1...(30 * 86_400)
        /// The lifetime when none is given: 24 hours.
        public static let defaultValidSeconds = 86_400
    }

    /// `invitations`: the circle's invitations and what became of them.
    public enum Invitations: ControlCommand {
        public static let name = "invitations"
        public typealias Arguments = Empty
        /// The invitations, newest first.
        public struct Result: Codable, Equatable, Sendable {
            /// The invitations.
            public var invitations: [InvitationInfo]
            /// Creates the result.
            public init(invitations: [InvitationInfo]) { self.invitations = invitations }
        }
    }

    /// `invite-revoke`: revoke an open invitation.
    public enum InviteRevoke: ControlCommand {
        public static let name = "invite-revoke"
        /// The invitation.
        public struct Arguments: Codable, Equatable, Sendable {
            /// Its id as `invitations` lists it, or a unique start of it.
            public var invitation: String
            /// Creates arguments.
            public init(invitation: String) { self.invitation = invitation }
        }
        /// The invitation, now revoked.
        public typealias Result = InvitationInfo
    }

    /// `join CODE`: move into the circle of an invite code.
    public enum Join: ControlCommand {
        public static let name = "join"
        /// The code.
        public struct Arguments: Codable, Equatable, Sendable {
            /// The invite code.
            public var code: String
            /// A member's `host:port`, when mDNS does not reach one.
            public var address: String?
            /// What becomes of the games held before: kept (the default),
            /// readable here and never sent to the new circle, or forgotten.
            public var oldGames: OldGames?
            /// Creates arguments.
            public init(code: String, address: String? = nil, oldGames: OldGames? = nil) {
                self.code = code
                self.address = address
                self.oldGames = oldGames
            }
        }
        /// What `join` does with the games held before.
        public enum OldGames: String, Codable, CaseIterable, Sendable {
            /// They stay, readable; nothing of them goes to the new circle.
            case keep
            /// They are deleted from this device.
            case forget
        }
        /// The circle joined.
        public struct Result: Codable, Equatable, Sendable {
            /// The new circle's tag.
            public var circleTag: String
            /// The member that admitted this device (peer id); absent for a code of an earlier release.
            public var admittedBy: String?
            /// How many games held before were kept (readable, never sent to the new circle).
            public var keptGames: Int?
            /// How many games held before were forgotten.
            public var forgottenGames: Int?
            /// Creates the result.
            public init(circleTag: String, admittedBy: String? = nil, keptGames: Int? = nil, forgottenGames: Int? = nil) {
                self.circleTag = circleTag
                self.admittedBy = admittedBy
                self.keptGames = keptGames
                self.forgottenGames = forgottenGames
            }
        }
    }

    /// `connect HOST:PORT`: dial a peer.
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
            /// With `all`: static peers whose last dial failed, and why.
            public var unreached: [UnreachedPeerInfo]?
            /// The state of mDNS, as `status` gives it (`running as "…"`,
            /// `unavailable (…)`, `stopped`, `disabled`).
            public var mdns: String?
            /// Who has a game open in a viewer now, and where (this daemon's
            /// own player included, marked `own`).
            public var presence: [PresenceInfo]?
            /// Creates the list.
            public init(peers: [PeerInfo], unreached: [UnreachedPeerInfo]? = nil, mdns: String? = nil, presence: [PresenceInfo]? = nil) {
                self.presence = presence
                self.peers = peers
                self.unreached = unreached
                self.mdns = mdns
            }
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

    /// `profile`: this player's name and colour, as every member sees them;
    /// with arguments, sets them (signed and sent to every member).
    public enum Profile: ControlCommand {
        public static let name = "profile"
        /// What to change; nothing to only show the profile.
        public struct Arguments: Codable, Equatable, Sendable {
            /// The new name (1 to 64 bytes, no control characters).
            public var name: String?
            /// The new colour: a name of ``PlayerColours/choices``.
            public var colour: String?
            /// Creates arguments.
            public init(name: String? = nil, colour: String? = nil) {
                self.name = name
                self.colour = colour
            }
        }
        /// The profile.
        public struct Result: Codable, Equatable, Sendable {
            /// This daemon's peer id.
            public var peer: String
            /// The player's name.
            public var name: String
            /// The colour: `auto` or a name of ``PlayerColours/names``.
            public var colour: String
            /// Creates the result.
            public init(peer: String, name: String, colour: String) {
                self.peer = peer
                self.name = name
                self.colour = colour
            }
        }
    }

    /// `presence`: who has a game open in a viewer now, and where.
    public enum Presence: ControlCommand {
        public static let name = "presence"
        public typealias Arguments = Empty
        /// The players seen in viewers.
        public struct Result: Codable, Equatable, Sendable {
            /// Each player whose viewer shows a game, this daemon's own included (marked `own`).
            public var presence: [PresenceInfo]
            /// Creates the result.
            public init(presence: [PresenceInfo]) { self.presence = presence }
        }
    }

    /// `cursor`, sent on a subscribed connection only: where this viewer's
    /// cursor is. It gets no answer; the daemon tells its peers, and the
    /// presence ends when the connection closes. Without a game, the viewer
    /// shows none (a list, a form).
    public enum Cursor: ControlCommand {
        public static let name = "cursor"
        /// The game and cell, or nothing.
        public struct Arguments: Codable, Equatable, Sendable {
            /// The game shown (its full id); absent when the viewer shows none.
            public var game: String?
            /// The cursor's column.
            public var x: Int?
            /// The cursor's row.
            public var y: Int?
            /// Creates arguments.
            public init(game: String? = nil, x: Int? = nil, y: Int? = nil) {
                self.game = game
                self.x = x
                self.y = y
            }
        }
        public typealias Result = Empty
    }

    /// Every command name the protocol defines.
    public static let all: [String] = [
        Status.name, Games.name, New.name, Show.name, Reveal.name, Flag.name, Chord.name, Hint.name, Scores.name,
        Invite.name, Join.name, Connect.name, Peers.name, Profile.name, Presence.name, Subscribe.name, Cursor.name,
        AddPlayers.name, Archive.name,
    ]
}
