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
