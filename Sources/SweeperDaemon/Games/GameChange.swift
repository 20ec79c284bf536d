import SweeperCrypto
import SweeperGame
import SweeperSync

/// What changed in the games: the game service's one report of a change,
/// made synchronously in the call that made it, for whoever shows it (the
/// control layer turns each into viewers' events). The service itself
/// knows nothing of the control protocol.
enum GameChange: Sendable {
    /// A game came: made here, or its genesis from a peer.
    case added(GameReplica, GameState)
    /// Ops changed a game's cells.
    case cells(CellsChanged)
    /// How a game is listed changed (its players or its archive flag).
    case listing(GameReplica, GameState)
    /// A game left this device (forgotten, or its only ops were a removed device's).
    case gone(GameID)
}

/// Ops that changed a game's cells, and what they changed.
struct CellsChanged: Sendable {
    /// The game as it is now.
    var state: GameState
    /// The cells the ops changed (``GameState/changedCells(by:before:)``).
    var cells: [Int]
    /// Who made the last of the ops.
    var author: PeerID
    /// The cell a local move named (the ops of a peer name none).
    var clicked: Cell?
}

/// Where the game service reports what changed.
protocol GameChangeSink: Sendable {
    /// Called on the service, in the call that made the change.
    func gameChanged(_ change: GameChange)
}

extension GameState {
    /// The cells `ops` changed, by index, ascending: the cells each reveal
    /// opened and each mark set, and every mine when the game's status
    /// changed from `before` (it ended, or it plays again because a removed
    /// device's losing move was dropped).
    func changedCells(by ops: some Sequence<Op>, before: GameStatus?) -> [Int] {
        var cells: Set<Int> = []
        for op in ops {
            switch op.payload {
            case .reveal(let runs): cells.formUnion(runs)
            case .flood(let flood): cells.formUnion(flood.cells(in: genesis.layout))
            case .mark(let c, _): cells.insert(c)
            default: break
            }
        }
        // A game that ended shows its mines; one that is playing again (a
        // removed device's losing move dropped) covers them again.
        if let before, before != status {
            cells.formUnion(genesis.layout.mineIndices)
        }
        return cells.sorted()
    }
}
