import SweeperCrypto
import SweeperMessages
import SweeperNet
import SweeperSync
import Synchronization

/// The daemon's links to peers of the circle, each with its sync session
/// (``PeerLink``), and what may go on which: the one place that knows which
/// links are up. The ``PeerInbox`` adds and removes links as the node
/// reports them; everything that sends to peers (sync sessions, notes,
/// presence, membership records) asks it for the links.
final class LinkRegistry: Sendable {
    private let links = Mutex<[UInt64: PeerLink]>([:])
    /// Games of circles this device left: nothing of them goes on any link.
    private let withheld = Mutex<Set<GameID>>([])
    /// The players of private games: what is said of one (its played time,
    /// a player's cursor in it) goes to them alone.
    private let privatePlayers = Mutex<[GameID: Set<PeerID>]>([:])

    /// A registry with no links yet.
    init() {}

    /// Adds a link.
    func add(_ link: PeerLink) {
        links.withLock { $0[link.id] = link }
    }

    /// Removes a link.
    func remove(id: UInt64) {
        _ = links.withLock { $0.removeValue(forKey: id) }
    }

    /// A link, while it is up.
    func link(id: UInt64) -> PeerLink? {
        links.withLock { $0[id] }
    }

    /// The links up, in link order.
    var all: [PeerLink] {
        links.withLock { all in all.keys.sorted().compactMap { all[$0] } }
    }

    /// Sets the games nothing of which may go on any link (those of the
    /// circles this device left, kept here to read).
    func withhold(_ games: Set<GameID>) {
        withheld.withLock { $0 = games }
    }

    /// Whether `game` is one of a circle this device left: kept here to
    /// read, never sent (shown as "only on this device").
    func withholds(_ game: GameID) -> Bool {
        withheld.withLock { $0.contains(game) }
    }

    /// Sets the players of each private game.
    func setPrivatePlayers(_ players: [GameID: Set<PeerID>]) {
        privatePlayers.withLock { $0 = players }
    }

    /// Whether `peer` may say something about the game `bytes` names (point
    /// at one of its cells): any peer of an open game, only its players of
    /// a private one.
    func hears(from peer: PeerID, about bytes: [UInt8]) -> Bool {
        guard let game = GameID(bytes: bytes), let players = privatePlayers.withLock({ $0[game] }) else { return true }
        return players.contains(peer)
    }

    /// Whether something about the game `bytes` names (a share of its
    /// played time, a cursor in it) may go on `link`: a game of the current
    /// circle that the peer takes, and that it plays if the game is private.
    func sends(game bytes: [UInt8], on link: PeerLink) -> Bool {
        if let game = GameID(bytes: bytes) {
            if withheld.withLock({ $0.contains(game) }) { return false }
            if let players = privatePlayers.withLock({ $0[game] }), !players.contains(link.peer) { return false }
        }
        return link.takes(game: bytes)
    }
}

extension LinkRegistry: GameScopeSink {}
