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

/// A player's moves: the op each makes, signed with the key of the player
/// (this daemon's own, or one it hosts), committed before it is answered.
extension GameService {
    /// Makes a player's move on cell (`x`, `y`) of `game`: commits its op,
    /// pushes it to the peers, reports the change, and returns it.
    func move(_ move: LocalMove, game: String?, x: Int, y: Int, as player: SigningIdentity? = nil) throws -> MoveOutcome {
        // The op is made from a copy of the game, dropped before the op goes
        // in: a copy still held would make the insertion copy the game whole.
        let (circle, op, before): (Int, Op, GameStatus)
        switch try makeOp(move, game: game, x: x, y: y, as: player) {
        case .unchanged(let state): return MoveOutcome(state: state, cells: [])
        case .made(let c, let o, let b): (circle, op, before) = (c, o, b)
        }
        let (_, after) = try commit(op, circle: circle)
        sinks.play.activity(in: after.gameID, by: op.author)
        if after.status != .playing { sinks.play.gameEnded(after.gameID) }
        guard let changed = engine.game(after.gameID)?.game.changes(by: [op], state: after, before: before, clicked: Cell(x: x, y: y)).first
        else { return MoveOutcome(state: after.shown(to: op.author), cells: []) }
        sinks.changes.gameChanged(.cells(changed))
        // In a race the answer speaks of the mover's own board.
        return MoveOutcome(state: after.shown(to: op.author), cells: changed.cells)
    }

    /// What a move makes: its op, or nothing when it changes nothing.
    enum MadeMove {
        /// The move changes nothing: the game as it is.
        case unchanged(GameState)
        /// The op, its game's circle, and the game's status before it.
        case made(circle: Int, op: Op, before: GameStatus)
    }

    /// The op for a move, from a copy of the game that is gone when this
    /// returns (unless the move changes nothing).
    func makeOp(_ move: LocalMove, game: String?, x: Int, y: Int, as player: SigningIdentity?) throws -> MadeMove {
        let (circle, replica, state) = try lookup(game, as: player)
        let geometry = state.genesis.geometry
        let cell = Cell(x: x, y: y)
        guard geometry.contains(cell) else {
            throw GameServiceError.outsideBoard(x: x, y: y, width: geometry.width, height: geometry.height)
        }
        let index = geometry.index(of: cell)
        let author = author(circle, player)
        let now = clock.wallMillis
        if case .mark(.question) = move, !state.genesis.questionMarks { throw GameServiceError.noQuestionMarks }
        let op = try madeOp(
            {
                switch move {
                case .reveal: try author.reveal(index, in: replica, atMillis: now)
                case .chord: try author.chord(index, in: replica, atMillis: now)
                case .mark(let mark?): try author.setMark(mark, on: index, in: replica, atMillis: now)
                case .mark(nil): try author.cycleMark(index, in: replica, atMillis: now)
                }
            }, geometry: geometry, x: x, y: y)
        guard let op else { return .unchanged(state.shown(to: author.identity.peerID)) }
        return .made(circle: circle, op: op, before: state.status)
    }

    /// The players this device hosts changed: the private games that name
    /// them are read from now on.
    func host(_ players: [SigningIdentity]) {
        engine.host(players)
    }

    /// Keeps a snapshot of every awake game that may sleep, so that the
    /// next start reads them instead of replaying them; how many were kept.
    @discardableResult
    func keepSnapshots() -> Int {
        engine.keepSnapshotsOfAwakeGames()
    }

    /// The author of `player`'s ops in `circle`: this daemon's own player
    /// when `player` is nil, else a player it hosts.
    func author(_ circle: Int, _ player: SigningIdentity?) -> OpAuthor {
        guard let player, player.peerID != identity else { return engine.circles[circle].author }
        return OpAuthor(identity: player, circle: engine.circles[circle].circle)
    }

    /// Runs an op author's call, turning why it refused into the service's error.
    func madeOp(_ make: () throws -> Op?, geometry: BoardGeometry?, x: Int = 0, y: Int = 0) throws -> Op? {
        do {
            return try make()
        } catch let error as MoveError {
            switch error {
            case .unknownGame: throw GameServiceError.unknownGame("\(error)")
            case .gameOver(let status): throw GameServiceError.gameOver(status)
            case .cellOffBoard:
                throw GameServiceError.outsideBoard(x: x, y: y, width: geometry?.width ?? 0, height: geometry?.height ?? 0)
            case .notAPlayer: throw GameServiceError.notAPlayer
            case .notTheCreator: throw GameServiceError.notTheCreator
            case .everyoneMayPlay: throw GameServiceError.everyoneMayPlay
            case .notSealable(let p): throw GameServiceError.cannotSeal(p.description)
            case .notARace: throw GameServiceError.notARacer
            case .racersAreFixed: throw GameServiceError.racersAreFixed
            case .anothersDaily(let creator): throw GameServiceError.anothersDaily(creator: creator)
            }
        }
    }

    /// Applies a local op in place, commits the op (and the game's status)
    /// to the store before anyone is answered, and pushes it to the peers:
    /// to those of peer protocol 18 before the commit's fsync, live and
    /// unsigned (no signature leaves before its op is kept), to the others
    /// after it. A failed commit reloads the engine from the store, so
    /// nothing uncommitted is kept, and tells the peers that took the op
    /// what this device holds, so that they drop it.
    func commit(_ op: Op, circle: Int) throws -> (GameReplica, GameState) {
        try engine.insert(op, circle: circle)
        do {
            guard let (_, replica) = engine.game(op.gameID), let state = replica.state else {
                throw GameServiceError.engine(.gameVanished)
            }
            sinks.sessions.pushBeforeKeeping([op], replica: self.replica)
            try store.append([StoredOps.row(op)], updating: op.gameID.description, status: state.status.rawValue)
            sinks.sessions.push([op], replica: self.replica)
            notePrivatePlayers([op])
            engine.withReplica(circle: circle) { $0.noteStored([op]) }
            return (replica, state)
        } catch {
            reloadAfterFailedCommit(error)
            throw error
        }
    }
}
