import SweeperCrypto
import SweeperNet
import SweeperSync
import Synchronization

/// A sync session shared by the link's reader (ops coming in, through the
/// game service) and the relay's pushes (ops going out), each under the
/// session's lock, so neither overwrites what the other noted.
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

/// One link and its sync session.
struct LinkSession: Sendable {
    /// The link.
    let link: PeerLinkHandle
    /// Its session.
    let session: SharedSyncSession

    /// Whether the peer takes `game` (its interest, as last said): what is
    /// sent about a game (its ops, shares of its played time) goes only to
    /// peers that take it.
    func takes(game bytes: [UInt8]) -> Bool {
        guard let game = GameID(bytes: bytes) else { return true }
        return session.withSession { $0.peerInterest.contains(game) }
    }
}

/// Pushes new ops to every linked peer: the game service's sink for ops,
/// called synchronously the moment the service holds them (a local op once
/// it is committed, a peer's once it is verified and applied), so a move
/// reaches the links in the call that made it. It holds the link sessions
/// that ``PeerSync`` opens and closes.
final class OpRelay: Sendable {
    /// This daemon's own id: its own ops go to every link.
    let ownID: PeerID
    private let sessions = Mutex<[UInt64: LinkSession]>([:])
    /// Games of circles this device left: nothing of them goes on any link.
    private let withheld = Mutex<Set<GameID>>([])
    /// The players of private games: what is said of one (its played time,
    /// a player's cursor in it) goes to them alone.
    private let privatePlayers = Mutex<[GameID: Set<PeerID>]>([:])

    /// The largest sync message sent in one frame; bigger catch-ups are split.
    static let messageBudget = 4 << 20

    /// When this daemon last pushed an op of its own, while its heads wait to be signed.
    private let lastOwnPush = Mutex<ContinuousClock.Instant?>(nil)

    /// A relay with no links yet.
    init(ownID: PeerID) {
        self.ownID = ownID
    }

    /// Adds a link's session.
    func add(_ session: LinkSession) {
        sessions.withLock { $0[session.link.id] = session }
    }

    /// Sets the games nothing of which may go on any link (those of the
    /// circles this device left, kept here to read).
    func withhold(_ games: Set<GameID>) {
        withheld.withLock { $0 = games }
    }

    /// Sets the players of each private game.
    func setPrivatePlayers(_ players: [GameID: Set<PeerID>]) {
        privatePlayers.withLock { $0 = players }
    }

    /// Whether something about the game `bytes` names (a share of its
    /// played time, a cursor in it) may go on `linked`: a game of the
    /// current circle that the peer takes, and that it plays if the game is private.
    func sends(game bytes: [UInt8], on linked: LinkSession) -> Bool {
        if let game = GameID(bytes: bytes) {
            if withheld.withLock({ $0.contains(game) }) { return false }
            if let players = privatePlayers.withLock({ $0[game] }), !players.contains(linked.link.peer) { return false }
        }
        return linked.takes(game: bytes)
    }

    /// Removes a link's session.
    func remove(linkID: UInt64) {
        _ = sessions.withLock { $0.removeValue(forKey: linkID) }
    }

    /// A link's session, while it is linked.
    func session(linkID: UInt64) -> LinkSession? {
        sessions.withLock { $0[linkID] }
    }

    /// The linked sessions, in link order.
    var linked: [LinkSession] {
        sessions.withLock { all in all.keys.sorted().compactMap { all[$0] } }
    }

    /// Brings every linked peer the new ops (and whatever before them it is
    /// believed to lack), from `replica`, the service's replica that holds
    /// them. A peer that sent them holds them already and is skipped by its
    /// session.
    func push(_ ops: [Op], replica: Replica) {
        guard !ops.isEmpty else { return }
        if ops.contains(where: { $0.author == ownID }) { lastOwnPush.withLock { $0 = .now } }
        // Ops that came live from their author go on only once signed.
        let unsigned = Set(ops.filter { $0.author != ownID && replica.games[$0.gameID]?.isVouchedOnly($0) == true }.map(\.hash))
        var wanted: [PeerID: Set<ChainHead>] = [:]
        let sessions = linked
        for linked in sessions {
            let relayed = Self.relayed(ops, to: linked.link.reportedLinks, ownID: ownID)
            guard !relayed.isEmpty else { continue }
            // A peer that needs such an op from this daemon: ask its author for the head now.
            for op in relayed where unsigned.contains(op.hash) && op.author != linked.link.peer {
                wanted[op.author, default: []].insert(ChainHead(game: op.gameID, author: op.author, seq: op.seq))
            }
            Self.send(linked.session.withSession { $0.push(relayed, replica: replica) }, on: linked.link)
        }
        for (author, chains) in wanted {
            guard let authorLink = sessions.first(where: { $0.link.peer == author && $0.link.peerVersion >= PeerHello.liveVersion })
            else { continue }
            // The newest op of each chain: its signature vouches for the ones before.
            let newest = Dictionary(grouping: chains, by: \.game).compactMap { $0.value.max { $0.seq < $1.seq } }
            Self.send([.unsigned(newest.sorted { $0.game < $1.game })], on: authorLink.link)
        }
    }

    /// Whether this player's pause is long enough (``SyncSession/headPause``) to sign
    /// the heads it pushed live; once it says so, it says so again only
    /// after the next own op.
    func headsAreDue(now: ContinuousClock.Instant = .now) -> Bool {
        lastOwnPush.withLock { last in
            guard let l = last, now - l >= SyncSession.headPause else { return false }
            last = nil
            return true
        }
    }

    /// Sends every linked peer the signatures of the heads this daemon's
    /// live pushes to it left unsigned.
    func signHeads(replica: Replica) {
        for linked in linked {
            Self.send(linked.session.withSession { $0.signHeads(replica: replica) }, on: linked.link)
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

    /// Sends messages, splitting an ops message whose encoding is over the budget.
    static func send(_ messages: [SyncMessage], on link: PeerLinkHandle) {
        for message in messages {
            let encoded = message.encoded
            // Only a catch-up may be lost (anti-entropy sends it again); the
            // other messages are the link's stream, on which both sessions rely.
            guard case .ops(let segments) = message else {
                link.send(sync: encoded, droppable: false)
                continue
            }
            guard encoded.count > messageBudget else {
                link.send(sync: encoded, droppable: true)
                continue
            }
            var batch: [OpSegment] = []
            var size = 0
            for segment in segments {
                let one = SyncMessage.ops([segment]).encoded.count
                if !batch.isEmpty && size + one > messageBudget {
                    link.send(sync: SyncMessage.ops(batch).encoded, droppable: true)
                    batch = []
                    size = 0
                }
                batch.append(segment)
                size += one
            }
            if !batch.isEmpty { link.send(sync: SyncMessage.ops(batch).encoded, droppable: true) }
        }
    }
}
