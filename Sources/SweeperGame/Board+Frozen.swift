/// A board as its parts, for a replica that writes a sleeping game's board
/// down and reads it back instead of replaying the game's moves (see
/// `GameReplica.frozenBoard` in SweeperSync). The parts are the board's
/// own: read back, they make the same board, counts included.
extension Board {
    /// The board's parts: the revealed cells (one bit a cell, or the cells
    /// while few are revealed), the marks on covered cells, and the counts
    /// kept beside them.
    package var parts: Parts {
        Parts(
            revealedBits: revealedBits, revealedCells: revealedCells, marks: markedCells, revealedSafeCount: revealedSafeCount,
            flagCount: flagCount, detonatedMine: detonatedMine)
    }

    /// What ``parts`` gives.
    package struct Parts: Sendable, Equatable {
        /// One bit a cell once many are revealed; empty before.
        package var revealedBits: [UInt64]
        /// The revealed cells while ``revealedBits`` is empty.
        package var revealedCells: Set<Int32>
        /// The mark on each marked covered cell.
        package var marks: [Int32: Mark]
        /// The number of revealed safe cells.
        package var revealedSafeCount: Int
        /// The number of flags on covered cells.
        package var flagCount: Int
        /// The lowest-indexed revealed mine, if any.
        package var detonatedMine: Int?

        /// Parts as given.
        package init(
            revealedBits: [UInt64], revealedCells: Set<Int32>, marks: [Int32: Mark], revealedSafeCount: Int, flagCount: Int,
            detonatedMine: Int?
        ) {
            self.revealedBits = revealedBits
            self.revealedCells = revealedCells
            self.marks = marks
            self.revealedSafeCount = revealedSafeCount
            self.flagCount = flagCount
            self.detonatedMine = detonatedMine
        }
    }

    /// The board `parts` describe on `layout`; `nil` when they do not fit
    /// it (a bit set past the last cell, a cell out of range, a marked cell
    /// revealed, or counts that are not the parts').
    package init?(layout: MineLayout, questionMarks: Bool, parts: Parts) {
        self.init(layout: layout, questionMarks: questionMarks)
        let n = layout.geometry.cellCount
        var safe = 0, firstMine: Int?
        if parts.revealedBits.isEmpty {
            for c in parts.revealedCells {
                guard c >= 0, Int(c) < n else { return nil }
                if layout.isMine(Int(c)) { firstMine = min(firstMine ?? Int(c), Int(c)) } else { safe += 1 }
            }
        } else {
            guard parts.revealedCells.isEmpty, parts.revealedBits.count == (n + 63) / 64 else { return nil }
            if n % 64 != 0, parts.revealedBits[parts.revealedBits.count - 1] >> UInt64(n % 64) != 0 { return nil }
            for (w, word) in parts.revealedBits.enumerated() {
                let mines = word & layout.bits[w]
                if firstMine == nil, mines != 0 { firstMine = w * 64 + mines.trailingZeroBitCount }
                safe += (word & ~layout.bits[w]).nonzeroBitCount
            }
        }
        revealedBits = parts.revealedBits
        revealedCells = parts.revealedCells
        var flags = 0
        for (cell, mark) in parts.marks {
            guard cell >= 0, Int(cell) < n, mark != .none, !isRevealed(Int(cell)), mark != .question || questionMarks else { return nil }
            if mark == .flag { flags += 1 }
        }
        guard safe == parts.revealedSafeCount, flags == parts.flagCount, firstMine == parts.detonatedMine else { return nil }
        markedCells = parts.marks
        revealedSafeCount = safe
        flagCount = flags
        detonatedMine = firstMine
    }
}
