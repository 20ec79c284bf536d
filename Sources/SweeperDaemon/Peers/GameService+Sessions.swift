import SweeperSync

/// A peer's sync message, run in its link's session: the peer side owns
/// the sessions, and the game service only takes what they bring.
extension GameService {
    /// Handles one sync message from a peer of the current circle in its
    /// link's session: the session inserts the ops (the replica verifies
    /// each), then viewers are told, the ops are relayed and queued for
    /// writing (``take(touching:wakeBudget:now:_:)`` says how, and what the
    /// budget and `now` do).
    func receive(_ message: SyncMessage, in session: SharedSyncSession, wakeBudget: Int? = nil, now: Double? = nil) throws -> RemoteIntake {
        // Only ops bring changes to show, and only to the games they belong to.
        let touched: [GameID]
        switch message {
        case .ops(let segments): touched = segments.compactMap { $0.ops.last?.gameID }
        // Live pushes and chains name games by the link's numbers, which the session reads.
        case .live, .chains: touched = Array(session.withSession { $0.games(in: message) })
        case .summary, .summaryPart, .interest, .heads, .unsigned, .describe, .descriptions: touched = []
        }
        return try take(touching: touched, wakeBudget: wakeBudget, now: now) { replica, interest in
            session.withSession { $0.receive(message, replica: &replica, taking: interest) }
        }
    }
}
