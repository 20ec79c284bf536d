import FoundationEssentials
import Logging
import SweeperConventions
import SweeperCrypto
import SweeperMessages
import SweeperNet
import SweeperSync
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The peer node's delegate: where everything the links bring comes in.
/// It keeps the ``LinkRegistry`` up to date as links come and go, decodes
/// each application message (one that does not decode drops the peer) and
/// routes it by type, in the call that read it:
///
/// | message | goes to |
/// |---|---|
/// | sync | the ``SyncSessions``: the link's session, through the ``GameService`` (verified, applied, shown, relayed, written behind) |
/// | presence, point | the ``PresenceService`` |
/// | profile | the ``NoteGossip``, kept by the ``PeerBook`` |
/// | play | the ``NoteGossip``, kept by the ``PlayClock`` |
/// | membership | the ``CircleMembers``; records new here go on to the other links |
/// | addresses | the ``AddressGossip`` |
///
/// A peer's hello starts what waits for it: its sync session learns what
/// it reads, and it is sent this player's presence, every profile, share
/// of played time and membership record held. It also runs the timers of
/// the sync sessions (anti-entropy, head signatures), and reports the
/// node's `peerChanged` snapshots with each peer's lag (``PeerChangeSink``).
final class PeerInbox: PeerNodeDelegate, SyncIntakeListener, Sendable {
    private let service: GameService
    private let links: LinkRegistry
    private let sessions: SyncSessions
    private let gossip: NoteGossip
    private let peers: PeerBook
    private let changes: any PeerChangeSink
    private let presence: PresenceService
    private let play: PlayClock
    private let members: CircleMembers
    private let addresses: AddressGossip
    private let clock: any DaemonClock
    private let logger: Logger
    /// Complaints about peers, at most once a minute per peer and kind.
    private let complaints = Mutex(RateLimitedLog())
    /// How the peers stand, as `peers` and the viewers show them.
    let standings: PeerStandings
    /// Profiles whose author no admission names yet, kept (unchecked) until
    /// the records that admit it are taken: a host sends a new player's
    /// admission and profile one after the other, and records are taken
    /// off the event loop. At most ``waitingProfileLimit``, one per author.
    private let waitingProfiles = Mutex<[PeerID: (note: ProfileNote, message: PeerMessage, link: PeerLink)]>([:])
    /// The most profiles kept waiting for their author's admission.
    static let waitingProfileLimit = 16
    /// Shares of played time of games taken here but not held yet, kept
    /// until their game comes: a game followed again (or forgotten and
    /// followed) gets its peers' shares when it tells them what it takes,
    /// before the game itself comes. At most this many, of members only.
    private let waitingShares = Mutex<[GameID: [(note: PlayNote, message: PeerMessage, link: PeerLink)]]>([:])
    static let waitingShareLimit = 256
    /// Per link, membership messages that came while one of its is checked
    /// off the loop: they are checked one after another, so a peer that
    /// sends records faster than they are checked piles up no tasks; past
    /// ``waitingRecordsLimit`` waiting, the link is dropped. (Its reading
    /// is not paused: a few checks of a full circle's records would outlast
    /// the link's silence limit.)
    private let waitingRecords = Mutex<[UInt64: [[[UInt8]]]]>([:])
    /// The most membership messages of one link waiting for their check:
    /// an honest peer sends the circle's records in a batch or two when a
    /// link comes up, and then one as each change comes.
    static let waitingRecordsLimit = 16

    /// How often summaries are exchanged with every peer.
    static let antiEntropyInterval: Duration = .seconds(5)

    init(
        service: GameService, links: LinkRegistry, sessions: SyncSessions, gossip: NoteGossip, peers: PeerBook, changes: any PeerChangeSink,
        presence: PresenceService, play: PlayClock, members: CircleMembers, addresses: AddressGossip,
        clock: any DaemonClock = SystemClock(), logger: Logger
    ) {
        self.addresses = addresses
        self.clock = clock
        self.service = service
        self.links = links
        self.sessions = sessions
        self.gossip = gossip
        self.peers = peers
        self.changes = changes
        self.presence = presence
        self.play = play
        self.members = members
        self.logger = logger
        standings = PeerStandings(service: service, links: links, sessions: sessions, peers: peers)
        sessions.listen(self)
    }

    /// A peer changed what it takes: it needs the played time of what it
    /// takes now, its own shares too (a game it forgot and follows again
    /// needs its time back, its own share included).
    func interestChanged(on link: PeerLink, service: isolated GameService) {
        sendPlayNotes(on: link, includingTheirs: true)
    }

    /// How often this player's pause is checked for heads to sign.
    static let headCheckInterval: Duration = .seconds(1)

    /// Ticks anti-entropy, signs the heads of this player's live pushes
    /// when it pauses, and renews and expires presence, until cancelled;
    /// every wait is on the daemon's clock.
    func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.presence.run() }
            group.addTask { await self.addresses.run() }
            group.addTask {
                while !Task.isCancelled {
                    try? await self.clock.sleep(for: Self.headCheckInterval)
                    if Task.isCancelled { break }
                    await self.signHeadsIfDue()
                }
            }
            while !Task.isCancelled {
                try? await clock.sleep(for: Self.antiEntropyInterval)
                if Task.isCancelled { break }
                await tick()
            }
            group.cancelAll()
        }
    }

    /// Signs the heads of this player's live pushes when its pause is long enough.
    func signHeadsIfDue() async {
        if sessions.headsAreDue() { await signHeads() }
    }

    /// Runs `body` on the service (``GameService/onLoop(_:)``) and waits for it.
    private func onServiceAndWait(_ body: @escaping @Sendable (isolated GameService) -> Void) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            service.onLoop { service in
                body(service)
                done.resume()
            }
        }
    }

    /// Signs, on every link, the heads of the ops this player pushed live
    /// there: after a pause, and when the daemon stops (what goes out
    /// before the links close spares the peers from asking later). On the
    /// service, like every other message of the sessions, so that each link
    /// sends them in the order its session made them.
    func signHeads() async {
        // Not while a failed commit's reload waits: the games in memory may hold an op never kept.
        await onServiceAndWait { service in if !service.reloadPending { self.sessions.signHeads(replica: service.replica) } }
    }

    /// One anti-entropy round on every link.
    func tick() async {
        guard !links.all.isEmpty else { return }
        await onServiceAndWait { service in self.sessions.tick(replica: service.replica) }
    }

    /// Tells every linked peer this device's interest (which changed: a
    /// game forgotten or followed, or the sync mode) with a summary asking
    /// for theirs, so a followed game comes at once.
    func interestChanged() async {
        await onServiceAndWait { service in self.sessions.interestChanged(service.interest, replica: service.replica) }
    }

    // MARK: Links

    /// Opens the link's session at once, and routes each of its messages
    /// in the call that read it: the node's links run on the service's loop.
    func linkEstablished(_ handle: PeerLinkHandle) -> LinkReceiver {
        guard service.eventLoop.inEventLoop else {
            // Never in the daemon, whose node and service share one loop.
            logger.error("refused a link read on another loop than the games'", metadata: ["peer": "\(handle.peer.shortDescription)"])
            handle.close(because: "read on another loop than the games'")
            return { _ in }
        }
        let link = service.assumeIsolated { service in self.sessions.open(handle, interest: service.interest, replica: service.replica) }
        return { message in
            let decoded = try PeerMessage(type: message.type, body: message.body)
            // One read as the link closes (the frame decoder's last frames) goes with it.
            guard handle.isOpen else { return }
            self.service.assumeIsolated { self.route(decoded, on: link, service: $0) }
        }
    }

    func linkClosed(_ handle: PeerLinkHandle) {
        service.onLoop { _ in
            self.links.remove(id: handle.id)
            self.sessions.close(handle.id)
            _ = self.waitingRecords.withLock { $0.removeValue(forKey: handle.id) }
            // The last link to that peer: whoever it carried looks nowhere now.
            if !self.links.all.contains(where: { $0.peer == handle.peer }) { self.presence.linkLost(to: handle.peer) }
        }
    }

    func helloReceived(_ hello: PeerHello, dialBack: String?, on handle: PeerLinkHandle) {
        peers.remember(handle.peer, name: hello.name, address: dialBack)
        // On the service, after the link's registration, like every other step of a link.
        service.onLoop { service in
            guard let link = self.links.link(id: handle.id) else { return }
            self.sessions.helloCame(on: link, interest: service.interest, replica: service.replica)
            self.presence.helloReceived(on: link)
            // Every profile held (this player's and the others'), so names travel past the links.
            for profile in self.peers.allProfiles where profile.author != link.peer { link.send(.profile(profile)) }
            // Every share of played time held, so every daemon adds up the same time.
            self.sendPlayNotes(on: link)
            // Every membership record held: both sides end with the union.
            link.send(membership: self.members.encodedRecords)
            // Where every member listens, so this peer can reach them too.
            self.addresses.helloReceived(on: link)
        }
    }

    // MARK: Messages

    /// Hands a message to its owner: one routing line per kind. Each
    /// message is decoded where it was read (``linkEstablished(_:)``'s
    /// receiver; one that does not decode is refused: the transport drops
    /// the link and logs why).
    private func route(_ decoded: PeerMessage, on link: PeerLink, service: isolated GameService) {
        switch decoded {
        case .sync(let bytes): sessions.received(sync: bytes, on: link, service: service)
        case .presence(let note):
            // Notes only from members: a holder of the circle key no admission names is no one here.
            guard members.view.isMember(note.author) else { return refuse(decoded, by: note.author, on: link, "its author is not a member") }
            presence.received(note, on: link)
        case .point(let note): presence.received(note, on: link, isMember: members.view.isMember(note.author))
        case .profile(let note):
            // Names of the members and of the removed devices (their old moves still show): nobody else's.
            let view = members.view
            guard view.isMember(note.author) || view.isRemoved(note.author) else {
                let kept = waitingProfiles.withLock { waiting in
                    if let held = waiting[note.author], held.note.serial >= note.serial { return true }
                    guard waiting[note.author] != nil || waiting.count < Self.waitingProfileLimit else { return false }
                    waiting[note.author] = (note, decoded, link)
                    return true
                }
                return refuse(
                    decoded, by: note.author, on: link, kept ? "its author is not a member (kept until the circle next changes)" : "its author is not a member")
            }
            gossip.spread(note, as: decoded, from: link, take: takeProfile)
        case .play(let note):
            if let game = GameID(bytes: note.game), members.view.isMember(note.author) || members.view.isRemoved(note.author),
                !service.replica.isKnown(game), service.interest.contains(game)
            {
                // A game taken here but not held yet (followed again: its shares come before its catch-up).
                let kept = waitingShares.withLock { waiting in
                    guard waiting.values.reduce(0, { $0 + $1.count }) < Self.waitingShareLimit else { return false }
                    waiting[game, default: []].append((note, decoded, link))
                    return true
                }
                return refuse(decoded, by: note.author, on: link, kept ? "its game is not held yet (kept until it comes)" : "its game is not held")
            }
            take(note, as: decoded, from: link, service: service)
        case .membership(let records): received(membership: records, on: link)
        case .addresses(let note):
            if let why = addresses.received(note, on: link) { refuse(decoded, by: note.author, on: link, why) }
        }
    }

    /// Takes a share of played time that passes the checks, and passes it on.
    private func take(_ note: PlayNote, as message: PeerMessage, from link: PeerLink, service: isolated GameService) {
        if let why = shareRefusal(note, service: service) { return refuse(message, by: note.author, on: link, why) }
        let taken = gossip.spread(note, as: message, from: link, take: play.take) { self.links.sends(game: note.game, on: $0) }
        // A share of a finished game settles its time: viewers fetch the ending again.
        if taken, let game = GameID(bytes: note.game) { service.playedTimeChanged(game) }
    }

    /// Ops came (a game's genesis among `accepted`: the game came): the
    /// shares of played time kept waiting for the game are taken now,
    /// checked as any share is.
    func taken(_ accepted: [Op], service: isolated GameService) {
        let games = Set(accepted.filter(\.payload.isGenesis).map(\.gameID))
        guard !games.isEmpty else { return }
        let ready = waitingShares.withLock { waiting in games.flatMap { waiting.removeValue(forKey: $0) ?? [] } }
        for (note, message, link) in ready { take(note, as: message, from: link, service: service) }
    }

    /// The circle's members changed: the profiles kept waiting for their
    /// author's admission are taken now if it came (checked as any
    /// profile is); the others wait for the next change.
    func membersChanged() {
        addresses.membersChanged()
        let view = members.view
        let ready = waitingProfiles.withLock { waiting in
            let admitted = waiting.filter { view.isMember($0.key) || view.isRemoved($0.key) }
            for author in admitted.keys { waiting[author] = nil }
            return Array(admitted.values)
        }
        for (note, message, link) in ready { gossip.spread(note, as: message, from: link, take: takeProfile) }
    }

    /// Keeps a profile when it is newer than the one held, and then has
    /// every viewer rename its author at once.
    private func takeProfile(_ note: ProfileNote) -> Bool {
        guard peers.take(note) else { return false }
        changes.profileChanged(of: note.author)
        return true
    }

    /// Why a share of played time is not taken, or `nil`: only a member's
    /// (or a removed device's, for the games it played before), of a game
    /// held here that its author may play, and no more time than the game
    /// has lasted by this device's clock (with an hour for clocks that differ).
    private func shareRefusal(_ note: PlayNote, service: isolated GameService) -> String? {
        let view = members.view
        guard view.isMember(note.author) || view.isRemoved(note.author) else { return "its author is not a member" }
        guard let game = GameID(bytes: note.game), let bound = service.playedTimeBound(of: game, by: note.author, nowMillis: clock.wallMillis) else {
            return "its author does not play that game here"
        }
        guard note.total <= bound else { return "it claims more time than the game has lasted" }
        return nil
    }

    /// Drops a note that may not be taken, saying why at a bounded rate.
    private func refuse(_ message: PeerMessage, by author: PeerID, on link: PeerLink, _ why: String) {
        let what = message.kind.description
        _ = complaints.withLock {
            $0.log(
                logger, key: "\(link.peer) \(what) refused", "refused a \(what): \(why)",
                metadata: ["peer": "\(link.peer.shortDescription)", "author": "\(author.shortDescription)"])
        }
    }

    /// Sends a link every share of played time held of the games its peer
    /// takes: when its hello comes (but the peer's own shares), and again
    /// when it changes what it takes, its own too (a game it forgot and
    /// follows again needs its time back, its own share included).
    private func sendPlayNotes(on link: PeerLink, includingTheirs: Bool = false) {
        guard link.capabilities.reads(.play) else { return }
        for note in play.allNotes where (includingTheirs || note.author != link.peer) && links.sends(game: note.game, on: link) {
            link.send(.play(note))
        }
    }

    /// Takes a peer's membership records off the event loop (checking a
    /// full circle's signatures takes a few hundred milliseconds), one
    /// message of a link at a time; then, back on it, logs what was refused
    /// and sends what was new on to the other links. A record that does not
    /// decode drops the link, as do too many messages waiting.
    private func received(membership records: [[UInt8]], on link: PeerLink) {
        enum Turn { case now, later, flood }
        let turn = waitingRecords.withLock { waiting -> Turn in
            guard let queued = waiting[link.handle.id] else {
                waiting[link.handle.id] = []
                return .now
            }
            guard queued.count < Self.waitingRecordsLimit else { return .flood }
            waiting[link.handle.id]?.append(records)
            return .later
        }
        switch turn {
        case .now: check(membership: records, on: link)
        case .later: break
        case .flood:
            link.drop(
                sent: "membership record", SyncViolation(description: "more membership messages than are checked, \(Self.waitingRecordsLimit) waiting"),
                complaints: complaints, logger: logger)
        }
    }

    private func check(membership records: [[UInt8]], on link: PeerLink) {
        let members = self.members
        Task.detached {
            let intake: Result<CircleMembers.Intake, ByteDecodingError> = Result { () throws(ByteDecodingError) in try members.take(records) }
            self.service.onLoop { _ in
                switch intake {
                case .success(let intake): self.took(intake, sent: records, from: link)
                case .failure(let error): link.drop(sent: "membership record", error, complaints: self.complaints, logger: self.logger)
                }
                let next = self.waitingRecords.withLock { waiting -> [[UInt8]]? in
                    guard link.handle.isOpen, waiting[link.handle.id]?.isEmpty == false else {
                        waiting[link.handle.id] = nil
                        return nil
                    }
                    return waiting[link.handle.id]?.removeFirst()
                }
                if let next { self.check(membership: next, on: link) }
            }
        }
    }

    private func took(_ intake: CircleMembers.Intake, sent: [[UInt8]], from link: PeerLink) {
        for (reason, refusals) in Dictionary(grouping: intake.refused, by: \.self) {
            _ = complaints.withLock {
                $0.log(
                    logger, key: "\(link.peer) membership \(reason)", "refused membership records from a peer",
                    metadata: ["peer": "\(link.peer.shortDescription)", "reason": "\(reason.rawValue)", "count": "\(refusals.count)"])
            }
        }
        guard !intake.added.isEmpty else { return }
        gossip.spread(membership: intake.added, from: link)
        // Records that waited here, woken by this link's, may be new to it too.
        let theirs = Set(sent)
        let woken = intake.added.filter { !theirs.contains($0) }
        if !woken.isEmpty { link.send(membership: woken) }
    }

    /// Sends membership records made here to every linked peer.
    func send(membership records: [[UInt8]]) {
        gossip.spread(membership: records)
    }

    /// Admits off the loop: the record it writes may wait for a writer
    /// under way (a peer's records going in).
    func admissionRequested(_ request: AdmissionRequest, from peer: PeerID) async -> AdmissionReply {
        let members = self.members
        return await members.offLoop { members.admit(request, from: peer) }
    }

    // MARK: Peers as shown

    func peerChanged(_ snapshot: PeerSnapshot) {
        // The sync counts need the service's summary: read in a job of its own.
        Task { [standings, changes] in changes.peerChanged(await standings.standing(snapshot)) }
    }
}
