import SweeperConventions
import SweeperCrypto
import SweeperGame

/// Why a move could not be made into an op.
public enum MoveError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The game's genesis is not known here.
    case unknownGame
    /// The cell is not on the board.
    case cellOffBoard(Int)
    /// The game is already won or lost.
    case gameOver(GameStatus)
    /// The creator chose the players, and this device is not one of them.
    case notAPlayer
    /// Only the game's creator adds players.
    case notTheCreator
    /// Every member may move in this game already: there is no list to add to.
    case everyoneMayPlay
    /// The game key of a private game cannot be sealed to this device's key.
    case notSealable(PeerID)
    /// Only a racer gives up, and only in a race.
    case notARace
    /// A race's racers are its genesis's: none are added.
    case racersAreFixed
    /// The game is another player's board of the day (its creator's daily
    /// op is in): its creator alone moves in it.
    case anothersDaily(creator: PeerID)

    public var description: String {
        switch self {
        case .unknownGame: "this game is not known here yet"
        case .cellOffBoard(let c): "cell \(c) is not on the board"
        case .gameOver(let s): "the game is over (\(s))"
        case .notAPlayer: "this device watches this game: its creator chose the players"
        case .notTheCreator: "only the game's creator adds players"
        case .everyoneMayPlay: "every member of the circle may move in this game already"
        case .notSealable(let p): "\(p) is not a key a private game's key can be sealed to"
        case .notARace: "only a racer gives up, in a race"
        case .racersAreFixed: "a race's racers are chosen when it is made"
        case .anothersDaily(let creator): "this is \(creator.shortDescription)'s board of the day: only they play it"
        }
    }
}

/// Why a new game could not be made.
public enum NewGameError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The generator found no board (no-guess generation gave up).
    case generation(GenerationError)
    /// The generated board does not make a valid genesis.
    case invalidBoard(ByteDecodingError)

    public var description: String {
        switch self {
        case .generation(let e): e.description
        case .invalidBoard(let e): e.description
        }
    }
}

/// Makes this daemon's signed ops: the genesis of a new game, and the op
/// for each player action, computed against the replica's current view.
///
/// Insert each op into the ``Replica`` (and commit it) before making the
/// next: the next op's sequence number and previous hash come from there.
public struct OpAuthor: Sendable {
    /// The signing identity (the author of every op made here).
    public let identity: SigningIdentity
    /// The circle whose membership proof the ops carry.
    public let circle: CircleKey

    /// An author for `identity` in `circle`.
    public init(identity: SigningIdentity, circle: CircleKey) {
        self.identity = identity
        self.circle = circle
    }

    /// The genesis op of a new game with this board; its game id is
    /// derived from it (``Genesis/gameID(creator:)``).
    ///
    /// - Parameters:
    ///   - layout: the generated mines (`Generator.generate(parameters, seed:).layout`).
    ///   - seed: the generator seed, recorded so the board can be reproduced.
    ///   - createdAtMillis: now, in ms since 1970.
    ///   - players: who may move besides this author; `nil` (the default) lets every member.
    ///   - race: whether this author and `players` race, each on a board of
    ///     their own (`players` must be given).
    /// - Throws: when the layout does not fit the parameters or the start holds a mine.
    public func genesis(
        parameters: GameParameters, layout: MineLayout, seed: UInt64, questionMarks: Bool,
        createdAtMillis: UInt64, players: Set<PeerID>? = nil, race: Bool = false
    ) throws(ByteDecodingError) -> Op {
        let g = try Genesis(
            parameters: parameters, layout: layout, questionMarks: questionMarks, seed: seed, createdAtMillis: createdAtMillis,
            players: players.map { $0.subtracting([identity.peerID]) }, isRace: race)
        return Op(
            signing: identity, circle: circle, gameID: g.gameID(creator: identity.peerID), seq: 1, lamport: 1,
            previous: .none, wallClockMillis: createdAtMillis, payload: .genesis(g))
    }

    /// The genesis op of a new private game: only `players` and this
    /// author may move or read it. The game key is made here and sealed to
    /// each of them; the genesis is sealed with it.
    /// - Throws: as ``genesis(parameters:layout:seed:questionMarks:createdAtMillis:players:)``,
    ///   and when a player's key cannot be sealed to.
    public func privateGenesis(
        parameters: GameParameters, layout: MineLayout, seed: UInt64, questionMarks: Bool,
        createdAtMillis: UInt64, players: Set<PeerID>
    ) throws(ByteDecodingError) -> Op {
        let others = players.subtracting([identity.peerID])
        let g = try Genesis(
            parameters: parameters, layout: layout, questionMarks: questionMarks, seed: seed, createdAtMillis: createdAtMillis,
            players: others)
        let key = GameKey()
        var readers: [SealedKey] = []
        for player in others.union([identity.peerID]) {
            guard let sealed = key.sealed(to: player) else { throw .invalidGenesis("\(player) is not a key the game key can be sealed to") }
            readers.append(SealedKey(player: player, sealed: sealed))
        }
        var w = ByteWriter()
        g.encode(into: &w)
        let p = PrivateGenesis(readers: readers, sealedGenesis: key.seal(w.bytes))
        return Op(
            signing: identity, circle: circle, gameID: p.gameID(creator: identity.peerID), seq: 1, lamport: 1,
            previous: .none, wallClockMillis: createdAtMillis, payload: .privateGenesis(p))
    }

    /// The genesis op of a new game: generates the board from `parameters`
    /// and `seed` with `SweeperGame`'s `Generator`, then signs its genesis.
    public func newGame(
        _ parameters: GameParameters, seed: UInt64, questionMarks: Bool,
        createdAtMillis: UInt64
    ) throws(NewGameError) -> Op {
        let board: GeneratedBoard
        do {
            board = try Generator.generate(parameters, seed: seed)
        } catch {
            throw .generation(error)
        }
        do {
            return try genesis(
                parameters: parameters, layout: board.layout, seed: seed, questionMarks: questionMarks,
                createdAtMillis: createdAtMillis)
        } catch {
            throw .invalidBoard(error)
        }
    }

    /// The op that reveals `cell` (a flood when it is a zero), or `nil` when
    /// the move changes nothing (the cell is revealed or flagged).
    public func reveal(_ cell: Int, in game: GameReplica, atMillis now: UInt64) throws(MoveError) -> Op? {
        let state = try playable(game, cell)
        let cells = state.board.cellsUncovered(by: cell)
        guard !cells.isEmpty else { return nil }
        return make(Self.opening(cells, of: cell, chord: false, in: game, state), in: game, atMillis: now)
    }

    /// The op that reveals exactly `cells`, as computed by the caller (no
    /// rules applied: prefer ``reveal(_:in:atMillis:)`` and
    /// ``chord(_:in:atMillis:)``), or `nil` when `cells` is empty.
    public func reveal(cells: some Sequence<Int>, in game: GameReplica, atMillis now: UInt64) throws(MoveError) -> Op? {
        let state = try player(in: game)
        let runs = CellRuns(cells: cells)
        if let last = runs.runs.last, last.upperBound > state.genesis.geometry.cellCount { throw .cellOffBoard(last.upperBound - 1) }
        if let first = runs.runs.first, first.lowerBound < 0 { throw .cellOffBoard(first.lowerBound) }
        guard !runs.isEmpty else { return nil }
        return make(.reveal(runs), in: game, atMillis: now)
    }

    /// The op for a chord on `cell`, or `nil` when the chord does nothing.
    public func chord(_ cell: Int, in game: GameReplica, atMillis now: UInt64) throws(MoveError) -> Op? {
        let state = try playable(game, cell)
        let cells = state.board.cellsChorded(by: cell)
        guard !cells.isEmpty else { return nil }
        return make(Self.opening(cells, of: cell, chord: true, in: game, state), in: game, atMillis: now)
    }

    /// The op that sets `mark` on `cell`, or `nil` when the cell is revealed
    /// or already shows that mark.
    public func setMark(_ mark: Mark, on cell: Int, in game: GameReplica, atMillis now: UInt64) throws(MoveError) -> Op? {
        let state = try playable(game, cell)
        let effective = (mark == .question && !state.genesis.questionMarks) ? Mark.none : mark
        guard !state.board.isRevealed(cell), state.board.mark(at: cell) != effective else { return nil }
        return make(.mark(cell: cell, mark: effective), in: game, atMillis: now)
    }

    /// The op that cycles the mark on `cell` (none → flag → [question →] none),
    /// or `nil` when the cell is revealed.
    public func cycleMark(_ cell: Int, in game: GameReplica, atMillis now: UInt64) throws(MoveError) -> Op? {
        let state = try playable(game, cell)
        guard !state.board.isRevealed(cell) else { return nil }
        let next = state.board.mark(at: cell).next(questionMarks: state.genesis.questionMarks)
        return make(.mark(cell: cell, mark: next), in: game, atMillis: now)
    }

    /// The op that marks the game as assisted (a peek at the mines), or
    /// `nil` when this author already did.
    public func peek(in game: GameReplica, atMillis now: UInt64) throws(MoveError) -> Op? {
        let state = try player(in: game).shown(to: identity.peerID)
        guard !state.assistedBy.contains(identity.peerID) else { return nil }
        return make(.assisted, in: game, atMillis: now)
    }

    /// The op that says this author asked for a hint and was shown `cell`
    /// (each hint is one op: who asked how often is known everywhere).
    public func hint(_ cell: Int, in game: GameReplica, atMillis now: UInt64) throws(MoveError) -> Op {
        _ = try playable(game, cell)
        return make(.hint(cell: cell), in: game, atMillis: now)
    }

    /// The op that says this author, the game's creator, chose its seed:
    /// a practice game, kept out of records.
    public func seeded(in game: GameReplica, atMillis now: UInt64) throws(MoveError) -> Op? {
        guard let state = game.state else { throw .unknownGame }
        guard state.creator == identity.peerID else { throw .notTheCreator }
        guard !state.isSeeded else { return nil }
        return make(.seeded, in: game, atMillis: now)
    }

    /// The op that says this author's game (its creator's, an open game)
    /// is the board of the day `day`.
    public func daily(_ day: Int, in game: GameReplica, atMillis now: UInt64) throws(MoveError) -> Op? {
        guard let state = game.state else { throw .unknownGame }
        guard state.creator == identity.peerID else { throw .notTheCreator }
        guard game.privateHeader == nil, state.dailyDay == nil else { return nil }
        return make(.daily(day: day), in: game, atMillis: now)
    }

    /// The op that lets `added` move in a game whose players this author
    /// (its creator) chose, or `nil` when they all may already.
    public func addPlayers(_ added: Set<PeerID>, in game: GameReplica, atMillis now: UInt64) throws(MoveError) -> Op? {
        guard let state = game.state else { throw .unknownGame }
        guard state.creator == identity.peerID else { throw .notTheCreator }
        guard !state.isRace else { throw .racersAreFixed }
        guard let players = state.players else { throw .everyoneMayPlay }
        // One op names at most as many players as a genesis may.
        let new = Array(added.subtracting(players).sorted().prefix(Genesis.playerLimit))
        guard !new.isEmpty else { return nil }
        guard let key = game.privateHeader?.key else { return make(.players(Set(new)), in: game, atMillis: now) }
        // A private game's new players get the key, sealed to each.
        var sealed: [SealedKey] = []
        for player in new {
            guard let box = key.sealed(to: player) else { throw .notSealable(player) }
            sealed.append(SealedKey(player: player, sealed: box))
        }
        return make(.privatePlayers(sealed), in: game, atMillis: now)
    }

    /// The op by which this author, a racer, gives up its board in a race,
    /// or `nil` when its board ended already.
    public func resign(in game: GameReplica, atMillis now: UInt64) throws(MoveError) -> Op? {
        guard let race = game.state else { throw .unknownGame }
        guard let lane = race.lane(of: identity.peerID) else { throw .notARace }
        guard race.mayMove(identity.peerID) else { throw .anothersDaily(creator: race.creator) }
        guard lane.status == .playing else { return nil }
        return make(.resign, in: game, atMillis: now)
    }

    /// The op that hides the game from every device's list (`archived`)
    /// or shows it again, or `nil` when it already is so.
    public func archive(_ archived: Bool, in game: GameReplica, atMillis now: UInt64) throws(MoveError) -> Op? {
        let state = try player(in: game)
        guard state.isArchived != archived else { return nil }
        return make(.archive(archived), in: game, atMillis: now)
    }

    /// The payload that opens `cells`, which a reveal of `cell` (or a chord
    /// on it) opens: in an open game a ``Flood`` (the cell and the exceptions
    /// to its flood), whatever the flood's size; in a private game the cells
    /// themselves, so that its players on releases before floods read it.
    static func opening(_ cells: [Int], of cell: Int, chord: Bool, in game: GameReplica, _ state: GameState) -> OpPayload {
        guard game.privateHeader == nil else { return .reveal(CellRuns(cells: cells)) }
        return .flood(Flood(cell: cell, chord: chord, opening: cells, on: state.board))
    }

    /// The game's state, when this author may make ops in it.
    private func player(in game: GameReplica) throws(MoveError) -> GameState {
        guard let state = game.state else { throw .unknownGame }
        guard state.mayMove(identity.peerID) else {
            throw state.isDaily ? .anothersDaily(creator: state.creator) : .notAPlayer
        }
        return state
    }

    /// The board this author moves on, when it may move on `cell`: in a
    /// race its own.
    private func playable(_ game: GameReplica, _ cell: Int) throws(MoveError) -> GameState {
        let state = try player(in: game).shown(to: identity.peerID)
        guard state.genesis.geometry.contains(index: cell) else { throw .cellOffBoard(cell) }
        guard state.status == .playing else { throw .gameOver(state.status) }
        return state
    }

    /// The next op in this author's chain for `game`; in a private game a
    /// move's payload is sealed with the game key.
    func make(_ payload: OpPayload, in game: GameReplica, atMillis now: UInt64) -> Op {
        var payload = payload
        if let key = game.privateHeader?.key {
            switch payload {
            case .reveal, .mark, .assisted, .archive, .flood, .hint, .seeded, .resign:
                var w = ByteWriter()
                payload.encode(into: &w)
                payload = .sealed(key.seal(w.bytes))
            case .genesis, .players, .privateGenesis, .sealed, .privatePlayers, .daily:
                break
            }
        }
        let previous = game.lastOp(of: identity.peerID)
        let lamport = max(game.maxLamport, previous?.lamport ?? 0) + 1
        return Op(
            signing: identity, circle: circle, gameID: game.gameID, seq: game.chainLength(of: identity.peerID) + 1, lamport: lamport,
            previous: previous?.hash ?? .none, wallClockMillis: now, payload: payload)
    }
}
