import SweeperCrypto
import SweeperMessages
import SweeperNet

/// How a peer stands, as the peer side knows it: what the node knows of it,
/// how far apart the two devices' games are, and the version it speaks.
struct PeerStanding: Sendable {
    /// What the node knows of the peer.
    var snapshot: PeerSnapshot
    /// How many ops each side lacks, once the peer's first summary came.
    var lag: SyncLag?
    /// The protocol version its hello gave, while linked.
    var protocolVersion: UInt8?
}

/// How many ops each side of a link lacks of the other's.
struct SyncLag: Sendable, Equatable {
    /// Ops this device holds and the peer lacks.
    var theyLack: Int
    /// Ops the peer holds and this device lacks.
    var weLack: Int
}

/// Where the peer side reports what changed, for the viewers: the control
/// layer turns each report into an event. The peer side itself knows
/// nothing of the control protocol.
protocol PeerChangeSink: Sendable {
    /// A player (this device's or another's) now looks at `spot`, or at no game (nil).
    func presenceChanged(of author: PeerID, to spot: PresenceSpot?)
    /// A player (this device's, `own`, or another's) points at `spot`: viewers of its game flash the cell.
    func pointed(by author: PeerID, at spot: PresenceSpot, own: Bool)
    /// How a peer stands changed (a link came up or closed, a hello gave its name).
    func peerChanged(_ standing: PeerStanding)
    /// A player's profile (name, colour) changed: viewers rename them at once.
    func profileChanged(of author: PeerID)
}

/// Where a player looks, as `peers`, `presence` and `status` list it.
struct PlayerSpot: Sendable {
    /// The player.
    var author: PeerID
    /// The cell of the game it looks at.
    var spot: PresenceSpot
    /// Whether it is this device's player.
    var own: Bool
}
