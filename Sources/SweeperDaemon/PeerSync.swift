import Foundation
import Logging
import SweeperCrypto
import SweeperNet
import SweeperSync
import Synchronization

/// One link's sync session, shared by the link's reader (ops coming in)
/// and the game host's pushes (ops going out), each under the session's
/// lock, so neither overwrites what the other noted.
final class LinkSession: Sendable {
    let link: PeerLinkHandle
    private let session: Mutex<SyncSession>

    init(link: PeerLinkHandle, session: SyncSession) {
        self.link = link
        self.session = Mutex(session)
    }

    /// Runs `body` on the session, under its lock.
    func withSession<R: Sendable>(_ body: (inout SyncSession) -> R) -> R {
        session.withLock { body(&$0) }
    }
}

/// Runs one sync session per peer link over the daemon's replica: catch-up
/// when a link comes up, ops from peers through the game host (verified,
/// applied, shown, relayed, committed), every new op pushed to every link
/// at once from inside the game host, and periodic summaries for
/// anti-entropy.
///
/// Pushing is synchronous: the host calls ``push(_:replica:)`` with its own
/// replica the moment it holds a new op, so a move reaches the links
/// without waiting for another actor or task.
final class PeerSync: PeerNodeDelegate, Sendable {
    private let host: GameHost
    /// This daemon's own id: its own ops go to every link.
    private let ownID: PeerID
    private let logger: Logger
    private let sessions = Mutex<[UInt64: LinkSession]>([:])
    /// Complaints about peers, at most once a minute per peer and kind.
    private let complaints = Mutex(RateLimitedLog())

    /// The largest sync message sent in one frame; bigger catch-ups are split.
    static let messageBudget = 4 << 20
    /// How often summaries are exchanged with every peer.
    static let antiEntropyInterval: Duration = .seconds(5)

    init(host: GameHost, ownID: PeerID, logger: Logger) {
        self.host = host
        self.ownID = ownID
        self.logger = logger
    }

    /// Ticks anti-entropy until cancelled.
    func run() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.antiEntropyInterval)
            if Task.isCancelled { break }
            await tick()
        }
    }

    /// Runs `body` on the host: at once when called on the host's event
    /// loop (the daemon runs the node on the same loop, so a peer's op goes
    /// from the socket into the game in the call that read it), else in
    /// the loop's next turn, in the order of the calls.
    private func onHost(_ body: @escaping @Sendable (isolated GameHost) -> Void) {
        let host = self.host
        if host.eventLoop.inEventLoop {
            host.assumeIsolated(body)
        } else {
            host.eventLoop.execute { host.assumeIsolated(body) }
        }
    }

    // MARK: PeerNodeDelegate

    func linkEstablished(_ link: PeerLinkHandle) {
        onHost { host in
            var session = SyncSession()
            let messages = session.start(replica: host.replica)
            self.sessions.withLock { $0[link.id] = LinkSession(link: link, session: session) }
            Self.send(messages, on: link)
        }
        peerChanged(link.peer)
    }

    /// Tells the host a peer's state changed (its `peers` event), in a task:
    /// it reads the node, which is busy with the call that brought the news.
    private func peerChanged(_ peer: PeerID) {
        Task { [host] in await host.peerChanged(peer) }
    }

    func received(sync bytes: [UInt8], on link: PeerLinkHandle) {
        onHost { host in self.received(sync: bytes, on: link, host: host) }
    }

    private func received(sync bytes: [UInt8], on link: PeerLinkHandle, host: isolated GameHost) {
        guard let session = sessions.withLock({ $0[link.id] }) else { return }
        let message: SyncMessage
        do {
            message = try SyncMessage(decoding: bytes)
        } catch {
            _ = complaints.withLock {
                $0.log(
                    logger, key: "\(link.peer) malformed", "dropping a peer that sent a malformed sync message",
                    metadata: ["peer": "\(link.peer.shortDescription)", "error": "\(error)"])
            }
            link.close()
            return
        }
        do {
            let (replies, _, refused) = try host.receive(message, on: session)
            Self.send(replies, on: link)
            logRefusals(refused, from: link.peer)
        } catch {
            // Storage failed: nothing was kept, the peer will offer the ops again.
            logger.error("could not commit ops from a peer", metadata: ["peer": "\(link.peer.shortDescription)", "error": "\(error)"])
        }
    }

    /// Logs the ops a peer sent that were refused: one line per peer and
    /// reason a minute, with the count and the first op refused.
    private func logRefusals(_ refused: [OpRefusal], from peer: PeerID) {
        for (reason, ops) in Dictionary(grouping: refused, by: \.reason).sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            guard let first = ops.first else { continue }
            _ = complaints.withLock {
                $0.log(
                    logger, key: "\(peer) refused \(reason)", "refused ops from a peer",
                    metadata: [
                        "peer": "\(peer.shortDescription)", "reason": "\(reason)", "count": "\(ops.count)",
                        "game": "\(first.gameID)", "author": "\(first.author.shortDescription)", "seq": "\(first.seq)",
                    ])
            }
        }
    }

    func helloReceived(_ hello: PeerHello, dialBack: String?, on link: PeerLinkHandle) {
        onHost { host in host.rememberPeer(link.peer, name: hello.name, address: dialBack) }
        peerChanged(link.peer)
    }

    func linkClosed(_ link: PeerLinkHandle) {
        onHost { _ in _ = self.sessions.withLock { $0.removeValue(forKey: link.id) } }
        peerChanged(link.peer)
    }

    // MARK: Pushing

    /// Brings every linked peer the new ops (and whatever before them it is
    /// believed to lack), from `replica`, the host's replica that holds
    /// them. Called by the host, synchronously, the moment it holds them;
    /// a peer that sent them holds them already and is skipped by its session.
    func push(_ ops: [Op], replica: Replica) {
        guard !ops.isEmpty else { return }
        for session in linkSessions() {
            let relayed = Self.relayed(ops, to: session.link.reportedLinks, ownID: ownID)
            guard !relayed.isEmpty else { continue }
            Self.send(session.withSession { $0.push(relayed, replica: replica) }, on: session.link)
        }
    }

    /// The ops to push to a peer that says it is linked to `linkedPeers`:
    /// this daemon's own ops always, another author's only when the peer is
    /// not linked to that author, who pushes them there itself. On a home
    /// network where every daemon links to every other, a move is then sent
    /// once to each peer instead of once by every peer to every other; a
    /// daemon out of the author's reach still gets it relayed, and
    /// anti-entropy repairs a push that was lost.
    static func relayed(_ ops: [Op], to linkedPeers: Set<PeerID>, ownID: PeerID) -> [Op] {
        guard !linkedPeers.isEmpty else { return ops }
        return ops.filter { $0.author == ownID || !linkedPeers.contains($0.author) }
    }

    private func tick() async {
        let linked = linkSessions()
        guard !linked.isEmpty else { return }
        let replica = await host.replica
        for session in linked {
            Self.send(session.withSession { $0.tick(replica: replica) }, on: session.link)
        }
    }

    /// The linked sessions, in link order.
    private func linkSessions() -> [LinkSession] {
        sessions.withLock { all in all.keys.sorted().compactMap { all[$0] } }
    }

    /// Sends messages, splitting an ops message whose encoding is over the budget.
    private static func send(_ messages: [SyncMessage], on link: PeerLinkHandle) {
        for message in messages {
            let encoded = message.encoded
            guard encoded.count > Self.messageBudget, case .ops(let segments) = message else {
                link.send(sync: encoded)
                continue
            }
            var batch: [OpSegment] = []
            var size = 0
            for segment in segments {
                let one = SyncMessage.ops([segment]).encoded.count
                if !batch.isEmpty && size + one > Self.messageBudget {
                    link.send(sync: SyncMessage.ops(batch).encoded)
                    batch = []
                    size = 0
                }
                batch.append(segment)
                size += one
            }
            if !batch.isEmpty { link.send(sync: SyncMessage.ops(batch).encoded) }
        }
    }

    // MARK: Inspection

    /// What each linked peer lacks and holds beyond us, by link id; nil
    /// until the peer's first summary.
    func syncStates() async -> [UInt64: PeerInfoSync] {
        let ours = await host.replica.summary
        var out: [UInt64: PeerInfoSync] = [:]
        for session in linkSessions() {
            guard let theirs = session.withSession({ $0.hasPeerSummary ? $0.peerHolds : nil }) else { continue }
            var theyLack = 0
            var weLack = 0
            for game in Set(ours.keys).union(theirs.keys) {
                // The peer's summary may claim any sequence numbers: lag(against:) saturates instead of trapping.
                let (ahead, behind) = (ours[game] ?? VersionVector()).lag(against: theirs[game] ?? VersionVector())
                theyLack = theyLack.addingReportingOverflow(ahead).overflow ? .max : theyLack + ahead
                weLack = weLack.addingReportingOverflow(behind).overflow ? .max : weLack + behind
            }
            out[session.link.id] = PeerInfoSync(theyLack: theyLack, weLack: weLack)
        }
        return out
    }
}

/// A peer's sync counts, as the control protocol reports them.
struct PeerInfoSync: Sendable {
    var theyLack: Int
    var weLack: Int
}
