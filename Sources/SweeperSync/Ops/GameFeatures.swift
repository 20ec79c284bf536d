/// The parts of the op format a game uses beyond the first release's, each
/// read only by peers of some hello version on: a game goes to a peer only
/// when the peer reads every feature the game uses.
public struct GameFeatures: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// A players list, a players or archive op, a private game (version 7).
    public static let roles = GameFeatures(rawValue: 1 << 0)
    /// Flood ops (version 8).
    public static let floods = GameFeatures(rawValue: 1 << 1)
    /// Hint and seeded ops (version 12).
    public static let hints = GameFeatures(rawValue: 1 << 2)
    /// Daily ops (version 13).
    public static let daily = GameFeatures(rawValue: 1 << 3)
    /// A race genesis and resign ops (version 14).
    public static let race = GameFeatures(rawValue: 1 << 4)

    /// Every feature: what a peer of the current version reads.
    public static let all: GameFeatures = [.roles, .floods, .hints, .daily, .race]
}

extension GameState {
    /// Whether the game is a race (resign ops are a race's alone): peers
    /// before hello version 14 cannot read the game.
    public var usesRace: Bool { genesis.isRace }

    /// Every feature the game uses: a peer that reads them all may be sent it.
    public var features: GameFeatures {
        var out: GameFeatures = []
        if usesRoles { out.insert(.roles) }
        if usesFloods { out.insert(.floods) }
        if usesHints { out.insert(.hints) }
        if usesDaily { out.insert(.daily) }
        if usesRace { out.insert(.race) }
        return out
    }
}
