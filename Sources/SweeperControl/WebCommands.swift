import FoundationEssentials

extension Commands {
    /// `web`: the address of this daemon's web board, with a one-time
    /// secret that logs one browser in (sent on the control socket only;
    /// a web page may not ask for it).
    public enum Web: ControlCommand {
        public static let name = "web"
        /// Which game the page opens.
        public struct Arguments: Codable, Equatable, Sendable {
            /// A game id or unique prefix the page opens (else the most recent game in progress).
            public var game: String?
            /// A player this daemon hosts (name or id) whom the browser plays as (else the device's own player).
            public var player: String?
            /// Creates arguments.
            public init(game: String? = nil, player: String? = nil) {
                self.game = game
                self.player = player
            }
        }
        /// Where the board is served.
        public struct Result: Codable, Equatable, Sendable {
            /// The address that logs a browser in: used once, within ``expiresMillis``.
            public var url: String
            /// The board's address without the secret (a browser logged in already opens it).
            public var address: String
            /// When the secret in `url` stops working, in milliseconds since 1970.
            public var expiresAt: Int64
            /// Creates the result.
            public init(url: String, address: String, expiresAt: Int64) {
                self.url = url
                self.address = address
                self.expiresAt = expiresAt
            }
        }
    }
}

extension Commands {
    /// `web-lan`: serve the web board to the home network (over TLS), or stop.
    public enum WebLAN: ControlCommand {
        public static let name = "web-lan"
        /// On or off; absent: only say.
        public struct Arguments: Codable, Equatable, Sendable {
            /// Serve the home network (`true`) or stop (`false`); kept across restarts.
            public var enabled: Bool?
            /// Creates arguments.
            public init(enabled: Bool? = nil) { self.enabled = enabled }
        }
        /// Where the board is served to the home network.
        public struct Result: Codable, Equatable, Sendable {
            /// Whether it is served there.
            public var enabled: Bool
            /// The port, while served.
            public var port: Int?
            /// `https://ADDRESS:PORT/` for each address of this computer on the home network.
            public var addresses: [String]
            /// The certificate's SHA-256 fingerprint (once made).
            public var fingerprint: String?
            /// Why it is not served though asked for.
            public var problem: String?
            /// Creates the result.
            public init(enabled: Bool, port: Int?, addresses: [String], fingerprint: String?, problem: String?) {
                self.enabled = enabled
                self.port = port
                self.addresses = addresses
                self.fingerprint = fingerprint
                self.problem = problem
            }
        }
    }

    /// `web-pair`: a one-time code that pairs one browser on the home network.
    public enum WebPair: ControlCommand {
        public static let name = "web-pair"
        public typealias Arguments = Empty
        /// The code and where to use it.
        public struct Result: Codable, Equatable, Sendable {
            /// The code, two groups of four symbols.
            public var code: String
            /// `https://ADDRESS:PORT/?pair=CODE` for each address of this computer.
            public var urls: [String]
            /// The certificate's SHA-256 fingerprint, to compare with the browser's.
            public var fingerprint: String
            /// When the code stops working, in milliseconds since 1970.
            public var expiresAt: Int64
            /// Creates the result.
            public init(code: String, urls: [String], fingerprint: String, expiresAt: Int64) {
                self.code = code
                self.urls = urls
                self.fingerprint = fingerprint
                self.expiresAt = expiresAt
            }
        }
    }

    /// `web-devices`: the browsers paired on the home network.
    public enum WebDevices: ControlCommand {
        public static let name = "web-devices"
        public typealias Arguments = Empty
        /// The list.
        public struct Result: Codable, Equatable, Sendable {
            /// The devices, most recently used first.
            public var devices: [WebDeviceInfo]
            /// Creates the result.
            public init(devices: [WebDeviceInfo]) { self.devices = devices }
        }
    }

    /// `web-revoke`: forget a paired browser; its pages close at once.
    public enum WebRevoke: ControlCommand {
        public static let name = "web-revoke"
        /// Which browser.
        public struct Arguments: Codable, Equatable, Sendable {
            /// Its id (or a unique start of it), or its name.
            public var device: String
            /// Creates arguments.
            public init(device: String) { self.device = device }
        }
        /// The browser revoked.
        public typealias Result = WebDeviceInfo
    }
}

/// A browser paired on the home network, as `web-devices` lists it.
public struct WebDeviceInfo: Codable, Equatable, Sendable {
    /// Its short id.
    public var device: String
    /// What it is ("Chrome on Android").
    public var name: String
    /// When it was paired, in milliseconds since 1970.
    public var pairedAt: Int64
    /// When it last asked for anything, in milliseconds since 1970.
    public var lastUsedAt: Int64
    /// Creates a device.
    public init(device: String, name: String, pairedAt: Int64, lastUsedAt: Int64) {
        self.device = device
        self.name = name
        self.pairedAt = pairedAt
        self.lastUsedAt = lastUsedAt
    }
}

extension ControlProtocol {
    /// The commands a web page may send over the board's WebSocket: it
    /// plays and reads. Managing the circle (inviting, joining, removing,
    /// roles), the device's settings (sync, forget, profile, connect) and
    /// `web` itself stay with the device's owner at the control socket.
    public static let webCommands: Set<String> = [
        Commands.Status.name, Commands.Peers.name, Commands.Presence.name, Commands.Circle.name,
        Commands.Games.name, Commands.Follow.name, Commands.Archive.name, Commands.AddPlayers.name,
        Commands.New.name, Commands.Resign.name, Commands.Show.name, Commands.Reveal.name, Commands.Flag.name,
        Commands.Chord.name, Commands.Replay.name, Commands.Point.name, Commands.Hint.name, Commands.Scores.name,
        Commands.Daily.name, Commands.Subscribe.name, Commands.Cursor.name,
    ]
}

extension ControlError {
    /// A web page sent a command kept for the device's owner.
    public static func notFromTheWeb(_ command: String) -> ControlError {
        ControlError(
            code: "not-from-the-web",
            message:
                "'\(command)' is not sent from a web page: a browser plays and reads, and the circle and this device's settings stay with its owner (the sweeper command)"
        )
    }
    /// No paired browser has that id or name.
    public static func unknownWebDevice(_ device: String) -> ControlError {
        ControlError(code: "unknown-web-device", message: "no paired browser is '\(device)' (see sweeper web devices)")
    }
    /// The web board is not being served.
    public static func webUnavailable(_ why: String) -> ControlError {
        ControlError(code: "web-unavailable", message: "the web board is not served: \(why)")
    }
}
