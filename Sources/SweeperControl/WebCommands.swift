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
            /// Creates arguments.
            public init(game: String? = nil) { self.game = game }
        }
        /// Where the board is served.
        public struct Result: Codable, Equatable, Sendable {
            /// The address that logs a browser in: used once, within ``expiresMillis``.
            public var url: String
            /// The board's address without the secret (a browser logged in already opens it).
            public var address: String
            /// When the secret in `url` stops working, in milliseconds since 1970.
            public var expiresMillis: Int64
            /// Creates the result.
            public init(url: String, address: String, expiresMillis: Int64) {
                self.url = url
                self.address = address
                self.expiresMillis = expiresMillis
            }
        }
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
                "'\(command)' is not sent from a web page: a browser plays and reads, and the circle and this device's settings stay with its owner (the sweeper command)")
    }
    /// The web board is not being served.
    public static func webUnavailable(_ why: String) -> ControlError {
        ControlError(code: "web-unavailable", message: "the web board is not served: \(why)")
    }
}
