/// A copy of this device: its identity, circle and history in one file.
extension Commands {
    /// `backup`: writes a consistent copy of the daemon's database to a new
    /// file while it runs (a local client only: never from the web board).
    public enum Backup: ControlCommand {
        public static let name = "backup"
        /// Where to write it.
        public struct Arguments: Codable, Equatable, Sendable {
            /// An absolute path of a file that does not exist yet.
            public var path: String
            /// Creates arguments.
            public init(path: String) { self.path = path }
        }
        /// What was written.
        public struct Result: Codable, Equatable, Sendable {
            /// The file written.
            public var path: String
            /// Its size in bytes.
            public var bytes: Int
            /// The games it holds.
            public var gameCount: Int
            /// The device it restores: this daemon's peer id.
            public var peer: String
            /// Creates a result.
            public init(path: String, bytes: Int, gameCount: Int, peer: String) {
                self.path = path
                self.bytes = bytes
                self.gameCount = gameCount
                self.peer = peer
            }
        }
    }
}
