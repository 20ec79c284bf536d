import Foundation
import Logging
import NIOCore
import SweeperControl
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
/// heard from anyone else is not relayed. Other players' notes are shown to
/// viewers as `presence` events and expire when not renewed.
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
    }

    private let identity: SigningIdentity
    private let name: String
    private let links: LinkRegistry
    private let gossip: NoteGossip
    private let events: EventHub
    private let book: PeerBook
    private let play: PlayClock
    private let eventLoop: any EventLoop
    private let logger: Logger
    private let state = Mutex(State())
    private let start = ContinuousClock.now

    init(
        identity: SigningIdentity, name: String, links: LinkRegistry, gossip: NoteGossip, events: EventHub, book: PeerBook, play: PlayClock, eventLoop: any EventLoop, logger: Logger) {
        self.play = play
        self.identity = identity
        self.name = name
        self.links = links
        self.gossip = gossip
        self.events = events
        self.book = book
        self.eventLoop = eventLoop
        self.logger = logger
    }

    private var now: Double {
        let d = ContinuousClock.now - start
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

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
            let wall = UInt64(max(0, Date().timeIntervalSince1970 * 1000))
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
        events.publish(ControlEvent(event: .presence, presence: info(author, spot)))
    }

    private func info(_ author: PeerID, _ spot: PresenceSpot?, own: Bool = false) -> PresenceInfo {
        let name = book.name(of: author) ?? (own ? name : author.shortDescription)
        let colour = book.profile(of: author)?.colour ?? 0
        return PresenceInfo(
            peer: author.description, name: name, game: spot.flatMap { GameID(bytes: $0.game)?.description },
            x: spot?.x, y: spot?.y, colour: colour > 0 ? Int(colour) : nil, own: own ? true : nil)
    }

    // MARK: Time

    /// Renews this player's presence and expires others', until cancelled.
    func run() async {
        var lastRenewal = now
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(250))
            if Task.isCancelled { break }
            let gone = state.withLock { $0.table.expire(now: now) }
            for author in gone { publish(author, nil) }
            // A viewer gone idle withdraws its player's presence.
            announce()
            count()
            if now - lastRenewal >= PresenceTable.heartbeat {
                lastRenewal = now
                send(renewing: true)
            }
        }
    }

    // MARK: Inspection

    /// Everyone whose viewer shows a game now, this daemon's player first.
    var everyone: [PresenceInfo] {
        let (own, others) = state.withLock { s in (ownSpot(s), s.table.spots) }
        var out: [PresenceInfo] = []
        if let own { out.append(info(identity.peerID, own, own: true)) }
        for (author, spot) in others.sorted(by: { $0.key < $1.key }) { out.append(info(author, spot)) }
        return out
    }
}
