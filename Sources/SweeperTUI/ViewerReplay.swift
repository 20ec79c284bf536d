import SweeperControl

/// A game played again in the viewer, move by move (`sweeper replay`, or
/// `r` on a game's ending): its opening, then each move with its author's
/// mark at the cell they acted on.
public struct ReplayMode: Equatable, Sendable {
    /// The game and its moves.
    public var result: Commands.Replay.Result
    /// How many moves are shown (0: the opening alone).
    public var position = 0
    /// Whether it plays on by itself.
    public var playing = true
    /// Moves a second while playing: 1, 2, 4, 8 or 16.
    public var speed = 1
    /// The viewer's clock at the last step it played.
    var lastStep: Double = 0

    /// The fastest speed.
    public static let fastest = 16

    /// The move shown last, if any.
    public var current: Commands.ReplayMove? { position > 0 && position <= result.moves.count ? result.moves[position - 1] : nil }
}

extension Viewer {
    /// Starts playing `result` again from its opening, at 1×.
    public mutating func startReplay(_ result: Commands.Replay.Result) {
        replay = ReplayMode(result: result, lastStep: clock)
        overlay = nil
        message = nil
        show(replayPosition: 0)
    }

    /// The board as it stood after `position` moves of the replay: the
    /// next move is applied on the board shown; any other position is
    /// built again from the opening.
    mutating func show(replayPosition position: Int) {
        guard var mode = replay else { return }
        let r = mode.result
        let target = min(max(0, position), r.moves.count)
        if target == mode.position + 1, game?.game == r.game {
            let m = r.moves[target - 1]
            applyReplayed(m.changed)
            mode.position = target
            showMove(m, of: mode)
            return
        }
        mode.position = target
        // Every author, by name, so that marks and colours say who.
        var players: [PlayerScore] = []
        for m in r.moves where !players.contains(where: { $0.peer == m.authorPeer }) { players.append(PlayerScore(peer: m.authorPeer, name: m.name, score: 0)) }
        let status = mode.position == 0 ? PlayStatus.playing : r.moves[mode.position - 1].status
        let opening = GameView(
            game: r.game, width: r.width, height: r.height, mines: r.mines, status: .playing, digest: "", revealed: 0, flags: 0,
            board: r.opening, players: players, trippedByPeer: nil, elapsedMillis: 0, progress: 0, assisted: false, questionMarks: false)
        let kept = replay
        let cursorWas = game?.game == r.game ? cursor : nil
        replay = nil
        load(opening)
        replay = kept
        if let cursorWas { cursor = cursorWas }
        lastActed = [:]
        for m in r.moves.prefix(mode.position) {
            applyReplayed(m.changed)
            if let x = m.x, let y = m.y { lastActed[m.authorPeer] = BoardPosition(x: x, y: y) }
        }
        if var g = game {
            g.status = status
            game = g
        }
        if let m = mode.current, let x = m.x, let y = m.y { cursor = BoardPosition(x: x, y: y) }
        replay = mode
    }

    /// Shows `move`, just applied, as the current one of `mode`: its
    /// author's mark and the cursor at its cell, and the game's status after it.
    private mutating func showMove(_ move: Commands.ReplayMove, of mode: ReplayMode) {
        if let x = move.x, let y = move.y {
            lastActed[move.authorPeer] = BoardPosition(x: x, y: y)
            cursor = BoardPosition(x: x, y: y)
        }
        if var g = game {
            g.status = move.status
            game = g
        }
        replay = mode
    }

    /// One step of a replay: forward (`by` 1) or back (`by` -1), pausing it.
    mutating func stepReplay(by delta: Int) {
        guard var mode = replay else { return }
        mode.playing = false
        replay = mode
        show(replayPosition: mode.position + delta)
    }

    /// Plays a replay on as the clock goes: one move every 1/speed s. At
    /// the end of a game still being played, the viewer goes live (it
    /// fetches the game); a finished game's replay stops on its last move.
    public mutating func advanceReplay() -> [ViewerAction] {
        guard var mode = replay, mode.playing else { return [] }
        guard clock - mode.lastStep >= 1 / Double(mode.speed) else { return [] }
        mode.lastStep = clock
        guard mode.position < mode.result.moves.count else {
            mode.playing = false
            replay = mode
            return mode.result.status == .playing ? leaveReplay(live: true) : []
        }
        replay = mode
        show(replayPosition: mode.position + 1)
        return []
    }

    /// Ends a replay: the game as it is now, fetched.
    mutating func leaveReplay(live: Bool) -> [ViewerAction] {
        guard let mode = replay else { return [] }
        replay = nil
        lastActed = [:]
        message = live ? "End of the replay: the game, live." : nil
        return [.refresh(game: mode.result.game)]
    }

    /// The keys of a replay.
    mutating func handleReplay(_ key: Key) -> [ViewerAction] {
        guard var mode = replay else { return [] }
        switch key {
        case .character(" "):
            mode.playing.toggle()
            // Played to its end, it starts again.
            if mode.playing && mode.position >= mode.result.moves.count { mode.position = 0 }
            mode.lastStep = clock
            replay = mode
            show(replayPosition: mode.position)
        case .right, .character("l"): stepReplay(by: 1)
        case .left, .character("h"): stepReplay(by: -1)
        case .home, .character("0"):
            mode.playing = false
            replay = mode
            show(replayPosition: 0)
        case .end, .character("$"):
            mode.playing = false
            replay = mode
            show(replayPosition: mode.result.moves.count)
        case .character("+"), .character("="), .up:
            mode.speed = min(ReplayMode.fastest, mode.speed * 2)
            replay = mode
        case .character("-"), .down:
            mode.speed = max(1, mode.speed / 2)
            replay = mode
        case .escape, .character("q"):
            // Back to the game as it is now; ctrl-c still leaves the viewer.
            return leaveReplay(live: false)
        case .control("c"), .control("d"):
            quitting = true
            return [.quit]
        case .character("?"):
            overlay = .help
        default:
            message = "Replay: space plays or pauses, ←/→ step, +/- speed, Home/End, q or esc back to the game."
        }
        return []
    }

    /// The timeline the status line shows during a replay:
    /// "move 37/112 · 0:01:04 · Sam flag at 3,4 · 2× · playing".
    public var replayTimeline: String? {
        guard let mode = replay else { return nil }
        var parts = ["replay", "move \(mode.position)/\(mode.result.moves.count)"]
        if let m = mode.current {
            parts.append(ControlFormatting.duration(wholeSecondsOf: m.atMillis))
            parts.append(m.name + " " + m.kind + (m.x.flatMap { x in m.y.map { " at \(x),\($0)" } } ?? ""))
        } else {
            parts.append("the opening")
        }
        parts.append("\(mode.speed)×")
        parts.append(mode.playing ? "playing" : "paused")
        return parts.joined(separator: " · ")
    }
}
