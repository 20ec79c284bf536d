import SweeperCrypto
import SweeperGame

/// A game played again, move by move: its ops in the order every replica
/// ranks them (by stamp: Lamport time, then author), each with what it
/// changed on the board as it stood after the moves before it. The board
/// after the last step is the game's board.
public struct Replay: Sendable {
    /// One move.
    public struct Step: Sendable, Equatable {
        /// Who made it.
        public let author: PeerID
        /// What it was.
        public let kind: Kind
        /// The cell acted on (the cell revealed or chorded on, marked, or
        /// shown by a hint); `nil` for a move that names none.
        public let cell: Int?
        /// The cells whose look changed, ascending.
        public let changed: [Int]
        /// The author's wall clock when made (ms since 1970).
        public let wallClockMillis: UInt64
        /// Where the game stood after it.
        public let status: GameStatus
    }

    /// What a move was.
    public enum Kind: String, Sendable, Equatable {
        /// Cells revealed (a click on a covered cell, or a list of cells).
        case reveal
        /// A chord on a number.
        case chord
        /// A flag set.
        case flag
        /// A question mark set.
        case question
        /// A mark cleared.
        case unmark
        /// A hint asked for (its cell is the one shown).
        case hint
        /// A look at the mines.
        case peek
        /// A racer gave up its board in a race.
        case resign
        /// Players added, the archive flag, or the seed's choice, when it
        /// changed the board (it never does on its own): kept for completeness.
        case other
    }

    /// The game's start (its genesis's wall clock, ms since 1970).
    public let startMillis: UInt64
    /// The game right after its genesis: the opening.
    public let opening: GameState
    /// The moves after the genesis, in order.
    public let steps: [Step]
}

extension GameReplica {
    /// The game played again from its genesis, or `nil` while its state is
    /// not readable here (a private game this device does not play).
    /// `visit` sees each step with the game as it stood after it. A race
    /// plays one racer's board again: `racer`'s, or the creator's. Throws
    /// when ops that left memory cannot be read back from the archive.
    public func replay(racer: PeerID? = nil, _ visit: (Replay.Step, GameState) -> Void = { _, _ in }) throws -> Replay? {
        guard let current = state, let creator, let genesisOp else { return nil }
        let genesis = current.genesis
        var game = GameState(genesisOp: genesisOp, genesis: genesis)
        game.isPrivate = current.isPrivate
        let racer = current.racerShown(to: racer ?? creator)
        // The board replayed: the game's, or in a race the racer's.
        var board: GameState { racer.flatMap { game.lane(of: $0) } ?? game }
        let opening = board
        var ordered = try allOps().filter { $0.hash != genesisOp.hash && (racer == nil || $0.author == racer) }
        ordered.sort { $0.stamp < $1.stamp }
        var steps: [Replay.Step] = []
        steps.reserveCapacity(ordered.count)
        for op in ordered {
            guard let payload = readablePayload(of: op) else { continue }
            let statusBefore = board.status
            var changed = Set(game.apply(payload, of: op))
            // A move that ends the game (or, after a merge, plays it again) shows or covers the mines.
            if board.status != statusBefore { changed.formUnion(genesis.layout.mineIndices) }
            let kind: Replay.Kind
            switch payload {
            case .reveal: kind = .reveal
            case .flood(let f): kind = f.isChord ? .chord : .reveal
            case .mark(_, let m): kind = m == .flag ? .flag : m == .question ? .question : .unmark
            case .hint: kind = .hint
            case .assisted: kind = .peek
            case .resign: kind = .resign
            default: kind = .other
            }
            // Players added, the archive flag and the seed's choice change nothing on the board: not moves to watch.
            if kind == .other && changed.isEmpty { continue }
            let board = board
            let step = Replay.Step(
                author: op.author, kind: kind, cell: payload.actedCell, changed: changed.sorted(), wallClockMillis: op.wallClockMillis,
                status: board.status)
            steps.append(step)
            visit(step, board)
        }
        return Replay(startMillis: genesis.createdAtMillis, opening: opening, steps: steps)
    }
}
