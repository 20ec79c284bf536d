import FoundationEssentials
import NIOCore
import SweeperCrypto

/// Where peers are seen: mDNS on this network, and members' address notes
/// for those it cannot see (another house, a tunnel).
extension PeerNode {
    /// Records an mDNS sighting: a member of this circle is dialled (the
    /// peer with the smaller id first, so both rarely dial at once); a
    /// daemon of another circle is only remembered, for `peers --all`.
    public func sighted(_ sighting: PeerSighting) {
        if directory.sighted(sighting, circleTags: credentials.tags, refused: credentials.refused) { enqueue(.dialPeer(sighting.peer)) }
    }

    /// Records that mDNS no longer sees `peer`.
    public func sightingLost(_ peer: PeerID) {
        directory.sightingLost(peer)
    }

    /// A member's address note says it listens at `addresses`: it is
    /// dialled there (with the mDNS dial loop's backoff, the larger id
    /// waiting first) until a link comes up or ``gossipExpired(_:)``. The
    /// caller checks that `peer` is a member; a refused peer is not dialled.
    /// With `seen` (the note is fresh), it counts as seen now.
    public func gossiped(_ peer: PeerID, addresses: [SocketAddress], seen: Bool) {
        if directory.gossiped(peer, addresses: addresses, refused: credentials.refused, seen: seen) { enqueue(.dialPeer(peer)) }
        if peer != peerID { tellChanged(peer) }
    }

    /// Forgets the addresses a note of `peer` gave: it expired, or its
    /// author is no member now. Its dial loop stops unless mDNS sees it.
    public func gossipExpired(_ peer: PeerID) {
        directory.gossipExpired(peer)
    }
}
