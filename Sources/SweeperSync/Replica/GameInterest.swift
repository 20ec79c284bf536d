import SweeperConventions

/// Which games a replica takes from its peers: every game but those it
/// forgot, or only the games it names (those it follows and plays in).
///
/// A daemon tells its peers its interest (``SyncMessage/interest(_:)``), and
/// each peer's ``SyncSession`` then sends it only those games: in catch-up,
/// in live pushes and in anti-entropy. What arrives outside the interest
/// anyway (from a peer too old to be told, or pushed before it was told) is
/// dropped by the receiving session before it reaches the replica.
public enum GameInterest: Sendable, Hashable {
    /// Every game except these.
    case allBut(Set<GameID>)
    /// Only these games.
    case only(Set<GameID>)

    /// Every game: what a peer is assumed to take until it says otherwise.
    public static let everything = GameInterest.allBut([])

    /// The most games one interest names.
    public static let gameLimit = 100_000

    /// Whether `game` is taken.
    public func contains(_ game: GameID) -> Bool {
        switch self {
        case .allBut(let excluded): !excluded.contains(game)
        case .only(let included): included.contains(game)
        }
    }

    /// Whether this is ``everything``, which needs no telling.
    public var isEverything: Bool { self == .everything }

    func encode(into w: inout ByteWriter) {
        let (kind, games): (UInt8, Set<GameID>) =
            switch self {
            case .allBut(let g): (0, g)
            case .only(let g): (1, g)
            }
        w.byte(kind)
        w.varint(games.count)
        for id in games.sorted() { w.append(id.bytes) }
    }

    static func decode(from r: inout ByteReader) throws(ByteDecodingError) -> GameInterest {
        let kind = try r.byte("interest kind")
        guard kind <= 1 else { throw .unknownKind(field: "interest kind", value: kind) }
        let count = try r.int("interest game count", max: gameLimit)
        var games = Set<GameID>()
        for _ in 0..<count { games.insert(GameID(unchecked: try r.take(GameID.byteCount, "game id"))) }
        return kind == 0 ? .allBut(games) : .only(games)
    }
}
