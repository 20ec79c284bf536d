// Simon Tatham's idea for no-guess boards: where the solver is stuck, the
// generator moves mines so that a stuck constraint becomes all mines or all
// safe, then solves again. Used by generation only.

/// The perturbation policy the generator hands to the solver: how to move
/// mines when deduction is stuck.
struct Perturber {
    var random: BoardRandom
    /// Cells the generator must keep mine-free (the opening).
    var protected: [Bool]
    /// Whether the whole unknown region may be filled or emptied at once
    /// when no constraint is left to work on.
    var allowWholeRegion: Bool
    var count = 0
}

extension SolverCore {
    /// Moves mines so that a random stuck set becomes all mines or all safe,
    /// trading with unknown squares on the frontier first, then unknown
    /// squares beyond it, then (last resort) known squares, never within the
    /// opening. The constraint sets are kept true by adjusting the count of
    /// every set that holds a changed square.
    mutating func perturb(_ p: UnsafeMutablePointer<Perturber>) -> Bool {
        updatePools()
        var inSet = Set<Int>()
        var setCells: [Int] = []
        if liveSets.isEmpty {
            guard p.pointee.allowWholeRegion else { return false }
            for cell in 0..<(width * height) where state[cell] == SolverCore.unknown {
                setCells.append(cell)
                inSet.insert(cell)
            }
        } else {
            let s = Int(liveSets[p.pointee.random.below(liveSets.count)])
            let set = setTable[s]
            forEachCell(ax: Int(set.ax), ay: Int(set.ay), mask: set.mask) {
                setCells.append($0)
                inSet.insert($0)
            }
        }
        guard !setCells.isEmpty else { return false }
        var fullInSet: [Int] = []
        var emptyInSet: [Int] = []
        for c in setCells {
            if mines[c] != 0 { fullInSet.append(c) } else { emptyInSet.append(c) }
        }
        var toFill: [Int] = []  // empty squares outside that could take the set's mines
        var toEmpty: [Int] = []  // full squares outside that could give mines to the set
        let segments = [0..<frontierEnd, frontierEnd..<knownStart, knownStart..<poolCells.count]
        search: for segment in segments {
            var k = segment.lowerBound
            while k < segment.upperBound {
                swapPool(k, k + p.pointee.random.below(segment.upperBound - k))
                let c = Int(poolCells[k])
                k += 1
                if inSet.contains(c) || p.pointee.protected[c] { continue }
                if mines[c] != 0 { toEmpty.append(c) } else { toFill.append(c) }
                if toFill.count == fullInSet.count || toEmpty.count == emptyInSet.count { break search }
            }
        }
        var changes: [(Int, Int)] = []
        if toFill.count == fullInSet.count {
            for c in fullInSet { changes.append((c, -1)) }
            for c in toFill { changes.append((c, +1)) }
        } else if toEmpty.count == emptyInSet.count {
            for c in emptyInSet { changes.append((c, +1)) }
            for c in toEmpty { changes.append((c, -1)) }
        } else {
            // Not enough room either way: fill part of the set.
            guard !toEmpty.isEmpty else { return false }
            var candidates = emptyInSet
            for k in 0..<toEmpty.count {
                let j = k + p.pointee.random.below(candidates.count - k)
                candidates.swapAt(k, j)
                changes.append((candidates[k], +1))
            }
            for c in toEmpty { changes.append((c, -1)) }
        }
        p.pointee.count += 1
        for (cell, delta) in changes { apply(cell, delta: delta) }
        return true
    }

    private mutating func apply(_ cell: Int, delta: Int) {
        mines[cell] = delta > 0 ? 1 : 0
        let x = cell % width, y = cell / width
        for ny in max(0, y - 1)...min(height - 1, y + 1) {
            for nx in max(0, x - 1)...min(width - 1, x + 1) where nx != x || ny != y {
                counts[ny * width + nx] = UInt8(Int(counts[ny * width + nx]) + delta)
            }
        }
        switch state[cell] {
        case SolverCore.unknown:
            let holding = takeSets(containing: cell)
            for k in 0..<holding.count {
                let s = holding[k]
                setTable[Int(s)].mines += Int32(delta)
                addTodo(s)
            }
        case SolverCore.opened where delta > 0:
            // A known safe square became a mine: it is known as a mine now.
            state[cell] = SolverCore.knownMine
            openedCount -= 1
            knownMineCount += 1
        case SolverCore.knownMine where delta < 0:
            // A known mine was cleared: open it and take in its number.
            state[cell] = SolverCore.opened
            openedCount += 1
            knownMineCount -= 1
            squareQueue.append(Int32(cell))
        default:
            break
        }
    }
}
