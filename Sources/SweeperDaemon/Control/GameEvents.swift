import SweeperControl
import SweeperCrypto
import SweeperSync
import Synchronization

/// Turns the game service's changes into viewers' events (`game-added`,
/// `cells`, `game-changed`, `game-forgotten`), published on the event hub.
final class GameEvents: GameChangeSink {
    private let events: EventHub
    private let views: ReplyViews
    /// Peer ids as text, by id: every move's event names its author, and
    /// the id's text form costs more than the rest of the event. Holds the
    /// authors of accepted ops only (members of a circle), so it stays small.
    private let texts = Mutex<[PeerID: String]>([:])

    /// Events on `events`, games shown by `views`.
    init(events: EventHub, views: ReplyViews) {
        self.events = events
        self.views = views
    }

    func gameChanged(_ change: GameChange) {
        switch change {
        case .added(let replica, let state):
            events.publish(ControlEvent(event: .gameAdded, game: state.gameID.description, listing: views.listing(replica, state)), readers: readers(of: state))
        case .cells(let changed):
            let state = changed.state
            events.publish(
                ControlEvent(
                    event: .cells, game: state.gameID.description, cells: ReplyViews.cellChanges(changed.cells, in: state),
                    status: state.status.shown, minesLeft: state.board.minesLeft, byPeer: text(of: changed.author),
                    x: changed.clicked?.x, y: changed.clicked?.y, progress: state.board.progress, trippedByPeer: state.trippedBy?.description,
                    racer: changed.racer.map { views.standing(of: $0, on: state) }),
                readers: readers(of: state))
        case .listing(let replica, let state):
            events.publish(
                ControlEvent(event: .gameChanged, game: state.gameID.description, listing: views.listing(replica, state)), readers: readers(of: state))
        case .gone(let id):
            events.publish(ControlEvent(event: .gameForgotten, game: id.description))
        }
    }

    /// Who may hear of `state`'s changes: a private game's players (this
    /// device reads one that names any player it hosts), else everyone.
    private func readers(of state: GameState) -> Set<String>? {
        state.isPrivate ? Set((state.players ?? [state.creator]).map(\.description)) : nil
    }

    private func text(of peer: PeerID) -> String {
        texts.withLock { texts in
            if let known = texts[peer] { return known }
            let text = peer.description
            texts[peer] = text
            return text
        }
    }
}
