import SweeperConventions
import SweeperSync

/// Which games this device syncs: its sync mode, and the games it chose to
/// follow or forget. Pure: the game service keeps it, the store keeps its
/// parts (the mode in settings, the choices in `game_choices`).
///
/// - `all` (the default): every game of the circle, but the forgotten.
/// - `mine`: the games held here (made, moved in or followed) and the ones
///   followed but not yet here; games others start are not taken until
///   followed.
struct SyncSelection: Sendable, Equatable {
    /// The mode.
    var mode: SyncMode
    /// Games followed, whether held yet or not.
    var followed: Set<GameID> = []
    /// Games forgotten: not held, and not taken from peers.
    var forgotten: Set<GameID> = []

    /// What this device tells its peers it takes, holding the games `held`.
    func interest(holding held: some Sequence<GameID>) -> GameInterest {
        switch mode {
        case .all: .allBut(forgotten)
        case .mine: .only(followed.union(held).subtracting(forgotten))
        }
    }

    /// Records that `game` is forgotten.
    mutating func forget(_ game: GameID) {
        followed.remove(game)
        forgotten.insert(game)
    }

    /// Records that `game` is followed.
    mutating func follow(_ game: GameID) {
        forgotten.remove(game)
        followed.insert(game)
    }

    /// Reads the choices as the store keeps them (game id text → follows);
    /// ids that do not parse are skipped.
    init(mode: SyncMode, choices: [String: Bool] = [:]) {
        self.mode = mode
        for (text, follows) in choices {
            guard let id = GameID(hex: text) else { continue }
            if follows { followed.insert(id) } else { forgotten.insert(id) }
        }
    }
}
