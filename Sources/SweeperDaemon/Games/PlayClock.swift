import FoundationEssentials
import Logging
import SweeperCrypto
import SweeperMessages
import SweeperNet
import SweeperStore
import SweeperSync
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where this player's signed shares of played time go: to the peers that
/// may see each one's game (the peers' `NoteGossip` spreads them).
protocol PlayNoteSink: Sendable {
    /// Sends `note` to every link that may see its game.
    func spread(_ note: PlayNote)
}

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

/// This daemon's side of played time (see ``PlayLedger``): it hears this
/// player's moves and viewer keys (from the game service and the presence
/// service), counts, signs this player's share of each game it plays as a
/// ``PlayNote``, keeps it (without an fsync) and sends it to every linked
/// peer that understands it, and keeps the shares peers send. The game
/// service asks it for each game's time.
final class PlayClock: Sendable {
    /// One ledger per player of this daemon: its own (which keeps every
    /// share, and answers for played time) and each hosted player's.
    private struct Ledgers {
        var main: PlayLedger
        var hosted: [PeerID: PlayLedger] = [:]

        /// Takes a share into every ledger; whether the main one took it.
        mutating func take(_ note: PlayNote) -> Bool {
            guard main.take(note) else { return false }
            for (key, var ledger) in hosted {
                ledger.take(note)
                hosted[key] = ledger
            }
            return true
        }
    }

    private let ledgers: Mutex<Ledgers>
    private let identity: SigningIdentity
    /// The players this daemon hosts: each counts and signs a share of its own.
    private let players: HostedPlayers?
    private let store: Store
    private let shares: any PlayNoteSink
    private let logger: Logger
    private let clock: any DaemonClock
    /// Games made before this (ms since 1970), with nobody's share known,
    /// keep the time from their creation to their end.
    let countedSince: UInt64

    /// A clock over the shares kept in `store`; the games of `forgotten`
    /// (forgotten on this device) keep none.
    init(
        identity: SigningIdentity, hosted: HostedPlayers? = nil, store: Store, shares: any PlayNoteSink, forgotten: Set<GameID> = [],
        clock: any DaemonClock = SystemClock(), logger: Logger
    ) {
        self.clock = clock
        self.identity = identity
        self.players = hosted
        self.store = store
        self.shares = shares
        self.logger = logger
        var ledger = PlayLedger(ownID: identity.peerID)
        for game in forgotten { ledger.forget(game) }
        for bytes in (try? store.playNotes()) ?? [] {
            // A stored share was checked when it came; one that no longer reads is passed over.
            if let note = try? PlayNote(decoding: bytes[...]), note.isAuthentic { ledger.take(note) }
        }
        self.ledgers = Mutex(Ledgers(main: ledger))
        countedSince = ((try? store.setting(Store.playTimeSinceSetting)) ?? nil).flatMap(UInt64.init) ?? 0
    }

    /// Seconds on the steady clock.
    private var now: Double { clock.seconds }

    private var wall: UInt64 { clock.wallMillis }

    /// Runs `body` on `player`'s ledger (nil: this daemon's own), made for
    /// a hosted player on first use from what the main ledger holds.
    private func withLedger<T>(of player: PeerID?, _ body: (inout PlayLedger) -> T) -> T {
        ledgers.withLock { l in
            guard let player, player != identity.peerID else { return body(&l.main) }
            if l.hosted[player] == nil {
                var made = PlayLedger(ownID: player)
                for game in l.main.forgotten { made.forget(game) }
                for note in l.main.shares.values.flatMap(\.values) { made.take(note) }
                for (game, chosen) in l.main.chosenPlayers { made.setPlayers(chosen, of: game) }
                for game in l.main.over { made.gameEnded(game, now: now) }
                l.hosted[player] = made
            }
            // Present: made above.
            var ledger = l.hosted.removeValue(forKey: player) ?? PlayLedger(ownID: player)
            defer { l.hosted[player] = ledger }
            return body(&ledger)
        }
    }

    /// Runs `body` on every ledger.
    private func withEveryLedger(_ body: (inout PlayLedger) -> Void) {
        ledgers.withLock { l in
            body(&l.main)
            for (key, var ledger) in l.hosted {
                body(&ledger)
                l.hosted[key] = ledger
            }
        }
    }

    /// A player of this daemon (`by`; nil: its own) moved in `game` or used
    /// a viewer of it. Nothing is signed or written here, on a move's way:
    /// the next tick does it.
    func activity(in game: GameID, by player: PeerID? = nil) {
        withLedger(of: player) { $0.activity(in: game, now: now, wall: wall) }
    }

    /// Whether the player (nil: this daemon's own) used a viewer of (or moved in) `game` lately.
    func isActive(_ game: GameID, by player: PeerID? = nil) -> Bool {
        withLedger(of: player) { $0.isActive(game, now: now) }
    }

    /// The game is over (won or lost, here or at a peer).
    func gameEnded(_ game: GameID) {
        withEveryLedger { $0.gameEnded(game, now: now) }
    }

    /// Who may move in `game` (`nil`: every member): only their viewing counts.
    func setPlayers(_ players: Set<PeerID>?, of game: GameID) {
        withEveryLedger { $0.setPlayers(players, of: game) }
    }

    /// Counts with where this daemon's players' active viewers are
    /// (`local`: the game of each one's newest active viewer) and where the
    /// others are, and signs, keeps and sends the shares that are due. The
    /// presence service calls it every 250 ms and at each change.
    func tick(local: [PeerID: GameID], others: [PeerID: GameID]) {
        let (now, wall) = (now, wall)
        ledgers.withLock { l in
            // Each player sees the others, this daemon's other players among them.
            func seen(by player: PeerID) -> [PeerID: GameID] { others.merging(local.filter { $0.key != player }) { a, _ in a } }
            l.main.tick(ownGame: local[identity.peerID], others: seen(by: identity.peerID), now: now, wall: wall)
            for (key, var ledger) in l.hosted {
                ledger.tick(ownGame: local[key], others: seen(by: key), now: now, wall: wall)
                l.hosted[key] = ledger
            }
        }
        signDue()
    }

    /// Closes every open period and signs every changed share now (when
    /// the daemon stops).
    func stop() {
        let (now, wall) = (now, wall)
        withEveryLedger { $0.tick(ownGame: nil, others: [:], now: now, wall: wall) }
        signDue(all: true)
    }

    /// Signs, keeps and sends the shares that are due, each with its player's key.
    private func signDue(all: Bool = false) {
        let (now, wall) = (now, wall)
        let notes: [PlayNote] = ledgers.withLock { l in
            func signed(_ ledger: inout PlayLedger, by signer: SigningIdentity) -> [PlayNote] {
                ledger.due(now: now, wall: wall, all: all).compactMap { due in
                    PlayNote(signing: signer, game: due.game.bytes, serial: due.serial, earlier: due.own.earlier, periods: due.own.periods)
                }
            }
            var out = signed(&l.main, by: identity)
            for (key, var ledger) in l.hosted {
                // A player no longer hosted signs nothing more.
                guard let signer = players?.player(key)?.identity else {
                    l.hosted[key] = nil
                    continue
                }
                out += signed(&ledger, by: signer)
                l.hosted[key] = ledger
            }
            for note in out { _ = l.take(note) }
            return out
        }
        for note in notes {
            keep(note)
            shares.spread(note)
        }
    }

    private func keep(_ note: PlayNote) {
        do {
            try store.savePlayNote(author: note.author.bytes, game: note.game, serial: note.serial, note: note.encoded)
        } catch {
            logger.warning("could not keep a share of played time", metadata: ["error": "\(error)"])
        }
    }

    /// Takes an authentic share from a peer: kept (and stored) when newer
    /// than the one held. Returns whether it was.
    @discardableResult
    func take(_ note: PlayNote) -> Bool {
        let taken = ledgers.withLock { l in
            l.take(note)
        }
        guard taken else { return false }
        keep(note)
        return true
    }

    /// Forgets a game's played time (this device forgets the game; the
    /// store deletes its shares), until ``follow(_:)``.
    func forget(_ game: GameID) {
        withEveryLedger { $0.forget(game) }
    }

    /// Takes a game's shares again.
    func follow(_ game: GameID) {
        withEveryLedger { $0.follow(game) }
    }

    /// Every share held.
    var allNotes: [PlayNote] {
        ledgers.withLock { l in l.main.shares.keys.sorted().flatMap { g in (l.main.shares[g] ?? [:]).values.sorted { $0.author < $1.author } } }
    }

    /// Whether this daemon's own player counts `game` now.
    func isCounting(_ game: GameID) -> Bool {
        ledgers.withLock { $0.main.counting == game }
    }

    /// A game's played time in seconds: the sum of the players' shares;
    /// for a game made before this database kept played time, of which no
    /// share is known, the time from its creation to its end (or now).
    func playedSeconds(_ state: GameState) -> Int {
        playedSeconds(state.gameID, startMillis: state.startMillis, endMillis: state.endMillis)
    }

    /// ``playedSeconds(_:)`` of a game that began at `startMillis` and
    /// ended at `endMillis` (or not yet).
    func playedSeconds(_ game: GameID, startMillis: UInt64, endMillis: UInt64?) -> Int {
        Int(playedMillis(game, startMillis: startMillis, endMillis: endMillis) / 1000)
    }

    /// ``playedSeconds(_:)`` to the millisecond: what records rank by, so
    /// that a win in under a second keeps its real time and 3BV/s.
    func playedMillis(_ state: GameState) -> UInt64 {
        playedMillis(state.gameID, startMillis: state.startMillis, endMillis: state.endMillis)
    }

    /// ``playedMillis(_:)`` of a game that began at `startMillis` and
    /// ended at `endMillis` (or not yet).
    ///
    /// A game that ended with no share known here (its players' shares
    /// have not come yet, as after `follow` of a game forgotten) counts
    /// from its start to its end: never less than it took, so it claims
    /// no record it did not set, until the shares come.
    func playedMillis(_ game: GameID, startMillis: UInt64, endMillis: UInt64?) -> UInt64 {
        if let ms = ledgers.withLock({ $0.main.playedMillis(game, now: now) }) { return ms }
        guard startMillis < countedSince || endMillis != nil else { return 0 }
        let end = endMillis ?? wall
        return end > startMillis ? end - startMillis : 0
    }
}
