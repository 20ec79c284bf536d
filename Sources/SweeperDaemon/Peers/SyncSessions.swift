import Logging
import NIOCore
import SweeperCrypto
import SweeperEventLoop
import SweeperMessages
import SweeperNet
import SweeperSync
import Synchronization

/// A link's sync session and what waits for it, on the event loop only
/// (``SyncSessions`` holds every one in a loop-bound box, so nothing
/// here needs a lock): the session, the link's sync messages waiting
/// behind one handled off the loop, and whether a catch-up for the peer
/// is being read off the loop.
final class LinkSession {
    /// The session.
    var sync: SyncSession
    /// Whether one of the link's messages is being handled (off the loop, or in a loop turn).
    var busy = false
    /// The link's sync messages that came meanwhile, in order.
    var waiting: [[UInt8]] = []
    /// Whether a catch-up for the peer is being read off the loop: one at
    /// a time per link, so that a peer that keeps saying it lacks
    /// everything makes one read at a time, not one per summary.
    var catchingUp = false

    init(_ sync: SyncSession) { self.sync = sync }
}

/// What the sessions tell the rest of the peer side about what a link's
/// sync messages did (the ``PeerInbox`` listens).
protocol SyncIntakeListener: AnyObject, Sendable {
    /// Ops were taken (a game's genesis among them: what waited for that game may go on).
    func taken(_ accepted: [Op], service: isolated GameService)
    /// The peer of `link` changed what it takes.
    func interestChanged(on link: PeerLink, service: isolated GameService)
}

/// The one owner of the links' sync sessions: it opens a session when a
/// link comes up and tells it what the peer reads once its hello comes,
/// receives every sync message a link brings and sends the replies, pushes
/// new ops to every link (it is the game service's sink for ops, called
/// synchronously the moment the service holds them), signs the heads of
/// this player's live pushes, runs the anti-entropy ticks, and says what
/// each peer holds.
///
/// The sessions live on the event loop that runs the links and the game
/// service: every method that touches one runs there (the service's
/// methods do, and the inbox calls on the service), in one order, so no
/// session has a lock of its own.
final class SyncSessions: Sendable {
    /// This daemon's own id: its own ops go to every link.
    let ownID: PeerID
    private let links: LinkRegistry
    /// Each link's session, by link id.
    private let sessions: NIOLoopBoundBox<[UInt64: LinkSession]>
    private let eventLoop: any EventLoop
    /// When this daemon last pushed an op of its own, while its heads wait to be signed.
    private let lastOwnPush = Mutex<Double?>(nil)
    private let clock: any DaemonClock
    private let logger: Logger
    /// Complaints about peers' sync messages, at most once a minute per peer and kind.
    private let complaints = Mutex(RateLimitedLog())
    /// What peers' messages may cost the loop in waking games, and the games woken off it.
    private let wakes = PeerWakes()
    private let listener = Mutex<WeakListener>(WeakListener())
    private struct WeakListener { weak var value: (any SyncIntakeListener)? }

    /// Sessions over the links of `links`, on `eventLoop`.
    init(ownID: PeerID, links: LinkRegistry, eventLoop: any EventLoop, clock: any DaemonClock = SystemClock(), logger: Logger) {
        self.ownID = ownID
        self.clock = clock
        self.links = links
        self.eventLoop = eventLoop
        self.logger = logger
        sessions = .makeBoxSendingValue([:], as: [UInt64: LinkSession].self, eventLoop: eventLoop)
    }

    /// Tells `listener` what links' sync messages do from now on.
    func listen(_ listener: any SyncIntakeListener) {
        self.listener.withLock { $0.value = listener }
    }

    private var intakeListener: (any SyncIntakeListener)? { listener.withLock { $0.value } }

    /// The session of `link` while it is up (on the loop).
    func session(of link: PeerLink) -> LinkSession? {
        sessions.value[link.id]
    }

    /// Closes the session of a link that went down (on the loop).
    func close(_ id: UInt64) {
        sessions.value[id] = nil
    }

    // MARK: A link's session

    /// Opens the session of a link that just came up and registers the
    /// link. A device that takes every game starts at once; one that does
    /// not waits for the peer's hello, to tell a peer that understands
    /// interests what it takes before its summary makes the peer send every game.
    @discardableResult
    func open(_ handle: PeerLinkHandle, interest: GameInterest, replica: Replica) -> PeerLink {
        var session = SyncSession()
        // Until its hello says otherwise, the peer may be too old to read
        // games that use roles.
        session.peerReads = []
        session.peerDescribes = false
        session.peer = handle.peer
        let messages = interest.isEverything ? session.start(replica: replica) : []
        let link = PeerLink(handle: handle)
        sessions.value[link.id] = LinkSession(session)
        links.add(link)
        link.send(messages)
        return link
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
        if capabilities.readsRoles, let session = session(of: link) {
            session.sync.peerReads = Self.features(read: capabilities)
            session.sync.peerDescribes = capabilities.describesGames
            session.sync.peerTakesChains = capabilities.takesChains
            session.sync.provisional = capabilities.takesMovesBeforeKept
            // A session that started before the hello sends its summary
            // again, asking for the peer's, so that such games it lacks come now.
            var messages = session.sync.hasPeerSummary ? session.sync.summaryAgain(replica: replica) : []
            if capabilities.readsLive {
                // This device's own ops go to it live from now on, and it
                // is asked for the signatures of what it pushed live before.
                session.sync.liveAuthor = ownID
                messages += session.sync.askForSignatures(replica: replica)
            }
            link.send(messages)
        }
        if !interest.isEverything { start(link, interest: interest, replica: replica) }
    }

    /// Sends a link's session start: the interest, when the peer
    /// understands one, then the summary asking for the peer's.
    private func start(_ link: PeerLink, interest: GameInterest, replica: Replica) {
        guard let session = session(of: link) else { return }
        link.send(
            link.capabilities.readsInterest
                ? session.sync.start(replica: replica, interest: interest) : session.sync.start(replica: replica))
    }

    /// Tells every linked peer this device's interest (which changed: a
    /// game forgotten or followed, or the sync mode) with a summary asking
    /// for theirs, so a followed game comes at once. Peers too old to be
    /// told get the summary only.
    func interestChanged(_ interest: GameInterest, replica: Replica) {
        for link in links.all { start(link, interest: interest, replica: replica) }
    }

    // MARK: Receiving

    /// Runs one sync message in a link's `session` through the service: the
    /// session inserts the ops (the replica verifies each), then viewers are
    /// told, the ops are relayed and queued for writing
    /// (``GameService/take(touching:wakeBudget:now:_:)`` says how, and what
    /// the budget and `now` do). The session is held only while it takes
    /// the message: the relay that follows pushes through every session,
    /// this one too.
    static func run(
        _ message: SyncMessage, in session: LinkSession, service: isolated GameService, wakeBudget: Int? = nil, now: Double? = nil
    ) throws -> RemoteIntake {
        // Only ops bring changes to show, and only to the games they belong to.
        let touched: [GameID]
        switch message {
        case .ops(let segments): touched = segments.compactMap { $0.ops.last?.gameID }
        // Live pushes and chains name games by the link's numbers, which the session reads.
        case .live, .chains: touched = Array(session.sync.games(in: message))
        case .summary, .summaryPart, .interest, .heads, .unsigned, .describe, .descriptions: touched = []
        }
        return try service.take(touching: touched, wakeBudget: wakeBudget, now: now) { replica, interest in
            session.sync.receive(message, replica: &replica, taking: interest)
        }
    }

    /// Handles a link's sync message in its turn: at once, or after the
    /// messages before it that are handled off the loop.
    func received(sync bytes: [UInt8], on link: PeerLink, service: isolated GameService) {
        guard let session = session(of: link) else { return }
        guard !session.busy else { return session.waiting.append(bytes) }
        session.busy = true
        handle(from: bytes, on: link, service: service)
    }

    /// The next message of `link` kept waiting, or `nil` (and nothing is handled any more).
    private func next(on link: PeerLink) -> [UInt8]? {
        guard let session = session(of: link) else { return nil }
        guard !session.waiting.isEmpty else {
            session.busy = false
            return nil
        }
        return session.waiting.removeFirst()
    }

    /// Handles `first` and then every message of the link that waited
    /// behind it, until one goes off the loop (which goes on from there
    /// when it comes back) or none waits. From the first message that goes
    /// off the loop until none waits, the link is not read (`paused`): what
    /// the peer sends meanwhile waits in the socket, so nothing piles up here.
    private func handle(from first: [UInt8], on link: PeerLink, service: isolated GameService, paused: Bool = false) {
        var next: [UInt8]? = first
        while let bytes = next {
            // A link dropped meanwhile (for what an earlier message did): what waited behind it goes with its session.
            guard link.handle.isOpen else { return }
            guard bytes.count < SyncMessage.offLoopBytes else {
                if !paused { link.handle.pauseReading() }
                let actor = service
                Task.detached {
                    let prepared = Result<SyncMessage, any Error> {
                        let message = try SyncMessage(decoding: bytes)
                        message.checkSignatures()
                        return message
                    }
                    actor.onLoop { service in
                        self.handle(prepared, on: link, service: service)
                        if let more = self.next(on: link) {
                            self.handle(from: more, on: link, service: service, paused: true)
                        } else {
                            link.handle.resumeReading()
                        }
                    }
                }
                return
            }
            handle(Result { try SyncMessage(decoding: bytes) }, on: link, service: service)
            next = self.next(on: link)
        }
        if paused { link.handle.resumeReading() }
    }

    private func handle(_ decoded: Result<SyncMessage, any Error>, on link: PeerLink, service: isolated GameService) {
        let message: SyncMessage
        do {
            message = try decoded.get()
        } catch {
            link.drop(sent: "sync message", error, complaints: complaints, logger: logger)
            return
        }
        guard let session = session(of: link) else { return }
        do {
            let now = clock.seconds
            let intake = try Self.run(message, in: session, service: service, wakeBudget: wakes.budget(for: link.peer, now: now), now: now)
            wakes.spent(intake.wokenOps, by: link.peer)
            if let violation = intake.violation {
                link.drop(sent: "sync message", SyncViolation(description: violation), complaints: complaints, logger: logger)
                return
            }
            if !intake.deferredWakes.isEmpty {
                _ = complaints.withLock {
                    $0.log(
                        logger, level: .info, key: "\(link.peer) deferred wakes", "waking games off the event loop for a peer's moves",
                        metadata: ["peer": "\(link.peer.shortDescription)", "games": "\(intake.deferredWakes.count)"])
                }
                wakes.queue(intake.deferredWakes, for: link.peer)
                wakeNext(service: service)
            }
            link.send(intake.replies)
            let listener = intakeListener
            listener?.taken(intake.accepted, service: service)
            if !intake.catchUps.isEmpty { catchUp(intake.catchUps, on: link, service: service) }
            logRefusals(intake.rejected, from: link.peer)
            if case .interest = message {
                link.interest.set(session.sync.peerInterest)
                // A peer that changed what it takes needs the played time of what it now takes.
                listener?.interestChanged(on: link, service: service)
            }
        } catch {
            // Storage failed: nothing was kept, the peer will offer the ops again.
            logger.error("could not commit ops from a peer", metadata: ["peer": "\(link.peer.shortDescription)", "error": "\(error)"])
        }
    }

    /// Reads a catch-up of sleeping games off the loop and sends it: one at
    /// a time per link (a summary that comes meanwhile and needs one more
    /// leaves it to the next anti-entropy round).
    private func catchUp(_ catchUps: [(job: WakeJob, catchUp: CatchUp)], on link: PeerLink, service: isolated GameService) {
        guard let session = session(of: link), !session.catchingUp else { return }
        session.catchingUp = true
        let actor = service
        Task.detached {
            let segments = catchUps.flatMap { job, catchUp in job.run().map { catchUp.segments(of: $0) } ?? [] }
            actor.onLoop { service in
                guard let session = self.session(of: link) else { return }
                session.catchingUp = false
                link.send(session.sync.carrying(segments, replica: service.replica))
            }
        }
    }

    /// Wakes the next game a peer's message needed awake past what it may
    /// cost the loop: rebuilt on another thread, put in on the loop (when
    /// it still sleeps as it did), then each peer that needed it is asked
    /// for its summary, which brings the ops refused meanwhile.
    private func wakeNext(service: isolated GameService) {
        guard let game = wakes.next() else { return }
        guard let job = service.replica.wakeJob(for: game) else {
            _ = wakes.finished(game)
            return wakeNext(service: service)
        }
        let actor = service
        Task.detached {
            let woken = job.run()
            actor.onLoop { service in
                let installed = woken.map { service.install($0, from: job) } ?? false
                let askers = self.wakes.finished(game)
                if installed {
                    for link in self.links.all where askers.contains(link.peer) {
                        if let session = self.session(of: link) { link.send(session.sync.summaryAgain(replica: service.replica)) }
                    }
                }
                self.wakeNext(service: service)
            }
        }
    }

    /// Logs the ops a peer sent that were refused: one line per peer and
    /// reason a minute, with the count and the first op refused.
    private func logRefusals(_ refused: [OpRefusal], from peer: PeerID) {
        for (reason, ops) in Dictionary(grouping: refused, by: \.reason).sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            // Ops whose game wakes off the loop come again: nothing is wrong with them.
            guard reason != .wakeDeferred, let first = ops.first else { continue }
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
            let relayed = Self.relayed(ops, to: link.peer, linkedTo: link.handle.reportedLinks, ownID: ownID)
            guard !relayed.isEmpty else { continue }
            // A peer that needs such an op from this daemon: ask its author for the head now.
            for op in relayed where unsigned.contains(op.hash) {
                wanted[op.author, default: []].insert(ChainHead(game: op.gameID, author: op.author, seq: op.seq))
            }
            if let session = session(of: link) {
                // What pushes before a commit left unsigned and is due a signature goes now that it is kept.
                link.send(session.sync.push(relayed, replica: replica) + session.sync.signDueHeads(replica: replica))
            }
        }
        for (author, chains) in wanted {
            guard let authorLink = all.first(where: { $0.peer == author && $0.capabilities.readsLive }) else { continue }
            // The newest op of each chain: its signature vouches for the ones before.
            let newest = Dictionary(grouping: chains, by: \.game).compactMap { $0.value.max { $0.seq < $1.seq } }
            authorLink.send([SyncMessage.unsigned(newest.sorted { $0.game < $1.game })])
        }
    }

    /// Pushes this device's new ops, before they are kept, to the links
    /// whose peers take them so (peer protocol 18): live, without a
    /// signature. The other links get them after the commit, from ``push(_:replica:)``.
    func pushBeforeKeeping(_ ops: [Op], replica: Replica) {
        var pushed = false
        for link in links.all {
            guard let session = session(of: link), session.sync.provisional else { continue }
            let messages = session.sync.pushBeforeKeeping(ops, replica: replica)
            guard !messages.isEmpty else { continue }
            link.send(messages)
            pushed = true
        }
        // The commit that follows waits: a peer woken here runs first.
        if pushed { ProcessorHandOver.handOver() }
    }

    /// Sends this device's summary, asking for the peer's, on every link
    /// that took moves before they were kept: after a commit failed, so
    /// that such a peer drops the move pushed and never kept.
    func restate(replica: Replica) {
        for link in links.all {
            guard let session = session(of: link), session.sync.provisional else { continue }
            link.send(session.sync.summaryAgain(replica: replica))
        }
    }

    /// The ops to push to `peer`, which says it is linked to `linkedPeers`:
    /// this daemon's own ops always, another author's only when the peer is
    /// not linked to that author, who pushes them there itself; never an
    /// op back to its author, who made it (one that lost its own ops gets
    /// them back from anti-entropy). On a home network where every daemon
    /// links to every other, a move is then sent once to each peer instead
    /// of once by every peer to every other; a daemon out of the author's
    /// reach still gets it relayed, and anti-entropy repairs a push that
    /// was lost.
    static func relayed(_ ops: [Op], to peer: PeerID, linkedTo linkedPeers: Set<PeerID>, ownID: PeerID) -> [Op] {
        ops.filter { $0.author != peer && ($0.author == ownID || !linkedPeers.contains($0.author)) }
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
        for link in links.all { if let session = session(of: link) { link.send(session.sync.signHeads(replica: replica)) } }
    }

    /// One anti-entropy round: every link's session sends its summary,
    /// unless the link is quiet (``SyncSession/tick(replica:)``). A link
    /// whose buffer is full is still sending what it has: its summary
    /// waits for the next tick.
    func tick(replica: Replica) {
        for link in links.all where link.handle.isWritable {
            if let session = session(of: link) { link.send(session.sync.tick(replica: replica)) }
        }
    }

    // MARK: Inspection

    /// What a linked peer's last summary said, and what it takes.
    struct PeerSummary: Sendable {
        let link: PeerLink
        let holds: [GameID: VersionVector]
        let described: [GameID: GameOverview]
        let takes: GameInterest
    }

    /// Each of `links` whose peer sent a summary, with what it said; read
    /// on the loop, where the sessions are.
    func summaries(of links: [PeerLink]) async -> [PeerSummary] {
        let read = { @Sendable in
            links.compactMap { link -> PeerSummary? in
                guard let s = self.session(of: link)?.sync, s.hasPeerSummary else { return nil }
                return PeerSummary(link: link, holds: s.peerHolds, described: s.described, takes: s.peerInterest)
            }
        }
        if eventLoop.inEventLoop { return read() }
        return (try? await eventLoop.submit(read).get()) ?? []
    }
}

extension SyncSessions: GameOpSink {}

/// What a peer did that no honest peer does (see ``SyncSession/Step/violation``).
struct SyncViolation: Error, CustomStringConvertible {
    let description: String
}
