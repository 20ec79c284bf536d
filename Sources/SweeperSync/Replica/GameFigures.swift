import SweeperCrypto
import SweeperGame

/// The figures of a game as the Minesweeper community counts them, and
/// each player's part, derived from the ops alone: every device that holds
/// the same ops finds the same figures.
///
/// - **3BV** (Bechtel's Board Benchmark Value): the fewest clicks that
///   clear the board without flags: one per region of zeros (with its
///   numbered border) and one per number that borders no zero.
/// - **Solved 3BV**: the units of it revealed (all of it after a win).
/// - **Clicks**: every move: the opening (the game starts with its start
///   cell clicked), each reveal, each chord (one click however many cells
///   it opens), and each flag or mark set or cleared.
/// - **Efficiency**: solved 3BV / clicks.
///
/// A unit of 3BV goes to the player who opened it: for a region of zeros
/// the first revealer (smallest stamp) of its zeros, for a lone number its
/// first revealer; the opening's units go to nobody.
public struct GameFigures: Sendable, Equatable {
    /// The board's 3BV.
    public var threeBV: Int
    /// The 3BV revealed so far.
    public var solvedThreeBV: Int
    /// Moves made, the opening counted as one.
    public var clicks: Int
    /// Each player's part, by author.
    public var parts: [PeerID: PlayerPart]
    /// In a lost game whose every safe cell was revealed too: the author
    /// whose reveal completed the board, a win that did not stand because
    /// a mine went off first (the two happened apart, and merged).
    public var winThatDidNotStand: PeerID?

    /// solved 3BV / clicks.
    public var efficiency: Double { clicks > 0 ? Double(solvedThreeBV) / Double(clicks) : 0 }

    /// One player's part in a game.
    public struct PlayerPart: Sendable, Equatable {
        /// Safe cells this player revealed first (the opening aside).
        public var cellsOpened = 0
        /// Units of 3BV this player opened.
        public var threeBV = 0
        /// Flags standing at the end on mines, that this player set.
        public var flagsRight = 0
        /// Flags standing at the end on safe cells, that this player set.
        public var flagsWrong = 0
        /// Moves this player made (the opening is its board's player's).
        public var clicks = 0
        /// Hints this player asked for.
        public var hints = 0
        /// When this player first looked at the mines (ms since 1970), if they did.
        public var peekedAtMillis: UInt64?

        /// An empty part.
        public init() {}
    }
}

extension GameReplica {
    /// The game's figures, or `nil` while no state is readable here (or
    /// its ops that left memory cannot be read back). In a race, those of
    /// `racer`'s board (its moves alone); `nil` for a race without a racer
    /// of it.
    public func figures(of racer: PeerID? = nil) -> GameFigures? {
        guard let whole = self.state, let ops = try? allOps() else { return nil }
        let state: GameState
        if whole.isRace {
            guard let racer, let lane = whole.lane(of: racer) else { return nil }
            state = lane
        } else {
            state = whole
        }
        let layout = state.genesis.layout
        let geometry = state.genesis.geometry
        let n = geometry.cellCount
        var parts: [PeerID: GameFigures.PlayerPart] = [:]
        // The opening is a click, its board's player's (the creator's, or in a race the racer's): the parts add up to the whole.
        var clicks = 1
        parts[racer ?? state.creator, default: .init()].clicks += 1
        for op in ops where !whole.isRace || op.author == racer {
            guard let payload = readablePayload(of: op) else { continue }
            switch payload {
            case .reveal, .flood, .mark:
                clicks += 1
                parts[op.author, default: .init()].clicks += 1
            default:
                break
            }
        }
        // Flags as they stand at the end, each its setter's: a flag set,
        // cleared and set again is one flag, and they add up to the board's.
        for c in 0..<n where state.board.mark(at: c) == .flag {
            guard let who = state.markAuthor(of: c) else { continue }
            if layout.isMine(c) { parts[who, default: .init()].flagsRight += 1 } else { parts[who, default: .init()].flagsWrong += 1 }
        }
        for (author, count) in state.hintsBy { parts[author, default: .init()].hints = count }
        for (author, wall) in state.peeks { parts[author, default: .init()].peekedAtMillis = wall }
        let opener = state.genesisStamp
        func isOpening(_ c: Int) -> Bool { state.firstRevealStamp(of: c) == opener }
        for c in 0..<n where !layout.isMine(c) && !isOpening(c) {
            if let who = state.firstRevealer(of: c) { parts[who, default: .init()].cellsOpened += 1 }
        }
        // 3BV: regions of zeros, then numbers bordering none.
        var threeBV = 0, solved = 0
        var seen = [Bool](repeating: false, count: n)
        var stack: [Int] = []
        for i in 0..<n where !layout.isMine(i) && layout.adjacentMines(i) == 0 && !seen[i] {
            threeBV += 1
            seen[i] = true
            stack.append(i)
            var earliest: (stamp: Stamp, cell: Int)?
            while let c = stack.popLast() {
                if let s = state.firstRevealStamp(of: c), earliest.map({ s < $0.stamp }) ?? true { earliest = (s, c) }
                geometry.forEachNeighbor(of: c) { nb in
                    guard !seen[nb] else { return }
                    seen[nb] = true
                    if layout.adjacentMines(nb) == 0 && !layout.isMine(nb) { stack.append(nb) }
                }
            }
            // Zeros open their whole region: the region is solved once any of its zeros is.
            if let first = earliest {
                solved += 1
                if !isOpening(first.cell), let who = state.firstRevealer(of: first.cell) { parts[who, default: .init()].threeBV += 1 }
            }
        }
        for i in 0..<n where !layout.isMine(i) && !seen[i] {
            threeBV += 1
            guard let who = state.firstRevealer(of: i) else { continue }
            solved += 1
            if !isOpening(i) { parts[who, default: .init()].threeBV += 1 }
        }
        var overridden: PeerID?
        if state.status == .lost, state.board.revealedSafeCount == layout.safeCellCount {
            // The reveal that completed the board: the safe cell revealed last by stamp.
            var last: (stamp: Stamp, who: PeerID)?
            for c in 0..<n where !layout.isMine(c) {
                if let s = state.firstRevealStamp(of: c), let who = state.firstRevealer(of: c), last.map({ $0.stamp < s }) ?? true { last = (s, who) }
            }
            overridden = last?.who
        }
        return GameFigures(threeBV: threeBV, solvedThreeBV: solved, clicks: clicks, parts: parts, winThatDidNotStand: overridden)
    }
}
