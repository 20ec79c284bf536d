import SweeperControl
import SweeperCrypto
import SweeperGame
import SweeperSync

extension ReplyViews {
    /// `replay`: the game from its opening and every move in order, each
    /// with the looks of the cells it changed (as `show` draws them), or
    /// `nil` when this device cannot read the game. A race replays one
    /// racer's board: `racer`'s, else this device's own, else the creator's.
    func replay(_ replica: GameReplica, _ state: GameState, racer: PeerID? = nil) throws -> Commands.Replay.Result? {
        let racer = state.racerShown(to: racer ?? ownID)
        let geometry = state.genesis.geometry
        let started = state.startMillis
        var moves: [Commands.ReplayMove] = []
        guard
            let replay = try replica.replay(
                racer: racer,
                { step, after in
                    let cell = step.cell.map(geometry.cell(at:))
                    moves.append(
                        Commands.ReplayMove(
                            index: moves.count + 1, name: name(of: step.author), authorPeer: step.author.description, kind: step.kind.rawValue,
                            x: cell?.x, y: cell?.y, changed: Self.cellChanges(step.changed, in: after),
                            atMillis: Int(clamping: step.wallClockMillis > started ? step.wallClockMillis - started : 0),
                            madeAt: Int64(clamping: step.wallClockMillis),
                            status: after.status.shown))
                })
        else { return nil }
        let p = state.genesis.parameters
        return Commands.Replay.Result(
            game: state.gameID.description, width: p.width, height: p.height, mines: p.mines, opening: replay.opening.rows,
            startedAt: Int64(clamping: started), moves: moves, status: state.shown(to: racer ?? ownID).status.shown)
    }
}
