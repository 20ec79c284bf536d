import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import NIOCore
import SweeperCrypto
import SweeperMessages
import SweeperNet
import SweeperSync
import Synchronization

/// Who is looking at which game: this daemon's player (where its viewers'
/// cursors are) and the other players (their daemons' presence notes).
///
/// Presence is ephemeral: nothing is stored. A viewer sets its cursor on
/// its event subscription (`cursor` lines); the newest cursor of this
/// daemon's open viewers is its player's presence, signed into a
/// ``PresenceNote`` and sent to every linked peer that understands it, at
/// most 20 times a second (moves in between are coalesced into the last),
/// again every ``PresenceTable/heartbeat`` seconds while it stays, and as a
/// "left" note when the last viewer closes. A note heard from its author is
/// relayed once, to the links that are not linked to that author; a note
/// heard from anyone else is not relayed. Other players' notes are reported
/// (``PeerChangeSink``) and expire when not renewed.
final class PresenceService: Sendable {
    private struct Viewer {
        /// When it last set its cursor, in the order of all viewers' settings.
        var order: Int
        var spot: PresenceSpot?
    }

    private struct State {
        var table = PresenceTable()
        var viewers: [ObjectIdentifier: Viewer] = [:]
        var order = 0
        /// What this daemon last announced (nil: nothing, or that its player left).
        var announced: PresenceSpot?
        var lastSerial: UInt64 = 0
        /// When the last move of this daemon's player's cursor was sent
        /// (steady seconds); renewals do not count, so a move right after
        /// one is not held back.
        var lastSent = -Double.infinity
        /// Whether a coalesced send is scheduled.
        var sendScheduled = false
        /// Which points at a cell were taken (others' and this player's own).
        var points = PointTable()
        var lastPointSerial: UInt64 = 0
    }

    private let identity: SigningIdentity
    private let links: LinkRegistry
    private let gossip: NoteGossip
    private let changes: any PeerChangeSink
    private let play: PlayClock
    private let eventLoop: any EventLoop
    private let logger: Logger
    private let state = Mutex(State())
    private let clock: any DaemonClock
    /// When this player's presence was last renewed (steady seconds).
    private let lastRenewal = Mutex(0.0)

    init(
        identity: SigningIdentity, links: LinkRegistry, gossip: NoteGossip, changes: any PeerChangeSink, play: PlayClock, eventLoop: any EventLoop,
        clock: any DaemonClock = SystemClock(), logger: Logger
    ) {
        self.clock = clock
        self.play = play
        self.identity = identity
        self.links = links
        self.gossip = gossip
        self.changes = changes
        self.eventLoop = eventLoop
        self.logger = logger
    }

    private var now: Double { clock.seconds }

    // MARK: This daemon's viewers

    /// A viewer (one event subscription) put its cursor on `spot`, or shows
    /// no game (nil). A cursor line is a key pressed in the game: it counts
    /// as play (``PlayClock``).
    func setCursor(_ spot: PresenceSpot?, viewer: ObjectIdentifier) {
        if let game = spot.flatMap({ GameID(bytes: $0.game) }) { play.activity(in: game) }
        state.withLock { s in
            s.order += 1
            s.viewers[viewer] = Viewer(order: s.order, spot: spot)
        }
        announce()
        count()
    }

    /// A viewer's subscription ended.
    func viewerClosed(_ viewer: ObjectIdentifier) {
        let had = state.withLock { $0.viewers.removeValue(forKey: viewer) != nil }
        if had {
            announce()
            count()
        }
    }

    /// This daemon's player's spot: the newest cursor of its open viewers
    /// that show a game, unless that game's viewer has been idle for
    /// ``PlayLedger/idleLimit``: an idle player is away until their next key.
    private func ownSpot(_ s: State) -> PresenceSpot? {
        guard let spot = s.viewers.values.filter({ $0.spot != nil }).max(by: { $0.order < $1.order })?.spot,
            let game = GameID(bytes: spot.game), play.isActive(game)
        else { return nil }
        return spot
    }

    /// Tells the play clock where this player and the others are now.
    private func count() {
        let (own, others) = state.withLock { s in (ownSpot(s), s.table.spots) }
        play.tick(ownGame: own.flatMap { GameID(bytes: $0.game) }, others: others.compactMapValues { GameID(bytes: $0.game) })
    }

    /// Sends this daemon's player's presence now, or once the interval since
    /// the last note has passed (the moves in between are coalesced).
    private func announce() {
        let wait: Double? = state.withLock { s in
            guard ownSpot(s) != s.announced, !s.sendScheduled else { return nil }
            let due = s.lastSent + PresenceTable.minimumInterval - now
            if due > 0 {
                s.sendScheduled = true
                return due
            }
            return 0
        }
        guard let wait else { return }
        if wait <= 0 {
            send()
        } else {
            eventLoop.scheduleTask(in: .nanoseconds(Int64(wait * 1e9))) { [self] in
                state.withLock { $0.sendScheduled = false }
                send()
            }
        }
    }

    /// Signs and sends a note of this daemon's player's current spot (or
    /// that it left) to every link that understands presence.
    private func send(renewing: Bool = false) {
        let note: PresenceNote? = state.withLock { s in
            let spot = ownSpot(s)
            // A renewal repeats where the player is; otherwise only a change is sent.
            guard renewing ? spot != nil : spot != s.announced else { return nil }
            let wall = clock.wallMillis
            s.lastSerial = max(wall, s.lastSerial + 1)
            s.announced = spot
            if !renewing { s.lastSent = now }
            return PresenceNote(signing: identity, serial: s.lastSerial, spot: spot)
        }
        guard let note else { return }
        gossip.broadcast(.presence(note), where: mayHear(of: note))
    }

    // MARK: Peers

    /// A link came up and its peer said hello: it gets this player's presence now.
    func helloReceived(on link: PeerLink) {
        let note: PresenceNote? = state.withLock { s in
            guard let spot = s.announced else { return nil }
            return PresenceNote(signing: identity, serial: s.lastSerial, spot: spot)
        }
        if let note, mayHear(of: note)(link) { link.send(.presence(note)) }
    }

    /// A note arrived on `link`: checked, taken, relayed once when it came
    /// from its author, and shown.
    func received(_ note: PresenceNote, on link: PeerLink) {
        guard note.author != identity.peerID else { return }
        guard note.isAuthentic else {
            logger.debug("dropped a presence note with a bad signature", metadata: ["peer": "\(link.peer.shortDescription)"])
            return
        }
        let change = state.withLock { $0.table.take(note, now: now) }
        if change == .none { return }
        if note.author == link.peer {
            let scope = mayHear(of: note)
            gossip.forward(.presence(note), by: note.author, from: link) { !$0.handle.reportedLinks.contains(note.author) && scope($0) }
        }
        if case .moved(let spot) = change { publish(note.author, spot) }
        count()
    }

    /// Which links may hear of `note`: any, for a note that shows no game;
    /// else those that may hear of its game (``LinkRegistry/sends(game:on:)``).
    private func mayHear(of note: PresenceNote) -> (PeerLink) -> Bool {
        { [links] link in note.spot.map { links.sends(game: $0.game, on: link) } ?? true }
    }

    private func publish(_ author: PeerID, _ spot: PresenceSpot?) {
        changes.presenceChanged(of: author, to: spot)
    }

    // MARK: Points at a cell

    /// This daemon's player points at `spot`: a signed ``PointNote`` goes
    /// to every link that may hear of its game, and this daemon's viewers
    /// are shown it too. Returns false when this player pointed too often
    /// (``PointTable/burst`` in ``PointTable/burstWindow``), as the other
    /// daemons would drop the note.
    @discardableResult
    func point(at spot: PresenceSpot) -> Bool {
        if let game = GameID(bytes: spot.game) { play.activity(in: game) }
        let note: PointNote? = state.withLock { s in
            let wall = clock.wallMillis
            let serial = max(wall, s.lastPointSerial + 1)
            let note = PointNote(signing: identity, serial: serial, spot: spot)
            guard s.points.take(note, now: now, wallMillis: wall) else { return nil }
            s.lastPointSerial = serial
            return note
        }
        guard let note else { return false }
        gossip.broadcast(.point(note)) { [links] in links.sends(game: spot.game, on: $0) }
        changes.pointed(by: identity.peerID, at: spot, own: true)
        return true
    }

    /// A point arrived on `link`: dropped unless it is authentic, by a
    /// member of the circle (`isMember`: a removed device that kept its key
    /// points at nothing), at a game it may see (a private game's player),
    /// newer than its author's last, fresh and within its author's rate;
    /// else relayed once when it came from its author, and shown.
    func received(_ note: PointNote, on link: PeerLink, isMember: Bool) {
        guard note.author != identity.peerID, isMember, links.hears(from: note.author, about: note.spot.game) else { return }
        guard gossip.isAuthentic(note, as: .point(note), from: link) else { return }
        let taken = state.withLock { $0.points.take(note, now: now, wallMillis: clock.wallMillis) }
        guard taken else { return }
        if note.author == link.peer {
            gossip.forward(.point(note), by: note.author, from: link) { [links] in
                !$0.handle.reportedLinks.contains(note.author) && links.sends(game: note.spot.game, on: $0)
            }
        }
        changes.pointed(by: note.author, at: note.spot, own: false)
    }

    // MARK: Time

    /// How often presence is renewed, expired and counted.
    static let tickInterval: Duration = .milliseconds(250)

    /// Ticks every ``tickInterval`` of the clock, until cancelled.
    func run() async {
        lastRenewal.withLock { $0 = now }
        while !Task.isCancelled {
            try? await clock.sleep(for: Self.tickInterval)
            if Task.isCancelled { break }
            tick()
        }
    }

    /// Expires others' presence, withdraws this player's when its viewer
    /// has gone idle, tells the play clock where everyone is, and renews
    /// this player's presence when it is due.
    func tick() {
        let gone = state.withLock { $0.table.expire(now: now) }
        for author in gone { publish(author, nil) }
        // A viewer gone idle withdraws its player's presence.
        announce()
        count()
        let renew = lastRenewal.withLock { last in
            guard now - last >= PresenceTable.heartbeat else { return false }
            last = now
            return true
        }
        if renew { send(renewing: true) }
    }

    // MARK: Inspection

    /// Everyone whose viewer shows a game now, this daemon's player first.
    var everyone: [PlayerSpot] {
        let (own, others) = state.withLock { s in (ownSpot(s), s.table.spots) }
        var out: [PlayerSpot] = []
        if let own { out.append(PlayerSpot(author: identity.peerID, spot: own, own: true)) }
        for (author, spot) in others.sorted(by: { $0.key < $1.key }) { out.append(PlayerSpot(author: author, spot: spot, own: false)) }
        return out
    }
}
