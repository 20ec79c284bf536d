import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The commands about peers and links: dialling an address, and the
/// peers known and linked.
extension Commands {
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
}
