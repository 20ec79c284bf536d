// The solver's constraint sets: each a 3×3 bit mask anchored on the board
// with the number of mines it holds, kept as entries of one list with a
// free list and an index by anchor, so that every step of the deductive loop is local.

/// One constraint set: the cells of the 3×3 window anchored at (`ax`,
/// `ay`) whose bits are in `mask`, holding `mines` mines. Its fields sit
/// together, so that a step reads and writes one entry, not seven lists.
struct ConstraintSet {
    var ax: Int32
    var ay: Int32
    var mask: UInt16
    var inTodo = false
    var mines: Int32
    /// The next set at the same anchor, −1 at the end.
    var next: Int32 = -1
    /// The position in `liveSets`, −1 when free.
    var livePos: Int32 = -1

    init(ax: Int32, ay: Int32, mask: UInt16, mines: Int32) {
        self.ax = ax
        self.ay = ay
        self.mask = mask
        self.mines = mines
    }
}

extension SolverCore {
    /// Adds a set given in board coordinates (anchor may be off the board
    /// before normalising), merging it with an identical one.
    @discardableResult
    mutating func addSet(ax: Int, ay: Int, mask: UInt16, mines m: Int) -> Int32? {
        guard mask != 0 else { return nil }
        var ax = ax, ay = ay, mask = mask
        // Normalise: the top row and the left column of the window are used.
        while mask & 0b000_000_111 == 0 { mask >>= 3; ay += 1 }
        while mask & 0b001_001_001 == 0 { mask = (mask >> 1) & 0b011_011_011; ax += 1 }
        let anchor = ay * width + ax
        var s = anchorHead[anchor]
        while s >= 0 {
            if setTable[Int(s)].mask == mask { return nil }
            s = setTable[Int(s)].next
        }
        let entry = ConstraintSet(ax: Int32(ax), ay: Int32(ay), mask: mask, mines: Int32(m))
        let id: Int32
        if let free = freeSets.popLast() {
            id = free
            setTable[Int(id)] = entry
        } else {
            id = Int32(setTable.count)
            setTable.append(entry)
        }
        setTable[Int(id)].next = anchorHead[anchor]
        anchorHead[anchor] = id
        setTable[Int(id)].livePos = Int32(liveSets.count)
        liveSets.append(id)
        addTodo(id)
        return id
    }

    mutating func addTodo(_ id: Int32) {
        if !setTable[Int(id)].inTodo {
            setTable[Int(id)].inTodo = true
            setTodo.append(id)
        }
    }

    mutating func removeSet(_ id: Int32) {
        let i = Int(id)
        guard setTable[i].livePos >= 0 else { return }
        let anchor = Int(setTable[i].ay) * width + Int(setTable[i].ax)
        if anchorHead[anchor] == id {
            anchorHead[anchor] = setTable[i].next
        } else {
            var s = anchorHead[anchor]
            while s >= 0 {
                if setTable[Int(s)].next == id {
                    setTable[Int(s)].next = setTable[i].next
                    break
                }
                s = setTable[Int(s)].next
            }
        }
        let pos = Int(setTable[i].livePos)
        let last = liveSets.removeLast()
        if last != id {
            liveSets[pos] = last
            setTable[Int(last)].livePos = Int32(pos)
        }
        setTable[i].livePos = -1
        freeSets.append(id)
    }

    func isLive(_ id: Int32) -> Bool { setTable[Int(id)].livePos >= 0 }

    /// Calls `body` with each live set whose window could overlap the 3×3
    /// window anchored at (x, y) shifted by `reach` (2 for a window, 0...2
    /// for a single square handled by the caller).
    func forEachSet(anchorsX xs: ClosedRange<Int>, anchorsY ys: ClosedRange<Int>, _ body: (Int32) -> Void) {
        let x0 = max(0, xs.lowerBound), x1 = min(width - 1, xs.upperBound)
        let y0 = max(0, ys.lowerBound), y1 = min(height - 1, ys.upperBound)
        guard x0 <= x1, y0 <= y1 else { return }
        for y in y0...y1 {
            for x in x0...x1 {
                var s = anchorHead[y * width + x]
                while s >= 0 {
                    body(s)
                    s = setTable[Int(s)].next
                }
            }
        }
    }

    /// The live sets containing the square at `cell`, in the solver's kept
    /// list (``scratchSets``), valid until the next call.
    mutating func takeSets(containing cell: Int) -> SolverList<Int32> {
        var found = scratchSets
        found.removeAll()
        sets(containing: cell, into: &found)
        scratchSets = found
        return found
    }

    /// Appends the live sets containing the square at `cell` to `found`.
    func sets(containing cell: Int, into found: inout SolverList<Int32>) {
        let x = cell % width, y = cell / width
        forEachSet(anchorsX: (x - 2)...x, anchorsY: (y - 2)...y) { s in
            let set = setTable[Int(s)]
            let dx = x - Int(set.ax), dy = y - Int(set.ay)
            if dx <= 2 && dy <= 2 && set.mask & (1 << UInt16(dy * 3 + dx)) != 0 { found.append(s) }
        }
    }

    /// Calls `body` with each board cell of a set's window mask.
    @inline(__always)
    func forEachCell(ax: Int, ay: Int, mask: UInt16, _ body: (Int) -> Void) {
        var m = mask
        while m != 0 {
            let b = m.trailingZeroBitCount
            m &= m - 1
            body((ay + b / 3) * width + ax + b % 3)
        }
    }
}
