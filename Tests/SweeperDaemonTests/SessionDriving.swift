import SweeperSync

@testable import SweeperDaemon

/// Drives the game service with sync messages as a link's session does
/// (``SyncSessions/run(_:in:service:wakeBudget:now:)``), over a session the
/// test keeps.
extension GameService {
    /// Runs `message` in `session`, then keeps what it did to the session.
    func receive(_ message: SyncMessage, in session: inout SyncSession, now: Double? = nil) throws -> RemoteIntake {
        let link = LinkSession(session)
        defer { session = link.sync }
        return try SyncSessions.run(message, in: link, service: self, now: now)
    }

    /// Runs `message` in a new session, as from a link that just came up.
    func receive(_ message: SyncMessage, now: Double? = nil) throws -> RemoteIntake {
        var session = SyncSession()
        return try receive(message, in: &session, now: now)
    }
}
