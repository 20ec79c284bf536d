import FoundationEssentials

extension Commands {
    /// `player-add`: this daemon hosts a new player (a person at the table
    /// without a daemon of their own): a signing key kept here, admitted to
    /// the circle by this device, and a one-time pairing that binds one
    /// browser to the player.
    public enum PlayerAdd: ControlCommand {
        public static let name = "player-add"
        /// The player.
        public struct Arguments: Codable, Equatable, Sendable {
            /// Their name (as a profile's: 1 to 64 bytes, no other member's).
            public var name: String
            /// Their colour (``PlayerColours/choices``); absent: derived from their key.
            public var colour: String?
            /// Creates arguments.
            public init(name: String, colour: String? = nil) {
                self.name = name
                self.colour = colour
            }
        }
        /// The player and how to pair a browser to them.
        public typealias Result = PlayerPairing
    }

    /// `player-pair`: a new one-time pairing for a hosted player's browser.
    public enum PlayerPair: ControlCommand {
        public static let name = "player-pair"
        /// Whose.
        public struct Arguments: Codable, Equatable, Sendable {
            /// The hosted player's name or id (or a unique start of it).
            public var player: String
            /// Creates arguments.
            public init(player: String) { self.player = player }
        }
        /// The player and how to pair a browser to them.
        public typealias Result = PlayerPairing
    }

    /// `player-list`: the players this daemon hosts.
    public enum PlayerList: ControlCommand {
        public static let name = "player-list"
        public typealias Arguments = Empty
        /// The list.
        public struct Result: Codable, Equatable, Sendable {
            /// The hosted players, in the order they were added.
            public var players: [HostedPlayerInfo]
            /// Creates the result.
            public init(players: [HostedPlayerInfo]) { self.players = players }
        }
    }

    /// `player-remove`: stop hosting a player: their browsers are logged
    /// out at once, their key is deleted here, and (when this device may
    /// remove devices) they are removed from the circle.
    public enum PlayerRemove: ControlCommand {
        public static let name = "player-remove"
        /// Whom.
        public struct Arguments: Codable, Equatable, Sendable {
            /// The hosted player's name or id (or a unique start of it).
            public var player: String
            /// Creates arguments.
            public init(player: String) { self.player = player }
        }
        /// What was done.
        public struct Result: Codable, Equatable, Sendable {
            /// The player's id.
            public var peer: String
            /// Their name.
            public var name: String
            /// Whether a removal record was made (this device may remove devices).
            public var removedFromCircle: Bool
            /// How many paired browsers were logged out.
            public var browsersLoggedOut: Int
            /// What it means, in a sentence.
            public var message: String
            /// Creates the result.
            public init(peer: String, name: String, removedFromCircle: Bool, browsersLoggedOut: Int, message: String) {
                self.peer = peer
                self.name = name
                self.removedFromCircle = removedFromCircle
                self.browsersLoggedOut = browsersLoggedOut
                self.message = message
            }
        }
    }
}

/// A hosted player and a one-time pairing for one of their browsers.
public struct PlayerPairing: Codable, Equatable, Sendable {
    /// The player.
    public var player: HostedPlayerInfo
    /// The address that pairs a browser to the player and shows the board:
    /// on the home network (`https://ADDRESS:PORT/?pair=CODE`) when the
    /// board is served there, else a one-time login on this computer.
    public var url: String
    /// The pairing code (two groups of four), when the board is served to the home network.
    public var code: String?
    /// Every home-network address with the code.
    public var urls: [String]
    /// The certificate's SHA-256 fingerprint, to compare with the browser's.
    public var fingerprint: String?
    /// When the code (or login) stops working, in milliseconds since 1970.
    public var expiresAt: Int64
    /// Creates a pairing.
    public init(player: HostedPlayerInfo, url: String, code: String?, urls: [String], fingerprint: String?, expiresAt: Int64) {
        self.player = player
        self.url = url
        self.code = code
        self.urls = urls
        self.fingerprint = fingerprint
        self.expiresAt = expiresAt
    }
}

/// A player this daemon hosts, as `player-list` shows them.
public struct HostedPlayerInfo: Codable, Equatable, Sendable {
    /// Their peer id.
    public var peer: String
    /// Their name (their profile's).
    public var name: String
    /// Their colour's name.
    public var colourName: String
    /// When they were added, in milliseconds since 1970.
    public var addedAt: Int64
    /// Whether they are a member of the circle (false once removed).
    public var member: Bool
    /// The browsers paired to them, most recently used first.
    public var devices: [WebDeviceInfo]
    /// Creates the view.
    public init(peer: String, name: String, colourName: String, addedAt: Int64, member: Bool, devices: [WebDeviceInfo]) {
        self.peer = peer
        self.name = name
        self.colourName = colourName
        self.addedAt = addedAt
        self.member = member
        self.devices = devices
    }
}

extension ControlError {
    /// No hosted player goes by that name or id.
    public static func unknownPlayer(_ player: String) -> ControlError {
        ControlError(code: "unknown-player", message: "this daemon hosts no player '\(player)' (see sweeper player list)")
    }
}
