// The solver's constraint sets: each a 3×3 bit mask anchored on the board
// with the number of mines it holds, kept in flat arrays with a free list
// and an index by anchor, so that every step of the deductive loop is local.

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
            if setMask[Int(s)] == mask { return nil }
            s = setNext[Int(s)]
        }
        let id: Int32
        if let free = freeSets.popLast() {
            id = free
            setAX[Int(id)] = Int32(ax)
            setAY[Int(id)] = Int32(ay)
            setMask[Int(id)] = mask
            setMines[Int(id)] = Int32(m)
            setInTodo[Int(id)] = false
        } else {
            id = Int32(setAX.count)
            setAX.append(Int32(ax))
            setAY.append(Int32(ay))
            setMask.append(mask)
            setMines.append(Int32(m))
            setNext.append(-1)
            setLivePos.append(-1)
            setInTodo.append(false)
        }
        setNext[Int(id)] = anchorHead[anchor]
        anchorHead[anchor] = id
        setLivePos[Int(id)] = Int32(liveSets.count)
        liveSets.append(id)
        addTodo(id)
        return id
    }

    mutating func addTodo(_ id: Int32) {
        if !setInTodo[Int(id)] {
            setInTodo[Int(id)] = true
            setTodo.append(id)
        }
    }

    mutating func removeSet(_ id: Int32) {
        let i = Int(id)
        guard setLivePos[i] >= 0 else { return }
        let anchor = Int(setAY[i]) * width + Int(setAX[i])
        if anchorHead[anchor] == id {
            anchorHead[anchor] = setNext[i]
        } else {
            var s = anchorHead[anchor]
            while s >= 0 {
                if setNext[Int(s)] == id {
                    setNext[Int(s)] = setNext[i]
                    break
                }
                s = setNext[Int(s)]
            }
        }
        let pos = Int(setLivePos[i])
        let last = liveSets.removeLast()
        if last != id {
            liveSets[pos] = last
            setLivePos[Int(last)] = Int32(pos)
        }
        setLivePos[i] = -1
        freeSets.append(id)
    }

    func isLive(_ id: Int32) -> Bool { setLivePos[Int(id)] >= 0 }

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
                    s = setNext[Int(s)]
                }
            }
        }
    }

    /// The live sets containing the square at `cell`, in the solver's kept
    /// list (``scratchSets``): give it back with ``recycle(_:)``.
    mutating func takeSets(containing cell: Int) -> [Int32] {
        var found: [Int32] = []
        swap(&found, &scratchSets)
        sets(containing: cell, into: &found)
        return found
    }

    /// Empties a list ``takeSets(containing:)`` gave and keeps it for the next.
    mutating func recycle(_ list: inout [Int32]) {
        list.removeAll(keepingCapacity: true)
        swap(&list, &scratchSets)
    }

    /// Appends the live sets containing the square at `cell` to `found`.
    func sets(containing cell: Int, into found: inout [Int32]) {
        let x = cell % width, y = cell / width
        forEachSet(anchorsX: (x - 2)...x, anchorsY: (y - 2)...y) { s in
            let dx = x - Int(setAX[Int(s)]), dy = y - Int(setAY[Int(s)])
            if dx <= 2 && dy <= 2 && setMask[Int(s)] & (1 << UInt16(dy * 3 + dx)) != 0 { found.append(s) }
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
