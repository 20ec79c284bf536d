import Logging
import SweeperCrypto
import SweeperMembership
import SweeperMessages
import SweeperNet
import SweeperSync
import Synchronization

/// What a link's peer takes, as its sync session last heard it (its
/// interest): kept apart from the session, which lives on the event loop,
/// for the parts that send notes about a game from anywhere.
final class PeerInterest: Sendable {
    private let interest = Mutex(GameInterest.everything)

    init() {}

    /// Whether the peer takes `game`.
    func contains(_ game: GameID) -> Bool {
        interest.withLock { $0.contains(game) }
    }

    /// The peer said it takes `interest` now.
    func set(_ interest: GameInterest) {
        self.interest.withLock { $0 = interest }
    }
}

/// One link to a peer of the circle as the daemon holds it: the
/// transport's handle, what the peer takes, and what it understands (from
/// its hello); its sync session is the ``SyncSessions``'. Every message the daemon sends a peer
/// goes through here, so that a peer is never sent a message it cannot read.
struct PeerLink: Sendable {
    /// The transport's link.
    let handle: PeerLinkHandle
    /// What the peer takes, as it last said.
    let interest = PeerInterest()

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
        return interest.contains(game)
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

    /// Drops the link for a malformed `what` its peer sent: logged at most
    /// once a minute per peer and kind, in `complaints`.
    func drop(sent what: String, _ error: any Error, complaints: borrowing Mutex<RateLimitedLog>, logger: Logger) {
        _ = complaints.withLock {
            $0.log(
                logger, key: "\(peer) malformed \(what)", "dropping a peer that sent a malformed \(what)",
                metadata: ["peer": "\(peer.shortDescription)", "error": "\(error)"])
        }
        close(because: "a malformed \(what): \(error)")
    }
}

extension PeerMessage {
    /// The message as the transport carries it: its type and body.
    var application: ApplicationMessage { ApplicationMessage(type: kind.rawValue, body: body) }
}
