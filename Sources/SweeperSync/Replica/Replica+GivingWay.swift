import SweeperCrypto

/// Ops held on their author's link's word that give way (see
/// ``InsertOutcome/replaced`` and `SyncSession+Provisional.swift`).
extension Replica {
    /// How many times one author's ops may give way here in a run: what an
    /// author that stops before its commits leaves behind, many times
    /// over. Past it they are held as two ops at one place always were
    /// (each time reads the game back whole, which a member in bad faith
    /// should not make a peer do without end).
    public static let giveWayLimit = 16

    /// Whether `author`'s ops held unsigned may still give way here.
    public func mayGiveWay(_ author: PeerID) -> Bool { gaveWay[author, default: 0] < Self.giveWayLimit }

    /// Lets held ops that no signature covers give way to `op`, whose
    /// signature (or its author's link) was checked
    /// (``GameReplica/giveWay(to:)``); false when the game's ops could not
    /// be read back to do so (nothing changed).
    mutating func giveWay(to op: Op, _ outcome: inout InsertOutcome) -> Bool {
        guard mayGiveWay(op.author) else { return true }
        do {
            if let gone = try games[op.gameID]?.giveWay(to: op), !gone.isEmpty {
                outcome.noteReplaced(gone)
                gaveWay[op.author, default: 0] += 1
            }
            return true
        } catch {
            archiveFaults += 1
            return false
        }
    }

    /// Drops `author`'s ops of `game` after `kept` (`nil`: after its last
    /// signed op) when no signature covers the first of them: its author
    /// says its chain is otherwise, so they are ops it pushed live and
    /// never kept. They come back in ``InsertOutcome/replaced``; nothing
    /// goes when a signature covers that op, or the game cannot be woken
    /// now (the author's next word tries again).
    public mutating func dropUnsigned(of author: PeerID, in game: GameID, keeping kept: UInt64?) -> InsertOutcome {
        var outcome = InsertOutcome()
        guard mayGiveWay(author) else { return outcome }
        if let asleep = sleeping[game] {
            guard asleep.unsignedHeads[author] != nil, asleep.vector[author] > kept ?? 0 else { return outcome }
        }
        guard wake(game), let held = games[game] else { return outcome }
        // Ops that wait (after a gap, or before the genesis) were never applied: let go of.
        if let kept { games[game]?.dropWaiting(of: author, after: kept, unsignedOnly: true) }
        guard let first = kept.map({ $0 + 1 }) ?? held.firstUnsigned(of: author), first >= 1, held.isUnsigned(author: author, seq: first) else {
            return outcome
        }
        do {
            if let gone = try games[game]?.truncate(author, keeping: first - 1), !gone.isEmpty {
                outcome.noteReplaced(gone)
                gaveWay[author, default: 0] += 1
            }
        } catch {
            archiveFaults += 1
        }
        return outcome
    }
}
