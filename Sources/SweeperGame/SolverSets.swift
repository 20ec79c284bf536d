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
        let (ax, ay, mask) = Self.normalized(ax: ax, ay: ay, mask: mask)
        let anchor = ay &* width &+ ax
        if holds(mask, at: anchor) { return nil }
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
        anchorBits[ay &* anchorWords &+ ax >> 6] |= 1 &<< UInt64(truncatingIfNeeded: ax & 63)
        setTable[Int(id)].livePos = Int32(liveSets.count)
        liveSets.append(id)
        addTodo(id)
        return id
    }

    /// A set's window moved so that its top row and its left column are
    /// used (`mask` is not empty).
    @inline(__always)
    static func normalized(ax: Int, ay: Int, mask: UInt16) -> (ax: Int, ay: Int, mask: UInt16) {
        var ax = ax, ay = ay, mask = mask
        while mask & 0b000_000_111 == 0 { mask >>= 3; ay &+= 1 }
        while mask & 0b001_001_001 == 0 { mask = (mask >> 1) & 0b011_011_011; ax &+= 1 }
        return (ax, ay, mask)
    }

    /// Whether a live set at `anchor` has this (normalised) mask.
    @inline(__always)
    func holds(_ mask: UInt16, at anchor: Int) -> Bool {
        var s = anchorHead[anchor]
        while s >= 0 {
            if setTable[Int(s)].mask == mask { return true }
            s = setTable[Int(s)].next
        }
        return false
    }

    /// Puts in place of the live set `id` the set given in board
    /// coordinates (a square of it became known): the same as
    /// ``removeSet(_:)`` then ``addSet(ax:ay:mask:mines:)``, which takes the
    /// id just freed, and leaves the lists in the same order, so that the
    /// solver takes the same steps, but done in place.
    mutating func replaceSet(_ id: Int32, ax: Int, ay: Int, mask: UInt16, mines m: Int) {
        guard mask != 0 else { return removeSet(id) }
        let (ax, ay, mask) = Self.normalized(ax: ax, ay: ay, mask: mask)
        let anchor = ay &* width &+ ax
        // The set itself is no match: its own mask lost a square.
        if holds(mask, at: anchor) { return removeSet(id) }
        let i = Int(id)
        let old = setTable[i]
        let oldAnchor = Int(old.ay) &* width &+ Int(old.ax)
        // At the head of its anchor's chain it stays there; elsewhere it goes to the head of the new one.
        if oldAnchor != anchor || anchorHead[anchor] != id {
            unlink(id, from: oldAnchor, ax: Int(old.ax), ay: Int(old.ay))
            setTable[i].next = anchorHead[anchor]
            anchorHead[anchor] = id
            anchorBits[ay &* anchorWords &+ ax >> 6] |= 1 &<< UInt64(truncatingIfNeeded: ax & 63)
        }
        // Removed, it would leave the last live set in its place, and be added at the end.
        let pos = Int(old.livePos), end = liveSets.count &- 1
        if pos != end {
            let last = liveSets[end]
            liveSets[pos] = last
            setTable[Int(last)].livePos = Int32(truncatingIfNeeded: pos)
            liveSets[end] = id
        }
        setTable[i].ax = Int32(truncatingIfNeeded: ax)
        setTable[i].ay = Int32(truncatingIfNeeded: ay)
        setTable[i].mask = mask
        setTable[i].mines = Int32(truncatingIfNeeded: m)
        setTable[i].livePos = Int32(truncatingIfNeeded: end)
        // Added anew, it is to do again, once more even if it waits already.
        setTable[i].inTodo = true
        setTodo.append(id)
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
        let ax = Int(setTable[i].ax), ay = Int(setTable[i].ay)
        unlink(id, from: ay &* width &+ ax, ax: ax, ay: ay)
        let pos = Int(setTable[i].livePos)
        let last = liveSets.removeLast()
        if last != id {
            liveSets[pos] = last
            setTable[Int(last)].livePos = Int32(pos)
        }
        setTable[i].livePos = -1
        freeSets.append(id)
    }

    /// Takes set `id` out of the chain of its anchor (at `ax`, `ay`).
    @inline(__always)
    mutating func unlink(_ id: Int32, from anchor: Int, ax: Int, ay: Int) {
        if anchorHead[anchor] == id {
            anchorHead[anchor] = setTable[Int(id)].next
            if anchorHead[anchor] < 0 { anchorBits[ay &* anchorWords &+ ax >> 6] &= ~(1 &<< UInt64(truncatingIfNeeded: ax & 63)) }
        } else {
            var s = anchorHead[anchor]
            while s >= 0 {
                if setTable[Int(s)].next == id {
                    setTable[Int(s)].next = setTable[Int(id)].next
                    return
                }
                s = setTable[Int(s)].next
            }
        }
    }

    func isLive(_ id: Int32) -> Bool { setTable[Int(id)].livePos >= 0 }

    /// Calls `body` with each live set whose window could overlap the 3×3
    /// window anchored at (x, y) shifted by `reach` (2 for a window, 0...2
    /// for a single square handled by the caller).
    @inline(__always)
    func forEachSet(anchorsX xs: ClosedRange<Int>, anchorsY ys: ClosedRange<Int>, _ body: (Int32) -> Void) {
        let x0 = max(0, xs.lowerBound), x1 = min(width &- 1, xs.upperBound)
        let y0 = max(0, ys.lowerBound), y1 = min(height &- 1, ys.upperBound)
        guard x0 <= x1, y0 <= y1 else { return }
        assert(x1 - x0 < 5, "a window of the solver is at most 5 anchors wide")
        // Wrapping arithmetic: every index here is within the board. The
        // window is at most 5 anchors wide: its bits of a row are in one
        // word, or the end of one and the start of the next.
        let word = x0 >> 6, shift = UInt64(truncatingIfNeeded: x0 & 63)
        let spills = word &+ 1 < anchorWords && shift > 59
        let window: UInt64 = (1 &<< UInt64(truncatingIfNeeded: x1 &- x0 &+ 1)) &- 1
        var y = y0
        while y <= y1 {
            let bitsAt = y &* anchorWords &+ word
            var held = anchorBits[bitsAt] &>> shift
            if spills { held |= anchorBits[bitsAt &+ 1] &<< (64 &- shift) }
            held &= window
            let row = y &* width &+ x0
            while held != 0 {
                var s = anchorHead[row &+ held.trailingZeroBitCount]
                held &= held &- 1
                while s >= 0 {
                    body(s)
                    s = setTable[Int(s)].next
                }
            }
            y &+= 1
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
    /// Always inlined: a call would copy the solver's state, a borrowed
    /// `self` of the mutating step that asks.
    @inline(__always)
    func sets(containing cell: Int, into found: inout SolverList<Int32>) {
        let x = cell % width, y = cell / width
        forEachSet(anchorsX: (x &- 2)...x, anchorsY: (y &- 2)...y) { s in
            let set = setTable[Int(s)]
            let dx = x &- Int(set.ax), dy = y &- Int(set.ay)
            if dx <= 2 && dy <= 2 && set.mask & (1 &<< UInt16(truncatingIfNeeded: dy &* 3 &+ dx)) != 0 { found.append(s) }
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
