/// What the solver made of a board.
public struct SolveResult: Equatable, Sendable {
    /// Whether every safe cell was cleared by deduction alone.
    public var solvable: Bool
    /// The safe cells the solver revealed (the opening included).
    public var clearedSafeCells: Int
    /// All safe cells on the board.
    public var safeCells: Int

    /// Creates a result.
    public init(solvable: Bool, clearedSafeCells: Int, safeCells: Int) {
        self.solvable = solvable
        self.clearedSafeCells = clearedSafeCells
        self.safeCells = safeCells
    }
}

/// A Minesweeper solver that never guesses.
///
/// It reasons the way a careful player does, and nothing more: each revealed
/// number is a constraint "these covered neighbours hold N mines"; a
/// constraint with 0 mines or as many mines as cells is settled; two
/// overlapping constraints give a third (subset: `B \ A` holds `b − a`
/// mines) or settle their differences (overlap: when `a − b = |A \ B|`,
/// `A \ B` is all mines and `B \ A` all safe); and the total mine count
/// settles the cells outside any disjoint union of constraints when few
/// constraints remain. Every step is sound: the solver never calls a cell
/// safe that is not.
///
/// Constraints are kept as 3×3 bit masks anchored on the board, so every
/// operation is local and a 500×500 board solves in linear time.
public enum Solver {
    /// Solves `layout` from the opening at `start` (which must be safe).
    public static func solve(_ layout: MineLayout, start: Int) -> SolveResult {
        var core = SolverCore(layout: layout)
        core.reveal(start)
        core.run(perturbing: nil)
        return SolveResult(
            solvable: core.unknownCount == 0 && !core.contradiction,
            clearedSafeCells: core.openedCount,
            safeCells: layout.safeCellCount
        )
    }

    /// The next covered cell that can be proven safe from what `board`
    /// shows (its revealed numbers; flags are not trusted), or `nil` when no
    /// safe cell can be deduced or the game is over.
    public static func hint(for board: Board) -> Int? {
        guard board.status == .playing else { return nil }
        var core = SolverCore(layout: board.layout)
        for i in 0..<board.geometry.cellCount where board.isRevealed(i) { core.reveal(i) }
        var found: Int?
        core.onDeducedSafe = { cell in
            if found == nil && !board.isRevealed(cell) { found = cell }
            return found != nil
        }
        core.run(perturbing: nil)
        return found
    }
}

/// The solver's working state. A noncopyable value with mutating methods:
/// it owns its lists (``SolverList``, freed in its `deinit`), so that the hot
/// loops run on memory of its own with no copy on write to check.
struct SolverCore: ~Copyable {
    let width: Int
    let height: Int
    let totalMines: Int

    /// The true layout (mutable: the generator moves mines).
    var mines: SolverList<UInt8>
    var counts: SolverList<UInt8>

    /// Knowledge per cell: `unknown`, `knownMine`, or `opened`.
    var state: SolverList<UInt8>
    static let unknown: UInt8 = 0
    static let knownMine: UInt8 = 1
    static let opened: UInt8 = 2

    var unknownCount: Int
    var knownMineCount = 0
    var openedCount = 0
    var contradiction = false

    /// Squares that became known and still have to be taken out of constraints.
    var squareQueue: SolverList<Int32>
    var squareHead = 0

    // Constraint sets (``ConstraintSet``), by id, with a free list and an
    // index by anchor.
    var setTable = SolverList<ConstraintSet>(capacity: 256)
    var freeSets = SolverList<Int32>(capacity: 256)
    var anchorHead: SolverList<Int32>
    /// Which anchors hold a set, a bit each, ``anchorWords`` words a row:
    /// a step that looks at the sets near a square reads a row's bits
    /// rather than every anchor of its window, most of which hold none.
    var anchorBits: SolverList<UInt64>
    let anchorWords: Int
    var liveSets = SolverList<Int32>(capacity: 256)
    var setTodo = SolverList<Int32>(capacity: 256)

    /// Lists the deductive loop fills and empties on every step, kept so
    /// that a step allocates nothing (taken out while in use and put back
    /// before the next step: the steps they serve never nest).
    var scratchSets = SolverList<Int32>(capacity: 64)
    var scratchDerived = SolverList<(UInt64, Int)>(capacity: 64)
    var scratchSettled = SolverList<(UInt64, Bool)>(capacity: 64)

    /// Pools for the perturber, as three segments of one permutation of the
    /// cells: unknown cells next to known ones (`0..<frontierEnd`), unknown
    /// cells beyond (`frontierEnd..<knownStart`), known cells (`knownStart...`).
    /// Moving a cell between pools is a swap or two, and a segment can be
    /// drawn from at random without replacement. They are built when the
    /// perturber first needs them (``updatePools()``), empty until then.
    var poolCells: SolverList<Int32>
    var poolPos: SolverList<Int32>
    var frontierEnd = 0
    var knownStart: Int
    /// The cells in the order they became known, and how many of them the
    /// pools have taken in (see ``updatePools()``).
    var knownOrder: SolverList<Int32>
    var poolsUpdated = 0

    /// Called with each cell deduced safe; returning true stops the solver.
    var onDeducedSafe: ((Int) -> Bool)?
    var stopped = false

    init(layout: MineLayout) {
        self.init(geometry: layout.geometry, mineBytes: layout.mines)
    }

    /// A solver of the board whose mines are `mineBytes` (1 where a mine
    /// is): the generator's working form, without a ``MineLayout`` between.
    init(geometry: BoardGeometry, mineBytes: [UInt8]) {
        width = geometry.width
        height = geometry.height
        // Each cell's count of adjacent mines, one pass over the mines.
        let counts = SolverList<UInt8>(repeating: 0, count: width * height)
        var total = 0
        for y in 0..<height {
            for x in 0..<width where mineBytes[y * width + x] != 0 {
                total += 1
                for ny in max(0, y - 1)...min(height - 1, y + 1) {
                    for nx in max(0, x - 1)...min(width - 1, x + 1) where nx != x || ny != y { counts[ny * width + nx] += 1 }
                }
            }
        }
        totalMines = total
        let n = width * height
        mines = SolverList(mineBytes)
        self.counts = counts
        state = SolverList(repeating: SolverCore.unknown, count: n)
        unknownCount = n
        anchorHead = SolverList(repeating: -1, count: n)
        anchorWords = (width + 63) / 64
        anchorBits = SolverList(repeating: 0, count: anchorWords * height)
        poolCells = SolverList(capacity: n)
        poolPos = SolverList(capacity: n)
        knownOrder = SolverList(capacity: n)
        knownStart = n
        squareQueue = SolverList(capacity: n)
    }

    deinit {
        mines.deallocate()
        counts.deallocate()
        state.deallocate()
        squareQueue.deallocate()
        setTable.deallocate()
        freeSets.deallocate()
        anchorHead.deallocate()
        anchorBits.deallocate()
        liveSets.deallocate()
        setTodo.deallocate()
        scratchSets.deallocate()
        scratchDerived.deallocate()
        scratchSettled.deallocate()
        poolCells.deallocate()
        poolPos.deallocate()
        knownOrder.deallocate()
    }

    var minesLeft: Int { totalMines - knownMineCount }

    // MARK: Knowledge

    /// Marks `cell` as opened (it must be safe) and queues it.
    mutating func reveal(_ cell: Int) {
        guard state[cell] == SolverCore.unknown else { return }
        if mines[cell] != 0 {
            contradiction = true
            return
        }
        state[cell] = SolverCore.opened
        openedCount += 1
        becameKnown(cell)
    }

    mutating func markMine(_ cell: Int) {
        guard state[cell] == SolverCore.unknown else { return }
        if mines[cell] == 0 {
            contradiction = true
            return
        }
        state[cell] = SolverCore.knownMine
        knownMineCount += 1
        becameKnown(cell)
    }

    private mutating func becameKnown(_ cell: Int) {
        unknownCount -= 1
        squareQueue.append(Int32(cell))
        knownOrder.append(Int32(cell))
    }

    /// Brings the pools up to date with the cells that became known since
    /// the last call, in the order they did: the pools are only read when
    /// the perturber moves mines, and a run that needs no move never builds
    /// them.
    mutating func updatePools() {
        if poolCells.isEmpty {
            for i in 0..<(width * height) {
                poolCells.append(Int32(i))
                poolPos.append(Int32(i))
            }
        }
        while poolsUpdated < knownOrder.count {
            movePools(Int(knownOrder[poolsUpdated]))
            poolsUpdated += 1
        }
    }

    private mutating func movePools(_ cell: Int) {
        var pos = Int(poolPos[cell])
        if pos < frontierEnd {
            // Frontier → interior's first slot → known's new first slot.
            swapPool(pos, frontierEnd - 1)
            frontierEnd -= 1
            pos = frontierEnd
        }
        if pos < knownStart {
            swapPool(pos, knownStart - 1)
            knownStart -= 1
        }
        let x = cell % width
        let y = cell / width
        for ny in max(0, y - 1)...min(height - 1, y + 1) {
            for nx in max(0, x - 1)...min(width - 1, x + 1) {
                let nb = ny * width + nx
                let p = Int(poolPos[nb])
                if p >= frontierEnd && p < knownStart {
                    swapPool(p, frontierEnd)
                    frontierEnd += 1
                }
            }
        }
    }

    @inline(__always) mutating func swapPool(_ a: Int, _ b: Int) {
        guard a != b else { return }
        let ca = poolCells[a], cb = poolCells[b]
        poolCells[a] = cb
        poolCells[b] = ca
        poolPos[Int(cb)] = Int32(a)
        poolPos[Int(ca)] = Int32(b)
    }

    // MARK: The deductive loop

    mutating func run(perturbing perturber: UnsafeMutablePointer<Perturber>?) {
        while !contradiction && !stopped {
            if squareHead < squareQueue.count {
                let cell = Int(squareQueue[squareHead])
                squareHead += 1
                processKnownSquare(cell)
                continue
            }
            if let s = setTodo.popLast() {
                setTable[Int(s)].inTodo = false
                if isLive(s) { processSet(s) }
                continue
            }
            if unknownCount == 0 { return }
            if globalDeduction() { continue }
            if let p = perturber, perturb(p) { continue }
            return
        }
    }

    private mutating func processKnownSquare(_ cell: Int) {
        let x = cell % width, y = cell / width
        let isMine = state[cell] == SolverCore.knownMine
        // Take the square out of every set that holds it.
        let holding = takeSets(containing: cell)
        for k in 0..<holding.count {
            let s = holding[k]
            let i = Int(s)
            let set = setTable[i]
            let ax = Int(set.ax), ay = Int(set.ay)
            let bit = UInt16(1) &<< UInt16(truncatingIfNeeded: (y &- ay) &* 3 &+ (x &- ax))
            let mask = set.mask & ~bit
            let m = Int(set.mines) &- (isMine ? 1 : 0)
            replaceSet(s, ax: ax, ay: ay, mask: mask, mines: m)
        }
        // An opened square's number becomes a set over its unknown neighbours.
        if state[cell] == SolverCore.opened {
            var mask: UInt16 = 0
            var m = Int(counts[cell])
            // The neighbours on the board, row by row (wrapping arithmetic: all within it).
            let x0 = max(x &- 1, 0), x1 = min(x &+ 1, width &- 1), y1 = min(y &+ 1, height &- 1)
            var ny = max(y &- 1, 0)
            while ny <= y1 {
                var nx = x0
                while nx <= x1 {
                    if nx != x || ny != y {
                        switch state[ny &* width &+ nx] {
                        case SolverCore.unknown: mask |= 1 &<< UInt16(truncatingIfNeeded: (ny &- y &+ 1) &* 3 &+ nx &- x &+ 1)
                        case SolverCore.knownMine: m &-= 1
                        default: break
                        }
                    }
                    nx &+= 1
                }
                ny &+= 1
            }
            addSet(ax: x - 1, ay: y - 1, mask: mask, mines: m)
        }
    }

    private mutating func settle(ax: Int, ay: Int, mask: UInt16, mine: Bool) {
        // A plain loop, not `forEachCell`: a closure that mutates `self`
        // would force a copy of the whole solver state.
        var m = mask
        while m != 0 {
            let b = m.trailingZeroBitCount
            m &= m - 1
            let cell = (ay + b / 3) * width + ax + b % 3
            if mine {
                markMine(cell)
            } else {
                reveal(cell)
                if let callback = onDeducedSafe, callback(cell) { stopped = true }
            }
        }
    }

    /// Expands a 9-bit window mask into a 7×7 frame (7 bits a row).
    @inline(__always) static func frame(_ mask: UInt16) -> UInt64 {
        let m = UInt64(mask)
        return (m & 0b111) | ((m >> 3 & 0b111) << 7) | ((m >> 6 & 0b111) << 14)
    }

    /// Folds a frame back into a window anchored relative to the frame origin.
    @inline(__always) static func unframe(_ f: UInt64) -> (dx: Int, dy: Int, mask: UInt16) {
        var rows: UInt64 = 0
        var r0 = -1
        for r in 0..<7 {
            let row = (f >> UInt64(r * 7)) & 0x7F
            if row != 0 && r0 < 0 { r0 = r }
            rows |= row
        }
        let c0 = rows.trailingZeroBitCount
        var mask: UInt16 = 0
        for rr in 0..<3 where r0 + rr < 7 {
            mask |= UInt16((f >> UInt64((r0 + rr) * 7 + c0)) & 0b111) << UInt16(rr * 3)
        }
        return (c0, r0, mask)
    }

    private mutating func processSet(_ s: Int32) {
        let set = setTable[Int(s)]
        let ax = Int(set.ax), ay = Int(set.ay), mask = set.mask, m = Int(set.mines)
        let size = mask.nonzeroBitCount
        if m == 0 || m == size {
            removeSet(s)
            settle(ax: ax, ay: ay, mask: mask, mine: m != 0)
            return
        }
        // Pair deductions with every overlapping set. The frame puts this
        // set's anchor at (2, 2) in a 7×7 grid.
        let a = SolverCore.frame(mask) << 16
        var derived = scratchDerived
        var settled = scratchSettled
        derived.removeAll()
        settled.removeAll()
        defer {
            scratchDerived = derived
            scratchSettled = settled
        }
        forEachSet(anchorsX: (ax - 2)...(ax + 2), anchorsY: (ay - 2)...(ay + 2)) { t in
            guard t != s else { return }
            let other = setTable[Int(t)]
            let dx = Int(other.ax) &- ax &+ 2, dy = Int(other.ay) &- ay &+ 2
            let b = SolverCore.frame(other.mask) &<< UInt64(truncatingIfNeeded: dy &* 7 &+ dx)
            guard a & b != 0 else { return }
            let onlyA = a & ~b, onlyB = b & ~a
            let na = onlyA.nonzeroBitCount, nb = onlyB.nonzeroBitCount
            let mb = Int(other.mines)
            if nb == 0 {
                if na > 0 { derived.append((onlyA, m - mb)) }
            } else if na == 0 {
                derived.append((onlyB, mb - m))
            } else if m - mb == na {
                settled.append((onlyA, true))
                settled.append((onlyB, false))
            } else if mb - m == nb {
                settled.append((onlyB, true))
                settled.append((onlyA, false))
            }
        }
        for k in 0..<settled.count {
            let (f, isMine) = settled[k]
            let (dx, dy, wmask) = SolverCore.unframe(f)
            settle(ax: ax - 2 + dx, ay: ay - 2 + dy, mask: wmask, mine: isMine)
        }
        for k in 0..<derived.count {
            let (f, dm) = derived[k]
            let (dx, dy, wmask) = SolverCore.unframe(f)
            addSet(ax: ax - 2 + dx, ay: ay - 2 + dy, mask: wmask, mines: dm)
        }
    }

    /// Deductions from the total mine count. Returns whether anything was
    /// learned.
    private mutating func globalDeduction() -> Bool {
        if minesLeft == 0 || minesLeft == unknownCount {
            let mine = minesLeft != 0
            for cell in 0..<(width * height) where state[cell] == SolverCore.unknown {
                if mine {
                    markMine(cell)
                } else {
                    reveal(cell)
                    if let callback = onDeducedSafe, callback(cell) { stopped = true }
                }
            }
            return true
        }
        // With few sets left, look for a disjoint union whose mine count
        // settles every unknown square outside it.
        let n = liveSets.count
        guard n > 0 && n <= 10 else { return false }
        let sets = liveSets.array
        var best: UInt32?
        var chosen: UInt32 = 0
        var outcome = false
        func search(_ k: Int, _ squares: Int, _ minesIn: Int) {
            if best != nil { return }
            if k == n {
                let outside = unknownCount - squares
                let left = minesLeft - minesIn
                if outside > 0 && (left == 0 || left == outside) {
                    best = chosen
                    outcome = left != 0
                }
                return
            }
            // Include set k when it is disjoint from those chosen.
            let sk = Int(sets[k])
            var disjoint = true
            var c = chosen
            while c != 0 {
                let j = c.trailingZeroBitCount
                c &= c - 1
                if overlaps(sk, Int(sets[j])) { disjoint = false; break }
            }
            if disjoint {
                chosen |= 1 << UInt32(k)
                search(k + 1, squares + setTable[sk].mask.nonzeroBitCount, minesIn + Int(setTable[sk].mines))
                chosen &= ~(1 << UInt32(k))
            }
            search(k + 1, squares, minesIn)
        }
        search(0, 0, 0)
        guard let union = best else { return false }
        var inside = [Bool](repeating: false, count: width * height)
        var c = union
        while c != 0 {
            let j = Int(sets[c.trailingZeroBitCount])
            c &= c - 1
            forEachCell(ax: Int(setTable[j].ax), ay: Int(setTable[j].ay), mask: setTable[j].mask) { inside[$0] = true }
        }
        for cell in 0..<(width * height) where state[cell] == SolverCore.unknown && !inside[cell] {
            if outcome {
                markMine(cell)
            } else {
                reveal(cell)
                if let callback = onDeducedSafe, callback(cell) { stopped = true }
            }
        }
        return true
    }

    private func overlaps(_ i: Int, _ j: Int) -> Bool {
        let first = setTable[i], second = setTable[j]
        let dx = Int(second.ax) - Int(first.ax) + 2, dy = Int(second.ay) - Int(first.ay) + 2
        guard dx >= 0 && dx <= 4 && dy >= 0 && dy <= 4 else { return false }
        let a = SolverCore.frame(first.mask) << 16
        let b = SolverCore.frame(second.mask) << UInt64(dy * 7 + dx)
        return a & b != 0
    }
}
