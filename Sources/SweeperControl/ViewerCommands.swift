import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The commands a viewer uses: its subscription to events, where the
/// players are and its own cursor, and the profile every member sees.
extension Commands {
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
            public var colourName: String
            /// Creates the result.
            public init(peer: String, name: String, colourName: String) {
                self.peer = peer
                self.name = name
                self.colourName = colourName
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
}

extension Commands.Cursor.Arguments {
    /// The `cursor` request line, as ``ControlCoding/line(_:)`` writes it
    /// (id 0, keys sorted), written directly into bytes: a viewer sends one
    /// on every move of its cursor.
    public var requestLine: [UInt8] {
        var out = JSONLineWriter()
        out.begin()
        out.key("command"); out.string(Commands.Cursor.name)
        if let game { out.key("game"); out.string(game) }
        out.key("id"); out.int(0)
        if let x { out.key("x"); out.int(x) }
        if let y { out.key("y"); out.int(y) }
        out.end()
        out.byte(0x0A)
        return out.bytes
    }

    /// Reads a `cursor` request line (``requestLine``, or any client's)
    /// without `JSONDecoder`, keys it does not know aside as `JSONDecoder`
    /// leaves them. Nil when the line is not read here (not JSON, another
    /// command, a field of another type, a `null`): the caller then decodes
    /// it with `JSONDecoder`, which decides.
    public init?(requestLine bytes: UnsafeRawBufferPointer) {
        guard let members = JSONLineReader.value(bytes)?.object, members["command"]?.string == Commands.Cursor.name else { return nil }
        self.init()
        for (key, value) in members {
            switch key {
            case "command", "id": continue
            case "game": guard let v = value.string else { return nil }; game = v
            case "x": guard let v = value.int else { return nil }; x = v
            case "y": guard let v = value.int else { return nil }; y = v
            default: continue
            }
        }
    }
}
