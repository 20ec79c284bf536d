import SweeperCrypto
import SweeperMembership
import SweeperMessages
import SweeperNet
import SweeperSync
import Synchronization

/// A sync session shared by the link's reader (ops coming in, through the
/// game service) and the pushes (ops going out), each under the session's
/// lock, so neither overwrites what the other noted.
final class SharedSyncSession: Sendable {
    private let session: Mutex<SyncSession>

    /// Shares `session`.
    init(_ session: SyncSession) {
        self.session = Mutex(session)
    }

    /// Runs `body` on the session, under its lock.
    func withSession<R: Sendable>(_ body: (inout SyncSession) -> R) -> R {
        session.withLock { body(&$0) }
    }
}

/// A link's sync messages in the order they came, while one of them is
/// handled: a big one is decoded and its signatures checked on another
/// thread before its turn on the event loop, and the link's later
/// messages wait for it here (the link stops reading meanwhile).
///
/// It also notes whether a catch-up for the peer is being read off the
/// loop: one at a time per link, so that a peer that keeps saying it lacks
/// everything makes one read at a time, not one per summary.
final class SyncIntake: Sendable {
    private let state = Mutex<(busy: Bool, waiting: [[UInt8]])>((false, []))
    private let catchingUp = Mutex(false)

    /// Whether a catch-up may start now (none is being read): it is then noted as started.
    func startCatchUp() -> Bool {
        catchingUp.withLock { running in
            defer { running = true }
            return !running
        }
    }

    /// The catch-up being read is sent.
    func catchUpSent() {
        catchingUp.withLock { $0 = false }
    }

    init() {}

    /// Takes `bytes` for handling now (`true`), or keeps them behind the
    /// message being handled (`false`).
    func enter(_ bytes: [UInt8]) -> Bool {
        state.withLock { s in
            if s.busy {
                s.waiting.append(bytes)
                return false
            }
            s.busy = true
            return true
        }
    }

    /// The next message kept waiting, or `nil` (and nothing is handled any more).
    func next() -> [UInt8]? {
        state.withLock { s in
            if s.waiting.isEmpty {
                s.busy = false
                return nil
            }
            return s.waiting.removeFirst()
        }
    }
}

/// One link to a peer of the circle as the daemon holds it: the
/// transport's handle, the link's sync session, and what the peer
/// understands (from its hello). Every message the daemon sends a peer
/// goes through here, so that a peer is never sent a message it cannot read.
struct PeerLink: Sendable {
    /// The transport's link.
    let handle: PeerLinkHandle
    /// The link's sync session.
    let session: SharedSyncSession
    /// Its sync messages waiting behind one handled off the loop.
    let intake = SyncIntake()

    /// Unique for the life of the node.
    var id: UInt64 { handle.id }
    /// The peer at the other end.
    var peer: PeerID { handle.peer }

    /// What the peer understands: decided by its hello (the transport keeps
    /// the version it said); before the hello, only sync messages.
    var capabilities: PeerCapabilities { PeerCapabilities(version: handle.peerVersion) }

    /// Whether the peer takes `game` (its interest, as last said): what is
    /// sent about a game (its ops, shares of its played time) goes only to
    /// peers that take it.
    func takes(game bytes: [UInt8]) -> Bool {
        guard let game = GameID(bytes: bytes) else { return true }
        return session.withSession { $0.peerInterest.contains(game) }
    }

    /// Sends a message when the peer understands its kind (every peer
    /// reads sync messages, even before its hello). A presence note is
    /// dropped while the link's send buffer is full: the next one replaces it.
    func send(_ message: PeerMessage) {
        let kind = message.kind
        guard kind == .sync || capabilities.reads(kind) else { return }
        if kind == .presence, !handle.isWritable { return }
        handle.send(message.application)
    }

    /// Sends membership records, in messages of at most
    /// ``PeerMessage/membershipLimit`` records and
    /// ``PeerMessage/membershipByteBudget`` bytes (``PeerMessage/membershipBatches(_:)``).
    /// A peer older than ``PeerCapabilities/partsVersion`` is not sent
    /// invitation switches, which it cannot read (the author's later
    /// records then wait there for them, harmlessly).
    func send(membership records: [[UInt8]]) {
        var readable = records
        if !capabilities.readsParts {
            readable.removeAll { bytes in
                guard case .current(let record)? = try? AnyMembershipRecord(decoding: bytes) else { return false }
                return record.change.kind == .invitations
            }
        }
        for message in PeerMessage.membershipBatches(readable) { send(message) }
    }

    /// The largest sync message sent in one frame; bigger catch-ups and
    /// summaries are split.
    static let syncMessageBudget = 4 << 20
    /// The largest summary sent to a peer that does not take one in parts:
    /// under the 16 MiB frame limit, and big enough for the first 65,536
    /// games (the ones live pushes name by their place) of up to 7 authors each.
    static let olderPeerSummaryBudget = 15 << 20

    /// Sends sync messages, splitting an ops or chains message whose
    /// encoding is over the budget. Only a catch-up (`ops`, `chains`: a
    /// chains message reads the link's state and never changes it) may be
    /// dropped while the send buffer is full (anti-entropy sends it again);
    /// the other messages are the link's stream, on which both sessions rely.
    func send(_ messages: [SyncMessage]) {
        for message in messages {
            let encoded = message.encoded
            if case .summary(let games, let wantsReply) = message, encoded.count > Self.syncMessageBudget || games.count > SyncMessage.gameLimit {
                // Too big for one message: in parts to a peer that takes them; an
                // older peer gets the summary's first games (it sends what it
                // believes missing of the others, which is only wasteful).
                let split =
                    capabilities.readsParts
                    ? SyncMessage.parts(of: games, wantsReply: wantsReply, byteBudget: Self.syncMessageBudget)
                    : [SyncMessage.truncated(games, wantsReply: wantsReply, byteBudget: Self.olderPeerSummaryBudget)]
                for part in split { sendSync(part.encoded, droppable: false) }
                continue
            }
            switch message {
            case .ops(let segments): sendCatchUp(segments, encoded: encoded, as: SyncMessage.ops)
            case .chains(let segments): sendCatchUp(segments, encoded: encoded, as: SyncMessage.chains)
            default: sendSync(encoded, droppable: false)
            }
        }
    }

    /// Sends a catch-up, droppable, in messages of at most
    /// ``syncMessageBudget`` bytes (one segment over it goes alone).
    private func sendCatchUp<Segment>(_ segments: [Segment], encoded: [UInt8], as message: ([Segment]) -> SyncMessage) {
        guard encoded.count > Self.syncMessageBudget else {
            sendSync(encoded, droppable: true)
            return
        }
        var batch: [Segment] = []
        var size = 0
        for segment in segments {
            let one = message([segment]).encoded.count
            if !batch.isEmpty && size + one > Self.syncMessageBudget {
                sendSync(message(batch).encoded, droppable: true)
                batch = []
                size = 0
            }
            batch.append(segment)
            size += one
        }
        if !batch.isEmpty { sendSync(message(batch).encoded, droppable: true) }
    }

    private func sendSync(_ bytes: [UInt8], droppable: Bool) {
        handle.send(ApplicationMessage(type: PeerMessage.Kind.sync.rawValue, body: bytes), droppable: droppable)
    }

    /// Drops the link (a peer that sent something malformed), saying why in the log.
    func close(because reason: String? = nil) { handle.close(because: reason) }
}

extension PeerMessage {
    /// The message as the transport carries it: its type and body.
    var application: ApplicationMessage { ApplicationMessage(type: kind.rawValue, body: body) }
}
