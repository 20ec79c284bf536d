import Foundation
import Logging
import SweeperControl
import SweeperCrypto
import SweeperNet
import SweeperSync
import Synchronization

/// The peer node's delegate: one sync session per peer link over the
/// service's replica. A link that comes up gets a catch-up; each sync
/// message a peer sends goes to the ``GameService`` (verified, applied,
/// shown, relayed, written behind) in the call that read it; every few
/// seconds summaries are exchanged for anti-entropy. The sessions live in
/// the ``OpRelay``, which pushes new ops over them. Peers coming and going
/// are told to viewers as `peer-changed` events and remembered in the
/// ``PeerBook``.
final class PeerSync: PeerNodeDelegate, Sendable {
    private let service: GameService
    private let relay: OpRelay
    private let peers: PeerBook
    private let events: EventHub
    private let presence: PresenceService
    private let play: PlayClock
    private let members: CircleMembers
    private let logger: Logger
    /// Complaints about peers, at most once a minute per peer and kind.
    private let complaints = Mutex(RateLimitedLog())

    /// How often summaries are exchanged with every peer.
    static let antiEntropyInterval: Duration = .seconds(5)

    init(
        service: GameService, relay: OpRelay, peers: PeerBook, events: EventHub, presence: PresenceService, play: PlayClock,
        members: CircleMembers, logger: Logger
    ) {
        self.members = members
        self.presence = presence
        self.play = play
        self.service = service
        self.relay = relay
        self.peers = peers
        self.events = events
        self.logger = logger
    }

    /// Ticks anti-entropy, signs the heads of this player's live pushes
    /// when it pauses, and renews and expires presence, until cancelled.
    func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.presence.run() }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    if Task.isCancelled { break }
                    if self.relay.headsAreDue() { await self.signHeads() }
                }
            }
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.antiEntropyInterval)
                if Task.isCancelled { break }
                await tick()
            }
            group.cancelAll()
        }
    }

    /// Runs `body` on the service: at once when called on the service's
    /// event loop (the daemon runs the node on the same loop, so a peer's
    /// op goes from the socket into the game in the call that read it),
    /// else in the loop's next turn, in the order of the calls.
    private func onService(_ body: @escaping @Sendable (isolated GameService) -> Void) {
        let service = self.service
        if service.eventLoop.inEventLoop {
            service.assumeIsolated(body)
        } else {
            service.eventLoop.execute { service.assumeIsolated(body) }
        }
    }

    /// Runs `body` on the service, as ``onService(_:)`` does, and waits for it.
    private func onServiceAndWait(_ body: @escaping @Sendable (isolated GameService) -> Void) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            onService { service in
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
        await onServiceAndWait { service in self.relay.signHeads(replica: service.replica) }
    }

    // MARK: PeerNodeDelegate

    func linkEstablished(_ link: PeerLinkHandle) {
        onService { service in
            var session = SyncSession()
            // Until its hello says otherwise, the peer may be too old to read
            // games that use roles.
            session.peerReadsRoles = false
            session.peerReadsFloods = false
            session.peer = link.peer
            // A device that does not take every game waits for the peer's
            // hello, to tell a peer that understands interests what it takes
            // before its summary makes the peer send every game.
            let messages = service.interest.isEverything ? session.start(replica: service.replica) : []
            self.relay.add(LinkSession(link: link, session: SharedSyncSession(session)))
            OpRelay.send(messages, on: link)
        }
    }

    /// Starts the sync of a link whose start waited for the peer's hello:
    /// this device's interest first when the peer understands it, then the summary.
    private func startAfterHello(on link: PeerLinkHandle) {
        onService { service in
            let interest = service.interest
            guard !interest.isEverything, let linked = self.relay.session(linkID: link.id) else { return }
            Self.start(linked, interest: interest, replica: service.replica)
        }
    }

    /// Marks a link's peer as one that reads games using roles (and, from
    /// hello version 8, flood ops), and (when the link started before its
    /// hello) sends the summary again, asking for the peer's, so that such
    /// games it lacks come now.
    private func reads(version: UInt8, on link: PeerLinkHandle) {
        onService { service in
            guard let linked = self.relay.session(linkID: link.id) else { return }
            let replica = service.replica
            let messages = linked.session.withSession { session in
                session.peerReadsRoles = true
                session.peerReadsFloods = version >= PeerHello.liveVersion
                var messages = session.hasPeerSummary ? session.tick(replica: replica) : []
                if version >= PeerHello.liveVersion {
                    // This device's own ops go to it live from now on, and it
                    // is asked for the signatures of what it pushed live before.
                    session.liveAuthor = self.relay.ownID
                    messages += session.askForSignatures(replica: replica)
                }
                return messages
            }
            OpRelay.send(messages, on: link)
        }
    }

    /// Sends a link's session start: the interest, when the peer
    /// understands one, then the summary asking for the peer's.
    private static func start(_ linked: LinkSession, interest: GameInterest, replica: Replica) {
        let link = linked.link
        let messages = linked.session.withSession { session in
            link.peerVersion >= PeerHello.interestVersion
                ? session.start(replica: replica, interest: interest) : session.start(replica: replica)
        }
        OpRelay.send(messages, on: link)
    }

    /// Tells every linked peer this device's interest (which changed: a
    /// game forgotten or followed, or the sync mode) with a summary asking
    /// for theirs, so a followed game comes at once. Peers too old to be
    /// told get the summary only.
    func interestChanged() async {
        await onServiceAndWait { service in
            for linked in self.relay.linked { Self.start(linked, interest: service.interest, replica: service.replica) }
        }
    }

    /// Each linked peer's name and the games its last summary said it holds.
    func peerHoldings() -> [(name: String, holds: [GameID: VersionVector])] {
        relay.linked.compactMap { linked in
            guard let holds = linked.session.withSession({ $0.hasPeerSummary ? $0.peerHolds : nil }) else { return nil }
            return (peers.name(of: linked.link.peer) ?? linked.link.peer.shortDescription, holds)
        }
    }

    func received(sync bytes: [UInt8], on link: PeerLinkHandle) {
        onService { service in self.received(sync: bytes, on: link, service: service) }
    }

    private func received(sync bytes: [UInt8], on link: PeerLinkHandle, service: isolated GameService) {
        guard let linked = relay.session(linkID: link.id) else { return }
        let message: SyncMessage
        do {
            message = try SyncMessage(decoding: bytes)
        } catch {
            drop(link, sent: "sync message", error)
            return
        }
        do {
            let intake = try service.receive(message, in: linked.session)
            if let violation = intake.violation {
                drop(link, sent: "sync message", SyncViolation(description: violation))
                return
            }
            OpRelay.send(intake.replies, on: link)
            logRefusals(intake.rejected, from: link.peer)
            if case .interest = message, link.peerVersion >= PeerHello.playVersion { sendPlayNotes(on: link) }
        } catch {
            // Storage failed: nothing was kept, the peer will offer the ops again.
            logger.error("could not commit ops from a peer", metadata: ["peer": "\(link.peer.shortDescription)", "error": "\(error)"])
        }
    }

    /// Drops a peer that sent something malformed: logged once a minute per peer and kind.
    private func drop(_ link: PeerLinkHandle, sent what: String, _ error: any Error) {
        _ = complaints.withLock {
            $0.log(
                logger, key: "\(link.peer) malformed \(what)", "dropping a peer that sent a malformed \(what)",
                metadata: ["peer": "\(link.peer.shortDescription)", "error": "\(error)"])
        }
        link.close()
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
        peers.remember(link.peer, name: hello.name, address: dialBack)
        if hello.protocolVersion >= PeerHello.rolesVersion { reads(version: hello.protocolVersion, on: link) }
        startAfterHello(on: link)
        presence.helloReceived(on: link)
        // Every profile held (this player's and the others'), so names travel past the links.
        if hello.protocolVersion >= PeerHello.presenceVersion {
            for profile in peers.allProfiles where profile.author != link.peer { link.send(profile: profile) }
        }
        // Every share of played time held, so every daemon adds up the same time.
        if hello.protocolVersion >= PeerHello.playVersion {
            sendPlayNotes(on: link)
        }
        // Every membership record held: both sides end with the union.
        link.send(membership: members.encodedRecords)
    }

    func admissionRequested(_ request: AdmissionRequest, from peer: PeerID) -> AdmissionReply {
        members.admit(request, from: peer)
    }

    /// Sends membership records made here to every linked peer.
    func send(membership records: [[UInt8]]) {
        for linked in relay.linked { linked.link.send(membership: records) }
    }

    func received(membership records: [[UInt8]], on link: PeerLinkHandle) {
        let intake: CircleMembers.Intake
        do {
            intake = try members.take(records)
        } catch {
            drop(link, sent: "membership record", error)
            return
        }
        for (reason, refusals) in Dictionary(grouping: intake.refused, by: \.self) {
            _ = complaints.withLock {
                $0.log(
                    logger, key: "\(link.peer) membership \(reason)", "refused membership records from a peer",
                    metadata: ["peer": "\(link.peer.shortDescription)", "reason": "\(reason.rawValue)", "count": "\(refusals.count)"])
            }
        }
        guard !intake.added.isEmpty else { return }
        for linked in relay.linked where linked.link.id != link.id { linked.link.send(membership: intake.added) }
    }

    func received(play note: PlayNote, on link: PeerLinkHandle) {
        flood(note.author, authentic: note.isAuthentic, what: "a share of played time", on: link, take: { play.take(note) }) {
            if let linked = relay.session(linkID: $0.id), relay.sends(game: note.game, on: linked) { $0.send(play: note) }
        }
    }

    /// Sends a link every share of played time held (but its own) of the
    /// games its peer takes: when its hello comes, and again when it
    /// changes what it takes (a game followed needs its time too).
    private func sendPlayNotes(on link: PeerLinkHandle) {
        guard let linked = relay.session(linkID: link.id) else { return }
        for note in play.allNotes where note.author != link.peer && relay.sends(game: note.game, on: linked) { link.send(play: note) }
    }

    func received(profile note: ProfileNote, on link: PeerLinkHandle) {
        flood(note.author, authentic: note.isAuthentic, what: "a profile", on: link, take: { peers.take(note) }) {
            $0.send(profile: note)
        }
    }

    /// A replicated note (profile, share of played time) that came on
    /// `link`: dropped and logged when not authentic, else taken, and when
    /// newer than what was held sent on to every other link but its
    /// author's (older copies stop where they meet it).
    private func flood(
        _ author: PeerID, authentic: Bool, what: String, on link: PeerLinkHandle, take: () -> Bool, send: (PeerLinkHandle) -> Void
    ) {
        guard authentic else {
            _ = complaints.withLock {
                $0.log(logger, key: "\(link.peer) \(what)", "dropped \(what) with a bad signature",
                       metadata: ["peer": "\(link.peer.shortDescription)"])
            }
            return
        }
        guard take() else { return }
        for linked in relay.linked where linked.link.id != link.id && linked.link.peer != author { send(linked.link) }
    }

    func received(presence note: PresenceNote, on link: PeerLinkHandle) {
        presence.received(note, on: link)
    }

    func linkClosed(_ link: PeerLinkHandle) {
        onService { _ in self.relay.remove(linkID: link.id) }
    }

    func peerChanged(_ snapshot: PeerSnapshot) {
        // The sync counts need the service's summary: read in a job of its own.
        let linkID = snapshot.linkID
        Task { [service, relay, events] in
            let states = linkID == nil ? [:] : await Self.syncStates(relay.linked.filter { $0.link.id == linkID }, service: service)
            events.publish(ControlEvent(event: .peerChanged, peer: self.info(snapshot, sync: linkID.flatMap { states[$0] })))
        }
    }

    /// How `peers` and `peer-changed` events show a peer: named by its
    /// profile when one came (a daemon of this circle), else as it said.
    func info(_ snapshot: PeerSnapshot, sync: PeerInfo.Sync?, now: Date = Date()) -> PeerInfo {
        var info = PeerInfo(snapshot, sync: sync, now: now)
        if !snapshot.otherCircle, let profile = peers.profile(of: snapshot.id), !profile.name.isEmpty { info.name = profile.name }
        if let linkID = snapshot.linkID, let version = relay.session(linkID: linkID)?.link.peerVersion, version > 0 {
            info.protocolVersion = Int(version)
        }
        return info
    }

    // MARK: Anti-entropy

    private func tick() async {
        guard !relay.linked.isEmpty else { return }
        await onServiceAndWait { service in
            let replica = service.replica
            // A link whose buffer is full is still sending what it has: its summary waits for the next tick.
            for session in self.relay.linked where session.link.isWritable {
                OpRelay.send(session.session.withSession { $0.tick(replica: replica) }, on: session.link)
            }
        }
    }

    // MARK: Inspection

    /// What each linked peer lacks and holds beyond us, by link id; absent
    /// until the peer's first summary.
    func syncStates() async -> [UInt64: PeerInfo.Sync] {
        await Self.syncStates(relay.linked, service: service)
    }

    private static func syncStates(_ linked: [LinkSession], service: GameService) async -> [UInt64: PeerInfo.Sync] {
        guard !linked.isEmpty else { return [:] }
        let ours = await service.replica.summary
        var out: [UInt64: PeerInfo.Sync] = [:]
        for session in linked {
            guard let theirs = session.session.withSession({ $0.hasPeerSummary ? $0.peerHolds : nil }) else { continue }
            var theyLack = 0
            var weLack = 0
            for game in Set(ours.keys).union(theirs.keys) {
                // The peer's summary may claim any sequence numbers: lag(against:) saturates instead of trapping.
                let (ahead, behind) = (ours[game] ?? VersionVector()).lag(against: theirs[game] ?? VersionVector())
                theyLack = theyLack.addingReportingOverflow(ahead).overflow ? .max : theyLack + ahead
                weLack = weLack.addingReportingOverflow(behind).overflow ? .max : weLack + behind
            }
            out[session.link.id] = PeerInfo.Sync(theyLack: theyLack, weLack: weLack)
        }
        return out
    }
}

/// What a peer did that no honest peer does (see ``SyncSession/Step/violation``).
struct SyncViolation: Error, CustomStringConvertible {
    let description: String
}

extension PeerInfo {
    /// How `peers` and `peer-changed` events show a peer the node knows,
    /// with its sync counts when linked.
    init(_ p: PeerSnapshot, sync: PeerInfo.Sync?, now: Date = Date()) {
        self.init(
            id: p.id.description, name: p.name ?? "", addresses: p.addresses, state: p.state.shown,
            via: p.origins.map(\.rawValue), lastSeenSecondsAgo: p.lastSeen.map { max(0, now.timeIntervalSince($0)) },
            roundTripMs: p.roundTrip.map { Double($0.components.seconds) * 1000 + Double($0.components.attoseconds) / 1e15 },
            sync: sync, otherCircle: p.otherCircle)
    }
}

extension PeerLinkState {
    /// How the control protocol says it.
    var shown: PeerState {
        switch self {
        case .connected: .connected
        case .connecting: .connecting
        case .discovered: .discovered
        case .offline: .offline
        }
    }
}
