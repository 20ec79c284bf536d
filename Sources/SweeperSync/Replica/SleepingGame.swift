import SweeperCrypto
import SweeperGame

/// What a listing of games reads of one game, without its board: enough to
/// list, find and sort games and to tell who plays them, whether the game is
/// awake (its ``GameState`` held) or asleep (see ``SleepingGame``).
public struct GameOverview: Sendable, Equatable {
    /// The game.
    public let gameID: GameID
    /// Who created it.
    public let creator: PeerID
    /// Its size and mines.
    public let parameters: GameParameters
    /// When it was created (ms since 1970, the creator's clock).
    public let startMillis: UInt64
    /// Playing, won or lost.
    public let status: GameStatus
    /// Whether the circle archived it.
    public let isArchived: Bool
    /// The devices the creator chose to move; `nil` when every member may.
    public let players: Set<PeerID>?
    /// The board of the day it plays, if any.
    public let dailyDay: Int?
    /// Whether it is a private game.
    public let isPrivate: Bool
    /// Whether it is a race.
    public let isRace: Bool
    /// Whether its seed was chosen (practice: never a record).
    public let isSeeded: Bool
    /// What a peer must read to be sent it.
    public let features: GameFeatures
    /// Every author of an op in it, in order.
    public let authors: [PeerID]
    /// The share of safe cells revealed on the board its reader sees (in
    /// a race, the reader's own board, else the creator's).
    public let progress: Double
    /// When it ended (see ``GameState/endMillis``), if it did.
    public let endMillis: UInt64?
    /// Whether someone asked for a hint or looked at the mines.
    public let isAssisted: Bool
    /// The share of safe cells revealed on the creator's board (what a
    /// description of the game to a peer says).
    public let creatorProgress: Double

    /// Whether `peer` may move: every member, unless the creator chose the
    /// players or the game is its board of the day (then the creator alone).
    public func mayMove(_ peer: PeerID) -> Bool {
        if dailyDay != nil { return peer == creator }
        return players?.contains(peer) ?? true
    }

    /// The overview of `game`, once its state is known and read here.
    public init?(_ game: GameReplica) {
        guard let state = game.state else { return nil }
        self.init(state, authors: game.authors, reader: game.reader?.peerID)
    }

    /// The overview of `state`, whose ops `authors` made, as `reader` sees it.
    public init(_ state: GameState, authors: [PeerID], reader: PeerID?) {
        self.authors = authors
        progress = state.shown(to: reader ?? state.creator).board.progress
        creatorProgress = state.board.progress
        endMillis = state.endMillis
        isAssisted = state.isAssisted
        gameID = state.gameID
        creator = state.creator
        parameters = state.genesis.parameters
        startMillis = state.startMillis
        status = state.status
        isArchived = state.isArchived
        players = state.players
        dailyDay = state.dailyDay
        isPrivate = state.isPrivate
        isRace = state.isRace
        isSeeded = state.isSeeded
        features = state.features
    }
}

/// A game let go of memory (see ``Replica/sleep(_:)``): everything it
/// held is in the store, and only what sync, listings and the rules of
/// the replica read without its board stays here. It is woken (rebuilt
/// from the store) by anything that reads or changes more.
///
/// A game may sleep when the store holds every op it accepted and no op
/// waits for a gap: nothing that exists only in memory is lost, and waking
/// it rebuilds the same game. Ops held without a signature (live pushes
/// from their authors' links, see ``Replica/insert(vouched:)``) are stored
/// so, and come back so, as after a restart.
public struct SleepingGame: Sendable {
    /// Author → highest contiguous seq accepted (as ``GameReplica/vector``).
    public let vector: VersionVector
    /// What listings read; `nil` for a private game this device does not play.
    public let overview: GameOverview?
    /// A private game's creator, players and key; `nil` for an open game.
    public let privateHeader: PrivateGameHeader?
    /// Authors shown to have signed two ops at one place.
    public internal(set) var equivocators: Set<PeerID>
    /// The chains whose newest ops no signature covers yet: author → the
    /// newest seq (as ``GameReplica/unsignedHeads``).
    public let unsignedHeads: [PeerID: UInt64]

    init(_ game: GameReplica) {
        vector = game.vector
        overview = GameOverview(game)
        privateHeader = game.privateHeader
        equivocators = game.equivocators
        unsignedHeads = game.unsignedHeads
    }

    init(
        vector: VersionVector, overview: GameOverview?, privateHeader: PrivateGameHeader?, equivocators: Set<PeerID>,
        unsignedHeads: [PeerID: UInt64]
    ) {
        self.vector = vector
        self.overview = overview
        self.privateHeader = privateHeader
        self.equivocators = equivocators
        self.unsignedHeads = unsignedHeads
    }

    /// Every author with an accepted op.
    public var authors: [PeerID] { vector.heads.keys.sorted() }

    /// The number of accepted ops.
    public var opCount: Int { Int(clamping: vector.opCount) }
}

extension Replica {
    /// Lets `game` go of memory (see ``SleepingGame``) when it may sleep:
    /// the replica reads back ops from an archive, the store holds every op
    /// of the game, and nothing waits.
    /// Returns whether it sleeps now.
    @discardableResult
    public mutating func sleep(_ game: GameID) -> Bool {
        guard archive != nil, let held = games[game], held.maySleep else { return sleeping[game] != nil }
        sleeping[game] = SleepingGame(held)
        games[game] = nil
        return true
    }

    /// What `game` would keep if it went to sleep now (see ``sleep(_:)``),
    /// without letting it go: its sleeping form when it sleeps, or when it
    /// is awake and may sleep; `nil` otherwise.
    public func sleepingForm(of game: GameID) -> SleepingGame? {
        if let asleep = sleeping[game] { return asleep }
        guard archive != nil, let held = games[game], held.maySleep else { return nil }
        return SleepingGame(held)
    }

    /// Holds `game` asleep as `asleep` says (a snapshot the store kept),
    /// without reading its ops; returns whether it does. Refused when
    /// nothing holds the replica's ops, or the game is held already.
    @discardableResult
    public mutating func holdAsleep(_ game: GameID, _ asleep: SleepingGame) -> Bool {
        guard archive != nil, games[game] == nil, sleeping[game] == nil else { return false }
        if let overview = asleep.overview, overview.gameID != game { return false }
        sleeping[game] = asleep
        return true
    }

    /// Puts to sleep every game that may sleep except the `awake` most
    /// recently used (see ``use(_:)``); returns how many went to sleep.
    @discardableResult
    public mutating func sleepIdle(keepingAwake awake: Int) -> Int {
        guard archive != nil, games.count > awake else { return 0 }
        let idle = games.keys.sorted { (lastUse[$0] ?? 0, $0) > (lastUse[$1] ?? 0, $1) }.dropFirst(awake)
        var slept = 0
        for id in idle where sleep(id) { slept += 1 }
        return slept
    }

    /// Notes that `game` was used now: it is among the last to sleep.
    public mutating func use(_ game: GameID) {
        useCounter &+= 1
        lastUse[game] = useCounter
    }

    /// Wakes `game` when it sleeps: rebuilt from the store, it is held as
    /// it was. Returns `false` when it sleeps and could not be read back
    /// (counted in ``archiveFaults``; it stays asleep).
    @discardableResult
    public mutating func wake(_ game: GameID) -> Bool {
        guard sleeping[game] != nil else {
            if games[game] != nil { use(game) }
            return true
        }
        use(game)
        if let budget = wakeBudget, let asleep = sleeping[game] {
            // Past what one message may read back here: woken elsewhere (``wakeJob(for:)``).
            guard asleep.opCount <= budget else {
                deferredWakes.insert(game)
                return false
            }
            wakeBudget = budget - asleep.opCount
        }
        guard let woken = awakened(game) else {
            archiveFaults += 1
            return false
        }
        sleeping[game] = nil
        games[game] = woken
        return true
    }

    /// `game` rebuilt from the store when it sleeps, without waking it
    /// here (a listing reads it and lets it go); the held game when it is
    /// awake; `nil` when it is not held or cannot be read back.
    public func awakened(_ game: GameID) -> GameReplica? {
        if let held = games[game] { return held }
        return wakeJob(for: game)?.run()
    }

    /// `asleep` (`game`) rebuilt from `archive`; `nil` when it cannot be read back.
    static func rebuild(
        _ game: GameID, _ asleep: SleepingGame, circle: CircleKey, archive: any OpArchive, readers: [SigningIdentity], recentOpsKept: Int
    ) -> GameReplica? {
        // A frozen board that matches the sleeping game: read back, not replayed.
        if let frozen = archive.frozenBoard(of: game, circle: circle),
            var thawed = GameReplica.thawed(frozen, game: game, readers: readers, archive: archive, recentOpsKept: recentOpsKept),
            thawed.vector == asleep.vector, thawed.unsignedHeads == asleep.unsignedHeads
        {
            for author in asleep.equivocators { thawed.noteEquivocator(author) }
            return thawed
        }
        // Each author's chain as the store gives it back, in seq order.
        var chains: [[Op]] = []
        do {
            for author in asleep.authors {
                guard let n = asleep.vector.heads[author], n > 0 else { continue }
                let chain = try archive.ops(of: game, by: author, seqs: 1...n)
                guard chain.count == Int(n), chain.first?.seq == 1, chain.last?.seq == n else { return nil }
                chains.append(chain)
            }
        } catch {
            return nil
        }
        // The genesis's chain first: every other op needs the genesis.
        if let i = chains.firstIndex(where: { $0[0].payload.isGenesis }), i > 0 { chains.insert(chains.remove(at: i), at: 0) }
        // The ops were checked when they were first accepted, and the store
        // gives back what it was given: each chain goes in as one segment up
        // to its newest signed op, vouched for by that op's signature (as in
        // a catch-up), and the ops after it as they came from their author's
        // link (as after a restart), under the rules that admitted them then.
        var rebuilt = Replica(circle: circle, archive: archive, recentOpsKept: recentOpsKept, pendingLimit: Int.max)
        rebuilt.readers = readers
        for chain in chains {
            let signed = chain.lastIndex { $0.signature != nil }.map { $0 + 1 } ?? 0
            if signed > 0 {
                guard let segment = OpSegment(verifiedOps: Array(chain[..<signed])) else { return nil }
                rebuilt.insert(segment)
            }
            for op in chain[signed...] { rebuilt.insert(vouched: op) }
        }
        rebuilt.noteEverythingStored()
        guard var woken = rebuilt.games[game], woken.vector == asleep.vector, woken.unsignedHeads == asleep.unsignedHeads else { return nil }
        for author in asleep.equivocators { woken.noteEquivocator(author) }
        return woken
    }

    /// How many ops of `game` are accepted, awake or asleep (0 when it is not held).
    public func opCount(of game: GameID) -> Int {
        games[game]?.opCount ?? sleeping[game]?.opCount ?? 0
    }

    /// Whether `game` is held, awake or asleep, with its genesis known.
    public func isKnown(_ game: GameID) -> Bool {
        games[game]?.isKnown ?? (sleeping[game] != nil)
    }

    /// Every game held with a known genesis, awake or asleep.
    public var knownGames: Set<GameID> {
        Set(games.compactMap { $0.value.isKnown ? $0.key : nil }).union(sleeping.keys)
    }

    /// What listings read of `game`, awake or asleep; `nil` when it is not
    /// held or not readable here.
    public func overview(of game: GameID) -> GameOverview? {
        if let held = games[game] { return GameOverview(held) }
        return sleeping[game]?.overview
    }

    /// The status of `game`, awake or asleep; `nil` when it is not held or
    /// not readable here.
    public func status(of game: GameID) -> GameStatus? {
        if let held = games[game] { return held.state?.status }
        return sleeping[game]?.overview?.status
    }

    /// Whether `game` is held readable here, awake or asleep.
    public func reads(_ game: GameID) -> Bool {
        games[game]?.state != nil || sleeping[game]?.overview != nil
    }

    /// What a peer must read to be sent `game`; `nil` when it is not held
    /// or not readable here.
    public func features(of game: GameID) -> GameFeatures? {
        if let held = games[game] { return held.state?.features }
        return sleeping[game]?.overview?.features
    }

    /// The players of every private game held, awake or asleep.
    public var privateGamePlayers: [GameID: Set<PeerID>] {
        var out = games.compactMapValues { $0.privateHeader?.players }
        for (id, game) in sleeping { if let players = game.privateHeader?.players { out[id] = players } }
        return out
    }

    /// The hash of `author`'s op `seq` in `game`, awake or asleep (read
    /// from the store, without waking it); `nil` when not held.
    public func hash(in game: GameID, author: PeerID, seq: UInt64) -> OpHash? {
        if let held = games[game] { return held.hash(author: author, seq: seq) }
        return op(in: game, author: author, seq: seq)?.hash
    }

    /// The accepted op of `author` at `seq` in `game`, awake or asleep (a
    /// sleeping game's read back from the store); `nil` when not held.
    public func op(in game: GameID, author: PeerID, seq: UInt64) -> Op? {
        if let held = games[game] { return held.op(author: author, seq: seq) }
        guard let asleep = sleeping[game], seq >= 1, seq <= asleep.vector[author], let archive else { return nil }
        return (try? archive.ops(of: game, by: author, seqs: seq...seq))?.first
    }
}
