import Logging
import SweeperCrypto
import SweeperMessages
import SweeperNet
import Synchronization

/// How signed notes (``SignedNote``: presence, profiles, shares of played
/// time, addresses) and membership records spread among the circle's
/// daemons: the one place that sends to many links.
///
/// A note heard on a link is checked (a forged one is dropped and logged),
/// then taken by whoever keeps its kind; a note new to this daemon goes on
/// to every other link but its author's that may hear of it, and an older
/// copy stops where it meets the newer one. Presence, which is ephemeral,
/// goes on once only, from its author's own link. This daemon's own notes
/// go to every link that may hear of them.
final class NoteGossip: Sendable {
    private let links: LinkRegistry
    private let logger: Logger
    /// Complaints about peers, at most once a minute per peer and kind.
    private let complaints = Mutex(RateLimitedLog())

    /// Gossip over the links of `links`.
    init(links: LinkRegistry, logger: Logger) {
        self.links = links
        self.logger = logger
    }

    /// A note that came on `origin`: dropped and logged when not authentic,
    /// else given to `take`, and when that says it was new, sent on to every
    /// other link but its author's that `scope` admits. Returns whether it
    /// was taken as new.
    @discardableResult
    func spread<Note: SignedNote>(
        _ note: Note, as message: PeerMessage, from origin: PeerLink, take: (Note) -> Bool,
        where scope: (PeerLink) -> Bool = { _ in true }
    ) -> Bool {
        guard isAuthentic(note, as: message, from: origin), take(note) else { return false }
        forward(message, by: note.author, from: origin, where: scope)
        return true
    }

    /// Whether `note` is its author's; a forgery is logged, once a minute per peer and kind.
    func isAuthentic<Note: SignedNote>(_ note: Note, as message: PeerMessage, from origin: PeerLink) -> Bool {
        guard !note.isAuthentic else { return true }
        let what = message.kind.description
        _ = complaints.withLock {
            $0.log(logger, key: "\(origin.peer) \(what)", "dropped a \(what) with a bad signature", metadata: ["peer": "\(origin.peer.shortDescription)"])
        }
        return false
    }

    /// Sends a note by `author` that came on `origin` to every other link
    /// but its author's that `scope` admits.
    func forward(_ message: PeerMessage, by author: PeerID, from origin: PeerLink, where scope: (PeerLink) -> Bool = { _ in true }) {
        for link in links.all where link.id != origin.id && link.peer != author && scope(link) { link.send(message) }
    }

    /// Membership records new here, to every link but `origin` (records made
    /// here, with no origin: to every link). A record needs no check of its
    /// own here: ``CircleMembers`` took it as new, its chain and signature
    /// checked. Each link splits them into batches and leaves out what its
    /// peer cannot read (``PeerLink/send(membership:)``).
    func spread(membership records: [[UInt8]], from origin: PeerLink? = nil) {
        for link in links.all where link.id != origin?.id { link.send(membership: records) }
    }

    /// Sends this daemon's own note to every link that `scope` admits.
    func broadcast(_ message: PeerMessage, where scope: (PeerLink) -> Bool = { _ in true }) {
        for link in links.all where scope(link) { link.send(message) }
    }
}

extension NoteGossip: PlayNoteSink {
    /// This player's share of a game's played time, to every link that may
    /// see the game.
    func spread(_ note: PlayNote) {
        broadcast(.play(note)) { [links] in links.sends(game: note.game, on: $0) }
    }
}
