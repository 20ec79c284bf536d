import FoundationEssentials
import SweeperCrypto

/// How a peer dialled by address stands, for `connect` to say.
public struct StaticDial: Sendable, Equatable {
    /// The peer the address reached, once a link to it came up.
    public var peer: PeerID?
    /// Whether that peer is linked now.
    public var linked: Bool
    /// Why the last dial failed, while it is not linked.
    public var failure: String?
}

extension PeerNode {
    /// How the address `host:port` stands as a static peer (`--peer`,
    /// `connect`): the peer it reached and whether it is linked now (by
    /// this dial or by a link the peer made), or why its last dial failed;
    /// nil when it is not a static peer.
    public func staticDial(host: String, port: Int) -> StaticDial? {
        let key = hostPortText(host: host, port: port)
        guard let target = staticTargets[key] else { return nil }
        // The peer may have linked first (its own dial, or after this one's
        // link was closed as a duplicate): a linked peer known at this address.
        let peer =
            target.flatMap { isConnected($0) ? $0 : nil }
            ?? snapshot().first { $0.state == .connected && $0.addresses.contains(key) }?.id ?? target
        let linked = peer.map(isConnected) ?? false
        return StaticDial(peer: peer, linked: linked, failure: linked ? nil : unreached[key]?.reason)
    }

    /// The static peers (`--peer`, `connect`, peers met before) whose last
    /// dial failed and that are not linked now, with why and when.
    public func unreachedStaticPeers() -> [UnreachedPeer] {
        unreached.compactMap { key, failure in
            if let peer = staticTargets[key] ?? nil, isConnected(peer) { return nil }
            return UnreachedPeer(address: key, reason: failure.reason, since: failure.at)
        }.sorted { $0.address < $1.address }
    }

    /// `connect` named a static peer known already: its dial loop dials
    /// at once instead of waiting out its backoff.
    func dialAgainNow(_ key: String) {
        unreached[key] = nil
        dialNow.insert(key)
    }

    /// Whether `connect` asked for `key` again since the last look.
    private func takeDialNow(_ key: String) -> Bool { dialNow.remove(key) != nil }

    /// Sleeps `duration`, or less when `connect` asks for `key` again.
    nonisolated func sleep(for duration: Duration, orUntilAskedAgain key: String) async {
        let end = ContinuousClock.now + duration
        while !Task.isCancelled, ContinuousClock.now < end {
            if await takeDialNow(key) { return }
            try? await Task.sleep(for: min(.milliseconds(200), end - ContinuousClock.now))
        }
    }
}
