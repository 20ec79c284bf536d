import SweeperCrypto
import SweeperMessages
import SweeperNet
import SweeperSync
import Synchronization

/// The one owner of the links' sync sessions: it opens a session when a
/// link comes up and tells it what the peer reads once its hello comes,
/// pushes new ops to every link (it is the game service's sink for ops,
/// called synchronously the moment the service holds them), signs the
/// heads of this player's live pushes, runs the anti-entropy ticks, and
/// says what each peer holds.
///
/// Every method that takes a `replica` runs on the game service (whose
/// replica it is), so that each link's session messages are made and sent
/// in one order.
final class SyncSessions: Sendable {
    /// This daemon's own id: its own ops go to every link.
    let ownID: PeerID
    private let links: LinkRegistry
    /// When this daemon last pushed an op of its own, while its heads wait to be signed.
    private let lastOwnPush = Mutex<Double?>(nil)
    private let clock: any DaemonClock

    /// Sessions over the links of `links`.
    init(ownID: PeerID, links: LinkRegistry, clock: any DaemonClock = SystemClock()) {
        self.ownID = ownID
        self.clock = clock
        self.links = links
    }

    // MARK: A link's session

    /// Opens the session of a link that just came up and registers the
    /// link. A device that takes every game starts at once; one that does
    /// not waits for the peer's hello, to tell a peer that understands
    /// interests what it takes before its summary makes the peer send every game.
    func open(_ handle: PeerLinkHandle, interest: GameInterest, replica: Replica) {
        var session = SyncSession()
        // Until its hello says otherwise, the peer may be too old to read
        // games that use roles.
        session.peerReads = []
        session.peerDescribes = false
        session.peer = handle.peer
        let messages = interest.isEverything ? session.start(replica: replica) : []
        let link = PeerLink(handle: handle, session: SharedSyncSession(session))
        links.add(link)
        link.send(messages)
    }

    /// What a peer that reads roles (hello version 7 or later) reads of
    /// the op format, by its hello's version.
    static func features(read capabilities: PeerCapabilities) -> GameFeatures {
        var out: GameFeatures = [.roles]
        if capabilities.readsLive { out.insert(.floods) }
        if capabilities.readsHints { out.insert(.hints) }
        if capabilities.readsDaily { out.insert(.daily) }
        if capabilities.readsRace { out.insert(.race) }
        return out
    }

    /// The peer of `link` said hello: its session learns what the peer
    /// reads (games using roles, and from version 8 flood ops and live
    /// pushes), and a session whose start waited for the hello starts.
    func helloCame(on link: PeerLink, interest: GameInterest, replica: Replica) {
        let capabilities = link.capabilities
        if capabilities.readsRoles {
            let messages = link.session.withSession { session in
                session.peerReads = Self.features(read: capabilities)
                session.peerDescribes = capabilities.describesGames
                session.peerTakesChains = capabilities.takesChains
                // A session that started before the hello sends its summary
                // again, asking for the peer's, so that such games it lacks come now.
                var messages = session.hasPeerSummary ? session.tick(replica: replica) : []
                if capabilities.readsLive {
                    // This device's own ops go to it live from now on, and it
                    // is asked for the signatures of what it pushed live before.
                    session.liveAuthor = ownID
                    messages += session.askForSignatures(replica: replica)
                }
                return messages
            }
            link.send(messages)
        }
        if !interest.isEverything { start(link, interest: interest, replica: replica) }
    }

    /// Sends a link's session start: the interest, when the peer
    /// understands one, then the summary asking for the peer's.
    private func start(_ link: PeerLink, interest: GameInterest, replica: Replica) {
        let readsInterest = link.capabilities.readsInterest
        link.send(
            link.session.withSession { session in
                readsInterest ? session.start(replica: replica, interest: interest) : session.start(replica: replica)
            })
    }

    /// Tells every linked peer this device's interest (which changed: a
    /// game forgotten or followed, or the sync mode) with a summary asking
    /// for theirs, so a followed game comes at once. Peers too old to be
    /// told get the summary only.
    func interestChanged(_ interest: GameInterest, replica: Replica) {
        for link in links.all { start(link, interest: interest, replica: replica) }
    }

    // MARK: Pushes

    /// Brings every linked peer the new ops (and whatever before them it is
    /// believed to lack), from `replica`, the service's replica that holds
    /// them. A peer that sent them holds them already and is skipped by its
    /// session.
    func push(_ ops: [Op], replica: Replica) {
        guard !ops.isEmpty else { return }
        if ops.contains(where: { $0.author == ownID }) { lastOwnPush.withLock { [clock] in $0 = clock.seconds } }
        // Ops that came live from their author go on only once signed.
        let unsigned = Set(ops.filter { $0.author != ownID && replica.games[$0.gameID]?.isVouchedOnly($0) == true }.map(\.hash))
        var wanted: [PeerID: Set<ChainHead>] = [:]
        let all = links.all
        for link in all {
            let relayed = Self.relayed(ops, to: link.handle.reportedLinks, ownID: ownID)
            guard !relayed.isEmpty else { continue }
            // A peer that needs such an op from this daemon: ask its author for the head now.
            for op in relayed where unsigned.contains(op.hash) && op.author != link.peer {
                wanted[op.author, default: []].insert(ChainHead(game: op.gameID, author: op.author, seq: op.seq))
            }
            link.send(link.session.withSession { $0.push(relayed, replica: replica) })
        }
        for (author, chains) in wanted {
            guard let authorLink = all.first(where: { $0.peer == author && $0.capabilities.readsLive }) else { continue }
            // The newest op of each chain: its signature vouches for the ones before.
            let newest = Dictionary(grouping: chains, by: \.game).compactMap { $0.value.max { $0.seq < $1.seq } }
            authorLink.send([SyncMessage.unsigned(newest.sorted { $0.game < $1.game })])
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

    // MARK: Heads and anti-entropy

    /// Whether this player's pause is long enough (``SyncSession/headPause``) to sign
    /// the heads it pushed live; once it says so, it says so again only
    /// after the next own op.
    func headsAreDue() -> Bool {
        let now = clock.seconds
        return lastOwnPush.withLock { last in
            guard let l = last, now - l >= SyncSession.headPause.seconds else { return false }
            last = nil
            return true
        }
    }

    /// Sends every linked peer the signatures of the heads this daemon's
    /// live pushes to it left unsigned.
    func signHeads(replica: Replica) {
        for link in links.all { link.send(link.session.withSession { $0.signHeads(replica: replica) }) }
    }

    /// One anti-entropy round: every link's session sends its summary. A
    /// link whose buffer is full is still sending what it has: its summary
    /// waits for the next tick.
    func tick(replica: Replica) {
        for link in links.all where link.handle.isWritable {
            link.send(link.session.withSession { $0.tick(replica: replica) })
        }
    }

    // MARK: Inspection

    /// Each linked peer and the games its last summary said it holds; a
    /// peer that has not sent a summary yet is left out.
    var holdings: [(link: PeerLink, holds: [GameID: VersionVector], described: [GameID: GameListing])] {
        links.all.compactMap { link in
            link.session.withSession { $0.hasPeerSummary ? ($0.peerHolds, $0.described) : nil }.map { (link, $0.0, $0.1) }
        }
    }
}

extension SyncSessions: GameOpSink {}
