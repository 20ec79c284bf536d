import SweeperNet
import SweeperSync

/// How the peers stand, as `peers` and the viewers show them: each one's
/// snapshot from the node with its protocol version, what it lacks and
/// holds beyond this device (its lag, once its first summary came), and
/// the games its last summary said it holds.
struct PeerStandings: Sendable {
    let service: GameService
    let links: LinkRegistry
    let sessions: SyncSessions
    let peers: PeerBook

    /// How a peer the node knows stands, with its lag when linked (read
    /// from the service's summary).
    func standing(_ snapshot: PeerSnapshot) async -> PeerStanding {
        let linked = snapshot.linkID.flatMap { links.link(id: $0) }
        let lags = await Self.lags(linked.map { [$0] } ?? [], service: service, sessions: sessions)
        return standing(snapshot, lag: snapshot.linkID.flatMap { lags[$0] })
    }

    /// How a peer the node knows stands, with `lag` when linked.
    func standing(_ snapshot: PeerSnapshot, lag: SyncLag?) -> PeerStanding {
        let version = snapshot.linkID.flatMap { links.link(id: $0)?.capabilities.version }
        return PeerStanding(snapshot: snapshot, lag: lag, protocolVersion: version.flatMap { $0 > 0 ? $0 : nil })
    }

    /// Each linked peer's name and the games its last summary said it holds.
    func peerHoldings() async -> [PeerHoldings] {
        await sessions.summaries(of: links.all).map {
            PeerHoldings(peer: $0.link.peer, name: peers.name(of: $0.link.peer) ?? $0.link.peer.shortDescription, holds: $0.holds, described: $0.described)
        }
    }

    /// What each linked peer lacks and holds beyond us, by link id; absent
    /// until the peer's first summary.
    func lags() async -> [UInt64: SyncLag] {
        await Self.lags(links.all, service: service, sessions: sessions)
    }

    /// Only what each side takes counts (`sync mine` takes only its own
    /// games): ops of a game the peer does not take are nothing it lacks,
    /// and ops of one this device does not take nothing this device lacks.
    private static func lags(_ links: [PeerLink], service: GameService, sessions: SyncSessions) async -> [UInt64: SyncLag] {
        guard !links.isEmpty else { return [:] }
        let (ours, interest) = await (service.replica.summary, service.interest)
        var out: [UInt64: SyncLag] = [:]
        for summary in await sessions.summaries(of: links) {
            let (link, theirs, takes) = (summary.link, summary.holds, summary.takes)
            var theyLack = 0
            var weLack = 0
            for game in Set(ours.keys).union(theirs.keys) {
                // The peer's summary may claim any sequence numbers: lag(against:) saturates instead of trapping.
                var (ahead, behind) = (ours[game] ?? VersionVector()).lag(against: theirs[game] ?? VersionVector())
                if !takes.contains(game) { ahead = 0 }
                if !interest.contains(game) { behind = 0 }
                theyLack = theyLack.addingReportingOverflow(ahead).overflow ? .max : theyLack + ahead
                weLack = weLack.addingReportingOverflow(behind).overflow ? .max : weLack + behind
            }
            out[link.id] = SyncLag(theyLack: theyLack, weLack: weLack)
        }
        return out
    }
}
