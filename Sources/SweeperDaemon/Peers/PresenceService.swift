import FoundationEssentials
import Logging
import NIOCore
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
        /// Whose viewer it is: this daemon's player or one it hosts.
        var player: PeerID
    }

    /// What one player of this daemon announced.
    private struct Announced {
        /// What was last announced (nil: nothing, or that the player left).
        var spot: PresenceSpot?
        var lastSerial: UInt64 = 0
        /// When the last move of the player's cursor was sent (steady
        /// seconds); renewals do not count, so a move right after one is
        /// not held back.
        var lastSent = -Double.infinity
        /// Whether a coalesced send is scheduled.
        var sendScheduled = false
        var lastPointSerial: UInt64 = 0
    }

    private struct State {
        var table = PresenceTable()
        var viewers: [ObjectIdentifier: Viewer] = [:]
        var order = 0
        /// Per player of this daemon (its own and those it hosts).
        var announced: [PeerID: Announced] = [:]
        /// Which points at a cell were taken (others' and this daemon's players').
        var points = PointTable()
    }

    private let identity: SigningIdentity
    /// The players this daemon hosts: their keys sign their presence and points.
    private let hosted: HostedPlayers
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
        identity: SigningIdentity, hosted: HostedPlayers, links: LinkRegistry, gossip: NoteGossip, changes: any PeerChangeSink, play: PlayClock,
        eventLoop: any EventLoop, clock: any DaemonClock = SystemClock(), logger: Logger
    ) {
        self.clock = clock
        self.hosted = hosted
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

    /// The key that signs `player`'s notes: this daemon's, or a hosted
    /// player's (nil once that player is gone).
    private func signer(of player: PeerID) -> SigningIdentity? {
        player == identity.peerID ? identity : hosted.player(player)?.identity
    }

    /// Whether `peer` is a player of this daemon (its own or a hosted one).
    private func isLocal(_ peer: PeerID) -> Bool {
        peer == identity.peerID || hosted.player(peer) != nil
    }

    /// A viewer (one event subscription) of `player` (nil: this daemon's
    /// own) put its cursor on `spot`, or shows no game (nil). A cursor line
    /// is a key pressed in the game: it counts as play (``PlayClock``).
    func setCursor(_ spot: PresenceSpot?, viewer: ObjectIdentifier, player: PeerID? = nil) {
        let player = player ?? identity.peerID
        if let game = spot.flatMap({ GameID(bytes: $0.game) }) { play.activity(in: game, by: player) }
        state.withLock { s in
            s.order += 1
            s.viewers[viewer] = Viewer(order: s.order, spot: spot, player: player)
        }
        announce(player)
        count()
    }

    /// A viewer's subscription ended.
    func viewerClosed(_ viewer: ObjectIdentifier) {
        let player = state.withLock { $0.viewers.removeValue(forKey: viewer)?.player }
        if let player {
            announce(player)
            count()
        }
    }

    /// `player`'s spot: the newest cursor of its open viewers that show a
    /// game, unless that game's viewer has been idle for
    /// ``PlayLedger/idleLimit``: an idle player is away until their next key.
    private func spot(of player: PeerID, _ s: State) -> PresenceSpot? {
        guard let spot = s.viewers.values.filter({ $0.player == player && $0.spot != nil }).max(by: { $0.order < $1.order })?.spot,
            let game = GameID(bytes: spot.game), play.isActive(game, by: player)
        else { return nil }
        return spot
    }

    /// The players of this daemon with a viewer open or a spot announced.
    private func localPlayers(_ s: State) -> Set<PeerID> {
        Set(s.viewers.values.map(\.player)).union(s.announced.keys).union([identity.peerID])
    }

    /// Tells the play clock where this daemon's players and the others are now.
    private func count() {
        let (local, others) = state.withLock { s in
            (Dictionary(uniqueKeysWithValues: localPlayers(s).map { ($0, spot(of: $0, s)) }), s.table.spots)
        }
        play.tick(local: local.compactMapValues { $0.flatMap { GameID(bytes: $0.game) } }, others: others.compactMapValues { GameID(bytes: $0.game) })
    }

    /// Sends `player`'s presence now, or once the interval since its last
    /// note has passed (the moves in between are coalesced).
    private func announce(_ player: PeerID) {
        let wait: Double? = state.withLock { s in
            let held = s.announced[player] ?? Announced()
            guard spot(of: player, s) != held.spot, !held.sendScheduled else { return nil }
            let due = held.lastSent + PresenceTable.minimumInterval - now
            if due > 0 {
                s.announced[player, default: Announced()].sendScheduled = true
                return due
            }
            return 0
        }
        guard let wait else { return }
        if wait <= 0 {
            send(player)
        } else {
            eventLoop.scheduleTask(in: .nanoseconds(Int64(wait * 1e9))) { [self] in
                state.withLock { $0.announced[player]?.sendScheduled = false }
                send(player)
            }
        }
    }

    /// Signs and sends a note of `player`'s current spot (or that it left)
    /// to every link that understands presence; a hosted player's spot is
    /// shown to this daemon's other viewers too.
    private func send(_ player: PeerID, renewing: Bool = false) {
        guard let signer = signer(of: player) else {
            state.withLock { $0.announced[player] = nil }
            return
        }
        let note: PresenceNote? = state.withLock { s in
            let spot = spot(of: player, s)
            var held = s.announced[player] ?? Announced()
            // A renewal repeats where the player is; otherwise only a change is sent.
            guard renewing ? spot != nil : spot != held.spot else { return nil }
            let wall = clock.wallMillis
            held.lastSerial = max(wall, held.lastSerial + 1)
            held.spot = spot
            if !renewing { held.lastSent = now }
            s.announced[player] = held
            return PresenceNote(signing: signer, serial: held.lastSerial, spot: spot)
        }
        guard let note else { return }
        gossip.broadcast(.presence(note), where: mayHear(of: note))
        if !renewing { publish(player, note.spot) }
    }

    // MARK: Peers

    /// A link came up and its peer said hello: it gets the presence of
    /// this daemon's players now.
    func helloReceived(on link: PeerLink) {
        let held = state.withLock { s in s.announced.compactMap { p, a in a.spot.map { (p, a.lastSerial, $0) } } }
        for (player, serial, spot) in held {
            guard let signer = signer(of: player) else { continue }
            let note = PresenceNote(signing: signer, serial: serial, spot: spot)
            if mayHear(of: note)(link) { link.send(.presence(note)) }
        }
    }

    /// No link to `peer` is left: whoever was heard through it looks
    /// nowhere now, at once (not when their notes expire), so no viewer
    /// lists a device as looking while `peers` says it is offline.
    func linkLost(to peer: PeerID) {
        let gone = state.withLock { $0.table.linkLost(to: peer) }
        for author in gone { publish(author, nil) }
        if !gone.isEmpty { count() }
    }

    /// A note arrived on `link`: checked, taken, relayed once when it came
    /// from its author, and shown.
    func received(_ note: PresenceNote, on link: PeerLink) {
        guard !isLocal(note.author) else { return }
        guard note.isAuthentic else {
            logger.debug("dropped a presence note with a bad signature", metadata: ["peer": "\(link.peer.shortDescription)"])
            return
        }
        let change = state.withLock { $0.table.take(note, now: now, via: link.peer) }
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

    /// A player of this daemon (nil: its own) points at `spot`: a signed
    /// ``PointNote`` goes to every link that may hear of its game, and this
    /// daemon's viewers are shown it too. Returns false when the player
    /// pointed too often (``PointTable/burst`` in ``PointTable/burstWindow``),
    /// as the other daemons would drop the note.
    @discardableResult
    func point(at spot: PresenceSpot, as player: SigningIdentity? = nil) -> Bool {
        let signer = player ?? identity
        if let game = GameID(bytes: spot.game) { play.activity(in: game, by: signer.peerID) }
        let note: PointNote? = state.withLock { s in
            let wall = clock.wallMillis
            let serial = max(wall, (s.announced[signer.peerID]?.lastPointSerial ?? 0) + 1)
            let note = PointNote(signing: signer, serial: serial, spot: spot)
            guard s.points.take(note, now: now, wallMillis: wall) else { return nil }
            s.announced[signer.peerID, default: Announced()].lastPointSerial = serial
            return note
        }
        guard let note else { return false }
        gossip.broadcast(.point(note)) { [links] in links.sends(game: spot.game, on: $0) }
        changes.pointed(by: signer.peerID, at: spot, own: signer.peerID == identity.peerID)
        return true
    }

    /// A point arrived on `link`: dropped unless it is authentic, by a
    /// member of the circle (`isMember`: a removed device that kept its key
    /// points at nothing), at a game it may see (a private game's player),
    /// newer than its author's last, fresh and within its author's rate;
    /// else relayed once when it came from its author, and shown.
    func received(_ note: PointNote, on link: PeerLink, isMember: Bool) {
        guard !isLocal(note.author), isMember, links.hears(from: note.author, about: note.spot.game) else { return }
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
        let players = state.withLock { localPlayers($0) }
        for player in players { announce(player) }
        count()
        let renew = lastRenewal.withLock { last in
            guard now - last >= PresenceTable.heartbeat else { return false }
            last = now
            return true
        }
        if renew { for player in players { send(player, renewing: true) } }
    }

    // MARK: Inspection

    /// Everyone whose viewer shows a game now, `player` (nil: this
    /// daemon's own) first, then this daemon's other players, then the others.
    func everyone(as player: PeerID? = nil) -> [PlayerSpot] {
        let me = player ?? identity.peerID
        let (local, others) = state.withLock { s in
            (localPlayers(s).sorted().compactMap { p in spot(of: p, s).map { (p, $0) } }, s.table.spots)
        }
        var out: [PlayerSpot] = []
        for (author, spot) in local where author == me { out.append(PlayerSpot(author: author, spot: spot, own: true)) }
        for (author, spot) in local where author != me { out.append(PlayerSpot(author: author, spot: spot, own: false)) }
        for (author, spot) in others.sorted(by: { $0.key < $1.key }) { out.append(PlayerSpot(author: author, spot: spot, own: false)) }
        return out
    }
}
