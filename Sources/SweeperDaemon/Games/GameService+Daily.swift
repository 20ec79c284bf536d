import FoundationEssentials
import Logging
import NIOCore
import SweeperConventions
import SweeperCrypto
import SweeperGame
import SweeperStore
import SweeperSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The boards of the day: each player's own, made from the day and the
/// circle key in force that day, and the day's results and streaks.
extension GameService {
    /// This player's board of `day` in the circle whose keys are `keys`:
    /// the one it began (the first, if a device apart began another), else
    /// a new one, derived from the key in force that day and the day
    /// (``DailyBoard``). Returns the game and whether it was made now.
    func dailyGame(day: Int, keys: DailyKeys, as player: SigningIdentity? = nil) throws -> (GameReplica, GameState, made: Bool) {
        let me = author(0, player).identity.peerID
        if let own = try dailyGames(of: day, keys: keys).first(where: { $0.state.creator == me }),
            let (_, replica) = engine.game(own.state.gameID)
        {
            return (replica, own.state, false)
        }
        guard let board = dailyBoards(day: day, keys: keys).first, keys.key(for: day) != nil else {
            throw GameServiceError.generationFailed(
                "the board of \(DailyBoard.date(of: day)) is made with a circle key this device does not hold; link with a member to get it")
        }
        let (replica, state) = try newGame(board.parameters, seed: board.seed, questionMarks: false, daily: day, as: player)
        return (replica, state, true)
    }

    /// The boards that count as `day`'s (``DailyBoard/boards(day:keys:)``),
    /// the one made with that day's key first; made once per key.
    func dailyBoards(day: Int, keys: DailyKeys) -> [GeneratedBoard] {
        let tag = keys.first.tag
        if dailyBoards.tag != tag { dailyBoards = (tag, [:]) }
        // A key learnt later (or a rekey that came late) makes them again.
        let key = keys.key(for: day)?.tag ?? "none \(keys.epoch(for: day))"
        if let held = dailyBoards.boards[day], held.key == key { return held.boards }
        let boards = (try? DailyBoard.boards(day: day, keys: keys)) ?? []
        dailyBoards.boards[day] = (key, boards)
        return boards
    }

    /// The boards of `day` held here, one per player (the first each began,
    /// by start time then id): the games whose creator said they are that
    /// day's board and whose layout is it.
    func dailyGames(of day: Int, keys: DailyKeys) throws -> [(replica: GameReplica, state: GameState)] {
        try reloadIfPending()
        var firsts: [PeerID: (replica: GameReplica, state: GameState)] = [:]
        let candidates = engine.games.filter { $0.circle == 0 && $0.state.dailyDay == day && !$0.state.isPrivate }
        guard !candidates.isEmpty else { return [] }
        let boards = dailyBoards(day: day, keys: keys)
        guard !boards.isEmpty else { return [] }
        for g in candidates {
            // Read without waking it: a streak looks at many days' boards.
            guard let (_, replica) = engine.awakened(g.state.gameID), let state = replica.state,
                boards.contains(where: { DailyBoard.matches(state.genesis, $0) })
            else { continue }
            let creator = state.creator
            if let held = firsts[creator], (held.state.startMillis, held.state.gameID) <= (state.startMillis, state.gameID) { continue }
            firsts[creator] = (replica, state)
        }
        return firsts.values.sorted { ($0.state.startMillis, $0.state.gameID) < ($1.state.startMillis, $1.state.gameID) }
    }

    /// The longest streak counted, in days (ten years).
    static let longestStreak = 3_660

    /// Each player's run of days with the board of the day won, up to
    /// `day`: from `day` back, or from the day before while `day`'s is not
    /// won yet (a streak lasts until a whole day passes without a win).
    func dailyStreaks(to day: Int, keys: DailyKeys) throws -> [PeerID: Int] {
        var winners: [Int: Set<PeerID>] = [:]
        func won(_ d: Int) throws -> Set<PeerID> {
            if let held = winners[d] { return held }
            let set = Set(try dailyGames(of: d, keys: keys).filter { $0.state.status == .won }.map(\.state.creator))
            winners[d] = set
            return set
        }
        // Only days with a board of the day held are looked at.
        let days = Set(engine.games.compactMap { $0.circle == 0 ? $0.state.dailyDay : nil })
        var out: [PeerID: Int] = [:]
        let today = try won(day)
        for peer in today.union(try won(day - 1)) {
            var d = today.contains(peer) ? day : day - 1
            var n = 0
            while n < Self.longestStreak, days.contains(d), try won(d).contains(peer) {
                n += 1
                d -= 1
            }
            out[peer] = n
        }
        return out
    }
}
