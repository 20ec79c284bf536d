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
    /// The cells the ops changed (``GameReplica/changes(by:state:before:clicked:)``).
    var cells: [Int]
    /// Who made the last of the ops.
    var author: PeerID
    /// The cell the move acted on: the one a local move named, or the one
    /// a peer's flood or mark names (a plain reveal names none).
    var clicked: Cell?
    /// In a race, whose board changed (``state`` is then that board).
    var racer: PeerID?
}

/// Where the game service reports what changed.
protocol GameChangeSink: Sendable {
    /// Called on the service, in the call that made the change.
    func gameChanged(_ change: GameChange)
}

extension GameReplica {
    /// What `ops` changed in this game, now in `state`, reported as a move
    /// by the author of the last of them: the cells each reveal opened and
    /// each mark set (sealed moves of a private game as their seal holds),
    /// every mine when the game's status changed from `before` (it ended, or
    /// it plays again because a removed device's losing move was dropped),
    /// and the cell the last op acted on (`clicked`, when it names one).
    /// In a race, one change per racer whose board the ops changed, with
    /// every mine once that board ended.
    func changes(by ops: [Op], state: GameState, before: GameStatus?, clicked: Cell? = nil) -> [CellsChanged] {
        guard state.isRace else { return change(by: ops, state: state, before: before, clicked: clicked).map { [$0] } ?? [] }
        let byRacer = Dictionary(grouping: ops, by: \.author)
        return byRacer.keys.sorted().compactMap { racer -> CellsChanged? in
            guard let lane = state.lane(of: racer), let moves = byRacer[racer] else { return nil }
            // A board that ended shows its mines: as if it played before.
            var changed = change(by: moves, state: lane, before: lane.status == .playing ? nil : .playing, clicked: clicked)
            changed?.racer = racer
            return changed
        }
    }

    private func change(by ops: [Op], state: GameState, before: GameStatus?, clicked: Cell?) -> CellsChanged? {
        guard let author = ops.last?.author else { return nil }
        let geometry = state.genesis.geometry
        var cells: Set<Int> = []
        var acted: Int?
        for op in ops {
            guard let payload = readablePayload(of: op) else { continue }
            switch payload {
            case .reveal(let runs): cells.formUnion(runs)
            case .flood(let flood): cells.formUnion(flood.cells(in: state.genesis.layout))
            case .mark(let c, _): cells.insert(c)
            default: break
            }
            if op.author == author, let c = payload.actedCell, geometry.contains(index: c) { acted = c }
        }
        if let before, before != state.status {
            cells.formUnion(state.genesis.layout.mineIndices)
        }
        return CellsChanged(state: state, cells: cells.sorted(), author: author, clicked: clicked ?? acted.map(geometry.cell(at:)))
    }
}
