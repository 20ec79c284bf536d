/// A catch-up read away from the replica: a sleeping game whose ops the
/// peer lacks, read back on another thread.
public struct CatchUp: Sendable {
    /// The game.
    public let game: GameID
    /// What the peer holds of it.
    public let after: VersionVector

    /// The segments the peer lacks, from `woken` (the game rebuilt by a
    /// ``WakeJob``).
    public func segments(of woken: GameReplica) -> [OpSegment] {
        woken.segments(after: after)
    }
}

extension SyncSession {
    /// Messages that carry `segments` (a catch-up read elsewhere) to the
    /// peer, noted as sent, as a summary's answer carries them.
    public mutating func carrying(_ segments: [OpSegment], replica: Replica) -> [SyncMessage] {
        messages(carrying: segments, replica: replica)
    }
}
