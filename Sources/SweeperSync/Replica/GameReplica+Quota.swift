import SweeperGame

extension GameReplica {
    /// The most ops one author may write in one game of `cells` cells: four
    /// a cell (a reveal, a flag, its removal, a chord) and 1,024 more. A
    /// player's hands make far fewer; a device that writes more is in bad
    /// faith, and what it writes past this is refused (``OpRejection/overQuota``).
    public static func opQuota(cells: Int) -> UInt64 { UInt64(max(0, cells)) * 4 + 1_024 }

    /// This game's ``opQuota(cells:)``: by its board, or the largest board
    /// while its genesis is not held.
    public var opQuota: UInt64 {
        Self.opQuota(cells: state?.genesis.geometry.cellCount ?? BoardGeometry.maximumSide * BoardGeometry.maximumSide)
    }
}
