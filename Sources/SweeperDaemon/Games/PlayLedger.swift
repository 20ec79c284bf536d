import SweeperCrypto
import SweeperMessages
import SweeperSync

/// The arithmetic of played time, pure: the caller passes the times (a
/// steady clock in seconds, the wall clock in ms since 1970).
///
/// A game's time is the sum of every author's share (``PlayNote/total``).
/// This daemon's player counts a game while one of its viewers shows it
/// and was used in the last ``idleLimit`` seconds, the game is on, and no
/// player with a smaller peer id who keeps shares is counting it too (their
/// presence says they are there; a player who is idle withdraws it): so two
/// players watching together count their time once. Between two moves made
/// without a viewer (`sweeper reveal`), at most ``idleLimit`` apart, the
/// time counts as well. A period closes when the viewer goes, falls idle
/// (counting the idle limit, thinking time included) or the game ends; a
/// period still open when the daemon dies stays as last signed, at most
/// ``renewal`` seconds short.
struct PlayLedger: Sendable {
    /// Seconds without a key after which an open viewer stops counting.
    static let idleLimit: Double = 300
    /// Seconds between new signatures of an open period's share.
    static let renewal: Double = 2
    /// The most authors' shares kept for one game.
    static let authorLimit = 64

    /// This daemon's player.
    let ownID: PeerID
    /// Every author's newest share, by game (this player's included).
    private(set) var shares: [GameID: [PeerID: PlayNote]] = [:]
    /// Authors known to keep shares: they count time when present.
    private(set) var counters: Set<PeerID> = []
    /// Games that are over.
    private(set) var over: Set<GameID> = []
    /// The players of games whose creator chose them: only they count the
    /// game's time (a spectator watching alone adds none, and a player
    /// never yields to one); every member counts in the other games.
    private(set) var chosenPlayers: [GameID: Set<PeerID>] = [:]

    /// Whether `peer`'s viewing counts for `game`.
    func counts(_ peer: PeerID, in game: GameID) -> Bool { chosenPlayers[game]?.contains(peer) ?? true }

    /// Who may move in `game` (`nil`: every member).
    mutating func setPlayers(_ players: Set<PeerID>?, of game: GameID) {
        chosenPlayers[game] = players
    }

    /// This player's periods of a game, as its next share will say.
    struct Own: Sendable {
        var serial: UInt64 = 0
        var earlier: UInt64 = 0
        var periods: [PlayPeriod] = []
        var total: UInt64 { periods.reduce(earlier) { $0 + $1.length } }
    }
    private(set) var own: [GameID: Own] = [:]

    /// The period being extended (always the last of the game's own periods).
    struct Run: Sendable {
        var start: Double
        var last: Double
        /// Counted because a viewer shows the game (else: moves without one).
        var live: Bool
    }
    private(set) var runs: [GameID: Run] = [:]
    private var lastActivity: [GameID: Double] = [:]
    /// Where the other players are, as of the last tick.
    private var others: [PeerID: GameID] = [:]
    /// The game this player counts now.
    private(set) var counting: GameID?
    /// Games whose own share changed since it was last signed, and those to sign at once.
    private var dirty: Set<GameID> = []
    private var urgent: Set<GameID> = []
    private var lastSigned: [GameID: Double] = [:]

    init(ownID: PeerID) {
        self.ownID = ownID
    }

    /// Whether this player used a viewer of (or moved in) `game` in the last ``idleLimit`` seconds.
    func isActive(_ game: GameID, now: Double) -> Bool {
        lastActivity[game].map { now - $0 <= Self.idleLimit } ?? false
    }

    /// Whether a player with a smaller id, who keeps shares, is counting `game`.
    private func yields(_ game: GameID) -> Bool {
        others.contains { $0.value == game && $0.key < ownID && counters.contains($0.key) && counts($0.key, in: game) }
    }

    /// This player moved in `game` or pressed a key in a viewer of it.
    mutating func activity(in game: GameID, now: Double, wall: UInt64) {
        lastActivity[game] = now
        guard !over.contains(game), counts(ownID, in: game) else { return }
        if yields(game) {
            close(game, at: now)
            return
        }
        extend(game, now: now, wall: wall, live: false)
    }

    /// Extends the game's run to `now`, or starts a period when there is
    /// none or it ended more than ``idleLimit`` ago.
    private mutating func extend(_ game: GameID, now: Double, wall: UInt64, live: Bool) {
        var o = own[game] ?? Own()
        if var run = runs[game], now - run.last <= Self.idleLimit, let lastIndex = o.periods.indices.last {
            run.last = max(run.last, now)
            run.live = run.live || live
            runs[game] = run
            o.periods[lastIndex].length = Self.millis(run.last - run.start)
            own[game] = o
            dirty.insert(game)
            return
        }
        if o.periods.count >= PlayNote.periodLimit { o.earlier = min(o.earlier + o.periods.removeFirst().length, PlayNote.lengthLimit) }
        o.periods.append(PlayPeriod(start: wall, length: 0))
        own[game] = o
        runs[game] = Run(start: now, last: now, live: live)
        dirty.insert(game)
        urgent.insert(game)
    }

    /// Closes the game's run, a live one extended to `end` first.
    private mutating func close(_ game: GameID, at end: Double) {
        guard let run = runs.removeValue(forKey: game) else { return }
        if run.live, end > run.last, var o = own[game], let lastIndex = o.periods.indices.last {
            o.periods[lastIndex].length = Self.millis(end - run.start)
            own[game] = o
        }
        dirty.insert(game)
        urgent.insert(game)
    }

    /// Takes where this player's viewers are (`ownGame`: the game of the
    /// newest active one) and where the others are, and counts.
    mutating func tick(ownGame: GameID?, others: [PeerID: GameID], now: Double, wall: UInt64) {
        self.others = others
        let counted = ownGame.flatMap { g in !over.contains(g) && counts(ownID, in: g) && isActive(g, now: now) && !yields(g) ? g : nil }
        for (game, run) in runs where run.live && game != counted {
            // Gone idle: the time counts up to the idle limit; left or yielded: up to now.
            let idleEnd = (lastActivity[game] ?? now) + Self.idleLimit
            close(game, at: min(now, idleEnd))
        }
        for (game, run) in runs where !run.live && now - run.last > Self.idleLimit { runs[game] = nil }
        counting = counted
        if let counted { extend(counted, now: now, wall: wall, live: true) }
    }

    /// The game is over: its run closes at `now`.
    mutating func gameEnded(_ game: GameID, now: Double) {
        over.insert(game)
        close(game, at: now)
        if counting == game { counting = nil }
    }

    /// This player's shares to sign now: changed ones whose last signature
    /// is ``renewal`` seconds old, or that started or ended a period. Each
    /// gets the serial it is to carry.
    mutating func due(now: Double, wall: UInt64, all: Bool = false) -> [(game: GameID, serial: UInt64, own: Own)] {
        var out: [(GameID, UInt64, Own)] = []
        for game in dirty.sorted() where all || urgent.contains(game) || now - (lastSigned[game] ?? -.infinity) >= Self.renewal {
            guard var o = own[game] else { continue }
            o.serial = max(wall, o.serial + 1)
            own[game] = o
            lastSigned[game] = now
            dirty.remove(game)
            urgent.remove(game)
            out.append((game, o.serial, o))
        }
        return out
    }

    /// Games this device forgot: their shares are not kept.
    private(set) var forgotten: Set<GameID> = []

    /// Drops everything of a game this device forgets, and refuses its shares until followed.
    mutating func forget(_ game: GameID) {
        forgotten.insert(game)
        shares[game] = nil
        own[game] = nil
        runs[game] = nil
        lastActivity[game] = nil
        dirty.remove(game)
        urgent.remove(game)
        lastSigned[game] = nil
        // Counted as over, so a viewer still showing it does not count it again.
        over.insert(game)
        if counting == game { counting = nil }
    }

    /// Takes shares of a game again (followed after it was forgotten); it
    /// counts again unless it comes back ended.
    mutating func follow(_ game: GameID) {
        guard forgotten.remove(game) != nil else { return }
        over.remove(game)
    }

    /// Takes a share (already checked to be authentic): kept when newer
    /// than the one held. A share of this player's own, newer than what it
    /// holds (after its store lost the last ones), is taken up as its own.
    /// Shares of forgotten games are refused.
    @discardableResult
    mutating func take(_ note: PlayNote) -> Bool {
        guard let game = GameID(bytes: note.game), !forgotten.contains(game) else { return false }
        if let held = shares[game]?[note.author] {
            guard note.serial > held.serial else { return false }
        } else if shares[game, default: [:]].count >= Self.authorLimit {
            return false
        }
        shares[game, default: [:]][note.author] = note
        counters.insert(note.author)
        if note.author == ownID, runs[game] == nil, note.serial > own[game]?.serial ?? 0 {
            own[game] = Own(serial: note.serial, earlier: note.earlier, periods: note.periods)
        }
        return true
    }

    /// The game's played time in ms: every other author's share plus this
    /// player's own (as counted up to `now`); nil when nobody's is known.
    func playedMillis(_ game: GameID, now: Double) -> UInt64? {
        // Only the players' shares: a spectator's (kept by an older release) adds nothing.
        let others = shares[game]?.filter { $0.key != ownID && counts($0.key, in: game) }.values.reduce(UInt64(0)) { $0 + $1.total }
        var mine = counts(ownID, in: game) ? own[game]?.total : nil
        if let run = runs[game], run.live, var o = own[game], let lastIndex = o.periods.indices.last, now > run.last {
            o.periods[lastIndex].length = Self.millis(now - run.start)
            mine = o.total
        }
        if others == nil, mine == nil { return nil }
        return (others ?? 0) + (mine ?? 0)
    }

    static func millis(_ seconds: Double) -> UInt64 {
        seconds > 0 ? min(UInt64(seconds * 1000), PlayNote.lengthLimit) : 0
    }
}
