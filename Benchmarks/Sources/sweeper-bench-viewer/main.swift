// What a remote move costs a viewer with a 500×500 board open: the bytes
// that reach it on its control socket and the CPU it spends, when it applies
// the move's `cells` event (this release) against when it fetched the whole
// board again after each event (the release before): the event line, then a
// `show` answer of 250,000 cells decoded and loaded. Both paths run the
// viewer's real code (SweeperTUI's Viewer and renderer, SweeperControl's
// JSON types); the daemon's side of a fetch (building the view) is not counted.
import Foundation
import SweeperControl
import SweeperTUI

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }

let side = 500
// A board in play: the left half open (zeros and a few numbers), the right half covered.
let rows = (0..<side).map { y in
    String((0..<side).map { x in x < side / 2 ? (x % 17 == 0 && y % 5 == 0 ? Character("1") : ".") : "#" })
}
let id = "0123456789abcdef0123456789abcdef"
let view = GameView(
    game: id, width: side, height: side, mines: 25_000, status: .playing, digest: String(repeating: "a", count: 64), revealed: side * side / 2,
    flags: 0, board: rows, players: [PlayerScore(peer: "ME", name: "Sam", score: 900), PlayerScore(peer: "P2", name: "Mum", score: 800)],
    trippedByPeer: nil, elapsedMillis: 300_000, progress: 0.55, assisted: false, questionMarks: false)
let encoder = JSONEncoder()
let showLine = try encoder.encode(ResultBox(result: view))
let moves = 200

/// The event of Mum's n-th move: one flag somewhere on the covered half.
func event(_ n: Int) throws -> Data {
    let x = side / 2 + n % (side / 2), y = (n * 7) % side
    return try encoder.encode(
        ControlEvent(
            event: .cells, game: id, cells: [CellChange(x: x, y: y, value: "F")], status: .playing, minesLeft: 24_999, byPeer: "P2", x: x, y: y,
            progress: 0.55))
}
let events = try (0..<moves).map(event)
let eventBytes = Double(events.reduce(0) { $0 + $1.count }) / Double(moves)

/// Runs the viewer over every move; `refetch` also decodes and loads a
/// whole `show` answer after each event, as the release before did.
func run(refetch: Bool) throws -> [Double] {
    var viewer = Viewer()
    viewer.selfID = "ME"
    viewer.load(view)
    let renderer = ViewerRenderer(glyphs: .unicode, color: true)
    var shown = renderer.render(&viewer, width: 120, height: 40)
    var times: [Double] = []
    for line in events {
        times.append(
            try seconds {
                let e = try JSONDecoder().decode(ControlEvent.self, from: line)
                _ = viewer.apply(e)
                if refetch {
                    let fetched = try JSONDecoder().decode(ResultBox<GameView>.self, from: showLine).result
                    viewer.load(fetched)
                }
                let next = renderer.render(&viewer, width: 120, height: 40)
                _ = ScreenRenderer(color: true).diff(from: shown, to: next)
                shown = next
            })
    }
    return times
}

/// A `{"result": …}` answer line.
struct ResultBox<R: Codable>: Codable {
    var result: R
}

let after = try run(refetch: false)
let before = try run(refetch: true)
let afterBytes = eventBytes
let beforeBytes = eventBytes + Double(showLine.count)
print(
    String(
        format: "viewer, a remote move on 500x500: %.0f bytes and %.3f ms of CPU (median of %d); fetching the board again: %.0f bytes and %.2f ms",
        afterBytes, median(after) * 1000, moves, beforeBytes, median(before) * 1000))
print(String(format: "result: viewer.move_bytes %.0f", afterBytes))
print(String(format: "result: viewer.move_ms %.4f", median(after) * 1000))
print(String(format: "result: viewer.refetch_bytes %.0f", beforeBytes))
print(String(format: "result: viewer.refetch_ms %.3f", median(before) * 1000))
