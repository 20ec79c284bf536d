import Foundation
import Logging
import SweeperCrypto
import SweeperNet
import SweeperSync

/// Runs one sync session per peer link over the daemon's replica: catch-up
/// when a link comes up, ops from peers through the game host (verified,
/// committed, then relayed), every committed op pushed to every link, and
/// periodic summaries for anti-entropy.
actor PeerSync: PeerNodeDelegate {
    private let host: GameHost
    private let logger: Logger
    private var sessions: [UInt64: (link: PeerLinkHandle, sync: SyncSession)] = [:]
    private let committed: AsyncStream<[Op]>
    private let committedInput: AsyncStream<[Op]>.Continuation
    /// Complaints about peers, at most once a minute per peer and kind.
    private var complaints = RateLimitedLog()

    /// The largest sync message sent in one frame; bigger catch-ups are split.
    static let messageBudget = 4 << 20
    /// How often summaries are exchanged with every peer.
    static let antiEntropyInterval: Duration = .seconds(5)

    init(host: GameHost, logger: Logger) {
        self.host = host
        self.logger = logger
        (committed, committedInput) = AsyncStream<[Op]>.makeStream()
    }

    /// Hands ops the host committed (local moves and peers' ops) to the
    /// sessions, in commit order.
    nonisolated func opsCommitted(_ ops: [Op]) {
        committedInput.yield(ops)
    }

    /// Pushes committed ops and ticks anti-entropy until cancelled.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await ops in self.committed { await self.push(ops) }
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: Self.antiEntropyInterval)
                    await self.tick()
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    func stop() { committedInput.finish() }

    // MARK: PeerNodeDelegate

    func linkEstablished(_ link: PeerLinkHandle) async {
        var session = SyncSession()
        let messages = session.start(replica: await host.replica)
        sessions[link.id] = (link, session)
        send(messages, on: link)
        await host.peerChanged(link.peer)
    }

    func received(sync bytes: [UInt8], on link: PeerLinkHandle) async {
        guard var session = sessions[link.id]?.sync else { return }
        let message: SyncMessage
        do {
            message = try SyncMessage(decoding: bytes)
        } catch {
            complaints.log(
                logger, key: "\(link.peer) malformed", "dropping a peer that sent a malformed sync message",
                metadata: ["peer": "\(link.peer.shortDescription)", "error": "\(error)"])
            link.close()
            return
        }
        do {
            let (replies, _, refused) = try await host.receive(message, session: &session)
            if sessions[link.id] != nil { sessions[link.id]?.sync = session }
            send(replies, on: link)
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
            complaints.log(
                logger, key: "\(peer) refused \(reason)", "refused ops from a peer",
                metadata: [
                    "peer": "\(peer.shortDescription)", "reason": "\(reason)", "count": "\(ops.count)",
                    "game": "\(first.gameID)", "author": "\(first.author.shortDescription)", "seq": "\(first.seq)",
                ])
        }
    }

    func helloReceived(_ hello: PeerHello, dialBack: String?, on link: PeerLinkHandle) async {
        await host.rememberPeer(link.peer, name: hello.name, address: dialBack)
        await host.peerChanged(link.peer)
    }

    func linkClosed(_ link: PeerLinkHandle) async {
        sessions[link.id] = nil
        await host.peerChanged(link.peer)
    }

    // MARK: Pushing

    private func push(_ ops: [Op]) async {
        guard !ops.isEmpty, !sessions.isEmpty else { return }
        let replica = await host.replica
        for id in sessions.keys.sorted() {
            guard var entry = sessions[id] else { continue }
            let messages = entry.sync.push(ops, replica: replica)
            sessions[id] = entry
            send(messages, on: entry.link)
        }
    }

    private func tick() async {
        guard !sessions.isEmpty else { return }
        let replica = await host.replica
        for id in sessions.keys.sorted() {
            guard var entry = sessions[id] else { continue }
            let messages = entry.sync.tick(replica: replica)
            sessions[id] = entry
            send(messages, on: entry.link)
        }
    }

    /// Sends messages, splitting an ops message whose encoding is over the budget.
    private func send(_ messages: [SyncMessage], on link: PeerLinkHandle) {
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
        for (id, entry) in sessions where entry.sync.hasPeerSummary {
            var theyLack = 0
            var weLack = 0
            let theirs = entry.sync.peerHolds
            for game in Set(ours.keys).union(theirs.keys) {
                // The peer's summary may claim any sequence numbers: lag(against:) saturates instead of trapping.
                let (ahead, behind) = (ours[game] ?? VersionVector()).lag(against: theirs[game] ?? VersionVector())
                theyLack = theyLack.addingReportingOverflow(ahead).overflow ? .max : theyLack + ahead
                weLack = weLack.addingReportingOverflow(behind).overflow ? .max : weLack + behind
            }
            out[id] = PeerInfoSync(theyLack: theyLack, weLack: weLack)
        }
        return out
    }
}

/// A peer's sync counts, as the control protocol reports them.
struct PeerInfoSync: Sendable {
    var theyLack: Int
    var weLack: Int
}
