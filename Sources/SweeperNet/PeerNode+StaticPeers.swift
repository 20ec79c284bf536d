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

    /// Dials the static peer `host:port` until the node stops: again
    /// whenever its link drops, with backoff. A peer met there before is
    /// dialled as mDNS dials it: the larger id waits first, so that usually
    /// the smaller one alone dials, and no dial goes while another loop
    /// dials that peer.
    nonisolated func dialStaticLoop(host: String, port: Int) async {
        let key = hostPortText(host: host, port: port)
        if let known = await staticPeer(key), peerID > known { try? await Task.sleep(for: configuration.largerIDDialDelay) }
        var failures = 0
        while !Task.isCancelled {
            let known = await staticPeer(key)
            if let known, await isConnected(known) {
                try? await Task.sleep(for: configuration.linkedRecheckInterval)
                continue
            }
            if let known, !(await claimDial(known)) {
                try? await Task.sleep(for: configuration.linkedRecheckInterval)
                continue
            }
            var established: PeerID?
            do {
                // The peer's key is not known: after a failure, the circle's earlier keys in turn.
                let keys = await credentials.keys
                let circleKey = keys[failures % keys.count]
                let channel = try await dial(.host(host, port: port))
                established = await runLink(
                    channel, role: .client, key: circleKey, expected: nil, origin: .static, staticTarget: key)
            } catch {
                await logFailure(key, "dial failed: \(error)")
                // An unscoped link-local address cannot be dialled: say so rather than "Invalid argument".
                let reason =
                    LinkLocalAddress.isUnscoped(host)
                    ? "a link-local IPv6 address needs its interface, as in [fe80::1%eth0]:7455" : UnreachedPeer.explain(error)
                await noteUnreached(key, reason)
            }
            if let known { await setDialing(known, false) }
            if let established { await setStaticPeer(key, established) }
            failures = established == nil ? failures + 1 : 0
            await sleep(for: await backoff(failures), orUntilAskedAgain: key)
        }
    }

    /// Sleeps `duration`, or less when `connect` asks for `key` again.
    nonisolated func sleep(for duration: Duration, orUntilAskedAgain key: String) async {
        let end = ContinuousClock.now + duration
        while !Task.isCancelled, ContinuousClock.now < end {
            if await takeDialNow(key) { return }
            try? await Task.sleep(for: min(.milliseconds(200), end - ContinuousClock.now))
        }
    }
}
