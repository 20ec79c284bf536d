import FoundationEssentials
import SweeperControl
import SweeperCrypto
import SweeperMessages
import SweeperNet
import SweeperSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns the peer side's reports into viewers' events: `presence` (who
/// looks where), `point` (who points at a cell) and `peer-changed` (how a
/// peer stands).
struct PeerEvents: PeerChangeSink {
    let events: EventHub
    let views: ReplyViews

    func presenceChanged(of author: PeerID, to spot: PresenceSpot?) {
        events.publish(ControlEvent(event: .presence, presence: views.presence(author, spot, own: false)))
    }

    func pointed(by author: PeerID, at spot: PresenceSpot, own: Bool) {
        let info = views.presence(author, spot, own: own)
        events.publish(ControlEvent(event: .point, game: info.game, byName: info.name, x: spot.x, y: spot.y, presence: info))
    }

    func peerChanged(_ standing: PeerStanding) {
        events.publish(ControlEvent(event: .peerChanged, peerInfo: views.peer(standing)))
    }

    func profileChanged(of author: PeerID) {
        events.publish(ControlEvent(event: .profileChanged, presence: views.presence(author, nil, own: false)))
    }
}

extension ReplyViews {
    /// Where a player looks, as `presence` events and lists show it: named
    /// as every view names a player (``name(of:)``: with the short id when
    /// two members share a name).
    func presence(_ author: PeerID, _ spot: PresenceSpot?, own: Bool) -> PresenceInfo {
        let name = name(of: author)
        let colour = peers.profile(of: author)?.colour ?? 0
        var info = PresenceInfo(
            peer: author.description, name: name, game: spot.flatMap { GameID(bytes: $0.game)?.description },
            x: spot?.x, y: spot?.y, colour: colour > 0 ? Int(colour) : nil, own: own ? true : nil)
        info.letter = letters()[author].map(String.init)
        return info
    }

    /// Everyone who looks at a game, as `peers`, `presence` and `status` list them.
    func presence(_ spots: [PlayerSpot]) -> [PresenceInfo] {
        spots.map { presence($0.author, $0.spot, own: $0.own) }
    }

    /// What a linked peer of an older peer protocol misses, and what to
    /// do; nil for a peer that misses nothing a player sees.
    static func versionNote(of name: String, speaking version: UInt8) -> String? {
        guard version < PeerCapabilities.playVersion else { return nil }
        let who = name.isEmpty ? "this peer" : name
        if version >= PeerCapabilities.presenceVersion {
            return "\(who) runs an older Sweeper (peer protocol \(version)): games, cursors and names sync, "
                + "but its played time is not added to the games' time. Upgrade it."
        }
        return "\(who) runs an older Sweeper (peer protocol \(version)): games sync, "
            + "but cursors, chosen names and played time do not reach it. Upgrade it."
    }

    /// How `peers` and `peer-changed` events show a peer: named by its
    /// profile when one came (a daemon of this circle), else as it said.
    func peer(_ standing: PeerStanding) -> PeerInfo {
        let p = standing.snapshot
        var info = PeerInfo(
            peer: p.id.description, name: p.name ?? "", addresses: p.addresses, state: p.state.shown,
            via: p.origins.map(\.rawValue), lastSeenAt: p.lastSeen.map(\.millisAt),
            roundTripMillis: p.roundTrip.map { Int($0.components.seconds) * 1000 + Int((Double($0.components.attoseconds) / 1e15).rounded()) },
            sync: standing.lag.map { PeerInfo.Sync(theyLack: $0.theyLack, weLack: $0.weLack) }, otherCircle: p.otherCircle)
        // Named by its profile, told apart from a member of the same name.
        if !p.otherCircle, let profile = peers.profile(of: p.id), !profile.name.isEmpty { info.name = name(of: p.id) }
        if let version = standing.protocolVersion {
            info.protocolVersion = Int(version)
            info.versionNote = Self.versionNote(of: info.name, speaking: version)
        }
        info.lastHeardAt = p.lastHeard.map(\.millisAt)
        if !p.otherCircle {
            let hosted = members.view.members.values.filter { $0.hostedBy == p.id }.map { name(of: $0.peer) }.sorted()
            if !hosted.isEmpty { info.hostNames = hosted }
        }
        return info
    }

    /// A static peer whose last dial failed, as `peers --all` shows it.
    static func unreached(_ peer: UnreachedPeer) -> UnreachedPeerInfo {
        UnreachedPeerInfo(address: peer.address, reason: peer.reason, failedAt: peer.since.millisAt)
    }
}

extension PeerLinkState {
    /// How the control protocol says it.
    var shown: PeerState {
        switch self {
        case .connected: .connected
        case .connecting: .connecting
        case .discovered: .discovered
        case .offline: .offline
        }
    }
}
