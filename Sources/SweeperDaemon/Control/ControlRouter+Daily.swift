import SweeperControl
import SweeperCrypto
import SweeperSync

/// Looking at another player's board of the day.
///
/// Every board of a day has the same mines, so another player's board of
/// today (every mine drawn once it ended, safe cells as it is played)
/// gives this player's own away. Showing or replaying it before this
/// player's own board of today has ended is asked first (`look`), and then
/// marks this player's own board as having looked at the mines, a signed
/// move every device sees: it is made first when not begun, and it stays
/// out of the records and shows assisted in the day's table.
extension ControlRouter {
    /// Checks a `show` or `replay` of `state` by the player answered for:
    /// throws `makes-practice` when it would give their board of today away
    /// and `look` is not given; with `look`, marks their board. Returns
    /// whether it marked one.
    @discardableResult
    func lookAtAnothersDaily(_ state: GameState, look: Bool) async throws -> Bool {
        let me = player.peerID
        guard let day = state.dailyDay, day == today, state.creator != me else { return false }
        let keys = members.dailyKeys
        if let mine = try await service.dailyGames(of: day, keys: keys).first(where: { $0.state.creator == me }),
            mine.state.status != .playing || mine.state.peeks[me] != nil
        {
            // Ended, or marked already: nothing more to give away.
            return false
        }
        guard look else {
            throw ControlError(
                code: "makes-practice",
                message: "that is \(views.name(of: state.creator))'s board of the day, the same board as yours: looking at it before yours "
                    + "has ended marks yours as having looked at the mines (not ranked), for everyone to see")
        }
        // Without this day's key no board of it can be made here, so none can be played either.
        guard let own = try? await service.dailyGame(day: day, keys: keys, as: hostedPlayer) else { return false }
        _ = try await service.game(own.1.gameID.description, peek: true, as: hostedPlayer)
        return true
    }
}
