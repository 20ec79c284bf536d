import Foundation
import SweeperTestSupport
import Testing

/// What the browser tests share: a browser logged in to a daemon's board
/// and showing a game, cells found on the page by `#board`'s rectangle,
/// and the board as the page and as the daemon hold it.
enum WebPageKit {
    /// A browser logged in to `h`'s board, showing `game`, drawn.
    static func open(_ device: Browser.Device, _ h: DaemonHarness, game: String) throws -> Browser {
        let answer = try h.json(["web", "--no-open", "--game", game])
        let url = try #require(answer["url"] as? String)
        let browser = try Browser(device, root: h.root)
        do {
            try browser.open(url)
            let ready = try browser.wait(15, for: "return window.sweeper && window.sweeper.ready ? window.sweeper.game : null") {
                ($0 as? String) == game
            }
            guard (ready as? String) == game else { throw ProcessError("the page did not show \(game): \(String(describing: ready))") }
        } catch {
            browser.quit()
            throw error
        }
        return browser
    }

    /// The centre of cell (x, y) on the page, from `#board`'s rectangle.
    static func centre(_ b: Browser, _ x: Int, _ y: Int, width: Int, height: Int) throws -> (Double, Double) {
        let r = try #require(try b.rect(of: "board"))
        return (r.x + (Double(x) + 0.5) * r.width / Double(width), r.y + (Double(y) + 0.5) * r.height / Double(height))
    }

    /// The board as the page shows it.
    static func rows(_ b: Browser) throws -> [String] {
        try b.run("return window.sweeper.board") as? [String] ?? []
    }

    /// The board as the daemon holds it.
    static func rows(_ h: DaemonHarness, _ game: String) throws -> [String] {
        try h.json(["show", game])["board"] as? [String] ?? []
    }

    /// The look of cell (x, y) in `rows`.
    static func cell(_ rows: [String], _ x: Int, _ y: Int) -> Character? {
        guard y >= 0, y < rows.count, x >= 0 else { return nil }
        let row = Array(rows[y])
        return x < row.count ? row[x] : nil
    }

    /// Waits until the page shows cell (x, y) as `done` says; the look it ended with.
    @discardableResult
    static func waitForCell(_ b: Browser, _ x: Int, _ y: Int, seconds: Double = 5, _ done: @escaping (Character?) -> Bool) throws -> Character? {
        let value = try b.wait(seconds, for: "const r = window.sweeper.board; return r && r[\(y)] ? r[\(y)][\(x)] : null") {
            done(($0 as? String)?.first)
        }
        return (value as? String)?.first
    }

    /// The covered cells of a board (`#`), row by row.
    static func covered(_ rows: [String]) -> [[Int]] {
        rows.enumerated().flatMap { y, row in row.enumerated().filter { $0.element == "#" }.map { [$0.offset, y] } }
    }

    /// The mines of `game` (asks with `peek`, which marks the game assisted).
    static func mines(_ h: DaemonHarness, _ game: String) throws -> Set<[Int]> {
        let layout = try h.json(["show", game, "--peek"])["mineLayout"] as? [String] ?? []
        var mines: Set<[Int]> = []
        for (y, row) in layout.enumerated() {
            for (x, c) in row.enumerated() where c == "*" { mines.insert([x, y]) }
        }
        return mines
    }

    /// The cells around (x, y) on a `width`×`height` board.
    static func neighbours(_ x: Int, _ y: Int, width: Int, height: Int) -> [[Int]] {
        var out: [[Int]] = []
        for dy in -1...1 {
            for dx in -1...1 where (dx, dy) != (0, 0) {
                let (nx, ny) = (x + dx, y + dy)
                if nx >= 0, ny >= 0, nx < width, ny < height { out.append([nx, ny]) }
            }
        }
        return out
    }
}
