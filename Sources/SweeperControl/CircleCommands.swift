import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The commands about the circle, its peers and the viewers: invitations
/// and joining, peers and links, profiles, presence and subscriptions.
extension Commands {
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
            public var expiresAt: UInt64
            /// Creates the result.
            public init(code: String, circleTag: String, invitation: String, expiresAt: UInt64) {
                self.code = code
                self.circleTag = circleTag
                self.invitation = invitation
                self.expiresAt = expiresAt
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
            /// How long to wait, without `address`, for the member that made
            /// the code to appear (seconds, 0 to 600; 15 when absent).
            public var waitSeconds: Double?
            /// Creates arguments.
            public init(code: String, address: String? = nil, oldGames: OldGames? = nil, waitSeconds: Double? = nil) {
                self.code = code
                self.address = address
                self.oldGames = oldGames
                self.waitSeconds = waitSeconds
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
            public var admittedByPeer: String?
            /// How many games held before were kept (readable, never sent to the new circle).
            public var keptGameCount: Int?
            /// How many games held before were forgotten.
            public var forgottenGameCount: Int?
            /// Creates the result.
            public init(circleTag: String, admittedByPeer: String? = nil, keptGameCount: Int? = nil, forgottenGameCount: Int? = nil) {
                self.circleTag = circleTag
                self.admittedByPeer = admittedByPeer
                self.keptGameCount = keptGameCount
                self.forgottenGameCount = forgottenGameCount
            }
        }
    }

    /// `connect HOST:PORT`: dial a peer, from now on; the answer says how
    /// the address stands now (a client that waits asks again with `check`).
    public enum Connect: ControlCommand {
        public static let name = "connect"
        /// The address.
        public struct Arguments: Codable, Equatable, Sendable {
            /// `host:port`.
            public var address: String
            /// Only say how the address stands: dial nothing new.
            public var check: Bool?
            /// Creates arguments.
            public init(address: String, check: Bool? = nil) {
                self.address = address
                self.check = check
            }
        }
        /// How the address stands.
        public struct Result: Codable, Equatable, Sendable {
            /// Whether a peer at it is linked now (by this dial or by a
            /// link the peer made).
            public var linked: Bool?
            /// The peer it reached, once it did.
            public var peer: String?
            /// That peer's name.
            public var name: String?
            /// Why the last dial failed, while it is not linked.
            public var reason: String?
            /// Creates a result.
            public init(linked: Bool? = nil, peer: String? = nil, name: String? = nil, reason: String? = nil) {
                self.linked = linked
                self.peer = peer
                self.name = name
                self.reason = reason
            }
        }
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
