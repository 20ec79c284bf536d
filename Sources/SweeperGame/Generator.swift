/// A board made by ``Generator``.
public struct GeneratedBoard: Sendable {
    /// What the board was made from.
    public let parameters: GameParameters
    /// The seed it was made from.
    public let seed: UInt64
    /// Where the mines are.
    public let layout: MineLayout
    /// The index of the start cell (mine-free; its opening is revealed when play begins).
    public let start: Int
    /// How many fresh layouts were tried (1 unless no-guess generation had to restart).
    public let attempts: Int
}

/// Why generation stopped without a board.
public enum GenerationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No no-guess layout was found within the attempt limit.
    case gaveUp(attempts: Int)
    /// The caller's `stop` said to stop before a no-guess layout was found.
    case stopped(attempts: Int)

    public var description: String {
        switch self {
        case .gaveUp(let n): "no no-guess board found after \(n) attempts; try fewer mines"
        case .stopped(let n): "no no-guess board found in the time given (\(n) attempts); try fewer mines"
        }
    }
}

/// Makes boards, deterministically from a seed.
///
/// Mines are placed uniformly at random outside the opening (the start cell
/// and, when the count leaves room, its 8 neighbours) with ``BoardRandom``.
/// For no-guess boards the ``Solver`` runs from the opening; where deduction
/// gets stuck, mines are moved so that a stuck constraint becomes all mines or
/// all safe (Simon Tatham's perturbation idea), and the result is solved again
/// from scratch until a run needs no perturbation at all — so every board
/// returned is cleared by the solver without a guess.
public enum Generator {
    /// The most fresh layouts tried before giving up.
    public static let maximumAttempts = 10_000

    /// Makes a board. `stop` is asked before each attempt and each pass of
    /// the solver: once it says yes, the making ends (a caller's time limit;
    /// a dense no-guess board of 500×500 may take hours of attempts).
    /// - Throws: ``GenerationError`` when a no-guess board could not be made.
    public static func generate(
        _ parameters: GameParameters, seed: UInt64, stop: () -> Bool = { false }
    ) throws(GenerationError) -> GeneratedBoard {
        let geometry = parameters.geometry
        let n = geometry.cellCount
        let start = geometry.index(of: parameters.start)
        var random = BoardRandom(seed: seed)

        var protected = [Bool](repeating: false, count: n)
        protected[start] = true
        if parameters.clearsStartNeighbours {
            geometry.forEachNeighbor(of: start) { protected[$0] = true }
        }
        let candidates = (0..<n).filter { !protected[$0] }

        for attempt in 1...maximumAttempts {
            if parameters.noGuess, stop() { throw .stopped(attempts: attempt - 1) }
            var mines = [UInt8](repeating: 0, count: n)
            var pool = candidates
            for k in 0..<parameters.mines {
                let j = k + random.below(pool.count - k)
                pool.swapAt(k, j)
                mines[pool[k]] = 1
            }
            guard parameters.noGuess else {
                let layout = MineLayout(geometry: geometry, mineBytes: mines)
                return GeneratedBoard(parameters: parameters, seed: seed, layout: layout, start: start, attempts: attempt)
            }
            var previousPerturbations: Int?
            while true {
                if stop() { throw .stopped(attempts: attempt) }
                var core = SolverCore(geometry: geometry, mineBytes: mines)
                core.reveal(start)
                var perturber = Perturber(random: random, protected: protected, allowWholeRegion: attempt > 100)
                withUnsafeMutablePointer(to: &perturber) { core.run(perturbing: $0) }
                random = perturber.random
                guard core.unknownCount == 0, !core.contradiction else { break }
                if perturber.count == 0 {
                    let layout = MineLayout(geometry: geometry, mineBytes: mines)
                    return GeneratedBoard(parameters: parameters, seed: seed, layout: layout, start: start, attempts: attempt)
                }
                if let previous = previousPerturbations, perturber.count >= previous { break }
                previousPerturbations = perturber.count
                mines = core.mines.array
            }
        }
        throw .gaveUp(attempts: maximumAttempts)
    }
}
