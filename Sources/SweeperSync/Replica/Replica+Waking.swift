import SweeperCrypto

/// A sleeping game to rebuild from the store away from the replica: on
/// another thread, so that a game of many ops that a peer's message needs
/// awake does not hold the thread that handles every peer. Made by
/// ``Replica/wakeJob(for:)``, run with ``run()``, and its result put in
/// with ``Replica/install(_:from:)``.
public struct WakeJob: Sendable {
    /// The game to wake.
    public let game: GameID
    let asleep: SleepingGame
    let circle: CircleKey
    let archive: any OpArchive
    let readers: [SigningIdentity]
    let recentOpsKept: Int

    /// How many ops waking the game reads back.
    public var opCount: Int { asleep.opCount }

    /// The game rebuilt from the store; `nil` when it cannot be read back.
    public func run() -> GameReplica? {
        Replica.rebuild(game, asleep, circle: circle, archive: archive, readers: readers, recentOpsKept: recentOpsKept)
    }
}

extension Replica {
    /// What waking `game` takes, to run anywhere; `nil` when it does not
    /// sleep (or nothing holds its ops).
    public func wakeJob(for game: GameID) -> WakeJob? {
        guard let asleep = sleeping[game], let archive else { return nil }
        return WakeJob(game: game, asleep: asleep, circle: circle, archive: archive, readers: readers, recentOpsKept: recentOpsKept)
    }

    /// Puts in a game `job` rebuilt, when the game still sleeps as it did
    /// when the job was made (same ops, signatures and readers); returns
    /// whether it is awake now. A game that changed meanwhile is left as
    /// it is: the next need wakes it again.
    @discardableResult
    public mutating func install(_ woken: GameReplica, from job: WakeJob) -> Bool {
        guard let asleep = sleeping[job.game], asleep.vector == job.asleep.vector, asleep.unsignedHeads == job.asleep.unsignedHeads,
            readers.map(\.peerID) == job.readers.map(\.peerID)
        else { return false }
        var woken = woken
        for author in asleep.equivocators { woken.noteEquivocator(author) }
        sleeping[job.game] = nil
        games[job.game] = woken
        use(job.game)
        return true
    }

    /// The games ``deferredWakes`` names, emptied.
    public mutating func takeDeferredWakes() -> Set<GameID> {
        defer { deferredWakes = [] }
        return deferredWakes
    }
}
