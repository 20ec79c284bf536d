@testable import SweeperGame

/// Builds a layout from rows of `.` (safe) and `*` (mine).
func layout(_ rows: [String]) -> MineLayout {
    let geometry = BoardGeometry(width: rows[0].count, height: rows.count)
    return MineLayout(geometry: geometry, isMine: rows.flatMap { $0.map { $0 == "*" } })
}

/// Index of column `x`, row `y` on `layout`.
func at(_ layout: MineLayout, _ x: Int, _ y: Int) -> Int { layout.geometry.index(x: x, y: y) }

/// An independent flood: the cells a click on safe `start` opens, by
/// breadth-first search over zeros (ignoring marks).
func referenceFlood(_ layout: MineLayout, from start: Int) -> Set<Int> {
    var opened: Set<Int> = [start]
    var queue = [start]
    var head = 0
    while head < queue.count {
        let c = queue[head]
        head += 1
        guard layout.adjacentMines(c) == 0 else { continue }
        for nb in layout.geometry.neighbors(of: c) where !opened.contains(nb) {
            opened.insert(nb)
            queue.append(nb)
        }
    }
    return opened
}
