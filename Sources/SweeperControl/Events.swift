import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An event line on a subscribed connection: `{"event":"cells", …}`.
public struct ControlEvent: Codable, Equatable, Sendable {
    /// Event kinds.
    public enum Kind: String, Codable, Sendable {
        /// Cells changed look (reveals, marks), with the new status.
        case cells
        /// A game was made or arrived from a peer.
        case gameAdded = "game-added"
        /// A game's players or its archive flag changed (here or on a peer):
        /// `listing` says how it stands now.
        case gameChanged = "game-changed"
        /// This device forgot a game (`sweeper forget`): it is gone from every list.
        case gameForgotten = "game-forgotten"
        /// A peer connected, disconnected or changed.
        case peerChanged = "peer-changed"
        /// Events were dropped while this subscriber did not read (`dropped`
        /// says how many); sent once, before the next event it gets. A
        /// viewer should fetch what it shows again.
        case eventsDropped = "events-dropped"
        /// A player opened a game in a viewer, moved its cursor, or left
        /// (`presence` without a game).
        case presence
        /// A player points at a cell (`x`, `y` of `game`, `by` and
        /// `presence` say who): a viewer of the game flashes it in their
        /// colour for a few seconds. This player's own points come too.
        case point
        /// A player's profile changed (a rename, a colour): `presence`
        /// names them (`peer`, `name` as every view shows it, `colour`; no
        /// game). A viewer shows the new name wherever it shows theirs.
        case profileChanged = "profile-changed"
    }

    /// The kind.
    public var event: Kind
    /// The game concerned.
    public var game: String?
    /// The cells that changed.
    public var cells: [CellChange]?
    /// The game's status after the change.
    public var status: PlayStatus?
    /// Mines minus flags after the change.
    public var minesLeft: Int?
    /// The player who acted: their peer id (cells events).
    public var byPeer: String?
    /// The player who acted: their name (point events).
    public var byName: String?
    /// The column of the cell the player acted on (cells events of a move).
    public var x: Int?
    /// The row of the cell the player acted on (cells events of a move).
    public var y: Int?
    /// Share of safe cells revealed after the change (cells events).
    public var progress: Double?
    /// Who tripped the mine (peer id), once the game is lost (cells events).
    public var trippedByPeer: String?
    /// With `game-added` and `game-changed`: the game as `games` lists it.
    public var listing: GameListing?
    /// The peer that changed, as `peers` lists it.
    public var peerInfo: PeerInfo?
    /// With `events-dropped`: how many events were dropped.
    public var dropped: Int?
    /// With `presence`: who, and where they look now.
    public var presence: PresenceInfo?
    /// With `cells` of a race: the racer whose board changed and how it
    /// stands. The cells are that racer's board: a viewer showing another
    /// racer's board updates its race table alone.
    public var racer: Commands.RacerStanding?

    /// Creates an event.
    public init(
        event: Kind, game: String? = nil, cells: [CellChange]? = nil, status: PlayStatus? = nil, minesLeft: Int? = nil,
        byPeer: String? = nil, byName: String? = nil, listing: GameListing? = nil, peerInfo: PeerInfo? = nil, x: Int? = nil, y: Int? = nil,
        progress: Double? = nil, trippedByPeer: String? = nil, dropped: Int? = nil, presence: PresenceInfo? = nil,
        racer: Commands.RacerStanding? = nil
    ) {
        self.racer = racer
        self.presence = presence
        self.dropped = dropped
        self.event = event
        self.game = game
        self.cells = cells
        self.status = status
        self.minesLeft = minesLeft
        self.byPeer = byPeer
        self.byName = byName
        self.listing = listing
        self.peerInfo = peerInfo
        self.x = x
        self.y = y
        self.progress = progress
        self.trippedByPeer = trippedByPeer
    }
}
