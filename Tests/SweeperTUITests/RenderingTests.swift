import Foundation
import SweeperControl
import SweeperConventions
import Testing

@testable import SweeperTUI

/// A game view for tests.
func gameView(
    _ board: [String], mines: Int, status: PlayStatus = .playing, id: String = "abcdef1234567890",
    players: [PlayerScore] = [PlayerScore(peer: "me", name: "ann", score: 3)], trippedBy: String? = nil,
    wrongFlags: [CellPosition]? = nil
) -> GameView {
    GameView(
        game: id, width: board.first?.count ?? 0, height: board.count, mines: mines, status: status, digest: "d", revealed: 0,
        flags: 0, board: board, players: players, trippedByPeer: trippedBy, elapsedMillis: 42000, progress: 0, assisted: false,
        questionMarks: false, wrongFlags: wrongFlags)
}

func viewer(_ view: GameView) -> Viewer {
    var v = Viewer()
    v.load(view)
    return v
}

@Suite struct RenderingTests {
    let ascii = ViewerRenderer(glyphs: .ascii, color: false)

    @Test func exactScreenOfASmallBoard() {
        var v = viewer(gameView(["#F1.", "#?2.", "#13."], mines: 3))
        v.cursor = BoardPosition(x: 0, y: 0)
        let screen = ascii.render(&v, width: 44, height: 10)
        let expected = [
            " Sweeper | game abcdef12 | 4x3, 3 mines ... ",
            "+--------+                                  ",
            "|# F 1   |                                  ",
            "|# ? 2   |                                  ",
            "|# 1 3   |                                  ",
            "+--------+                                  ",
            "                                            ",
            " Mines left 2 | Flags 1 | 0:00:42 | playing ",
            " Players: ann 3                             ",
            " arrows/hjkl move | space reveal ...        ",
        ]
        #expect(screen.text == expected.joined(separator: "\n"))
        // The cursor is shown in reverse video over both columns of its cell.
        #expect(screen[1, 2].style.reverse && screen[2, 2].style.reverse)
        #expect(!screen[3, 2].style.reverse)
    }

    @Test func classicNumberColours() {
        let colours = (1...8).map { ViewerRenderer.numberColor($0) }
        #expect(colours == [.brightBlue, .green, .brightRed, .blue, .red, .cyan, .brightBlack, .white])
        let r = ViewerRenderer(glyphs: .unicode, color: true)
        #expect(r.cellLook("3", peekMine: false, lost: false, wrongFlag: false).style.foreground == .brightRed)
        #expect(r.cellLook("F", peekMine: false, lost: false, wrongFlag: false).character == "⚑")
        #expect(r.cellLook("X", peekMine: false, lost: true, wrongFlag: false).style.background == .red)
        #expect(r.cellLook("F", peekMine: false, lost: true, wrongFlag: true).character == "✗")
    }

    @Test func lossShowsTrippedMineAndWrongFlags() {
        let view = gameView(
            ["XF*", "F12", "..."], mines: 2, status: .lost, players: [PlayerScore(peer: "p2", name: "bob", score: 1)],
            trippedBy: "p2", wrongFlags: [CellPosition(x: 0, y: 1)])
        var v = viewer(view)
        v.cursor = BoardPosition(x: 2, y: 2)
        let screen = ascii.render(&v, width: 80, height: 10)
        #expect(screen.line(2).hasPrefix("|X F * |"))
        #expect(screen.line(3).hasPrefix("|x 1 2 |"))
        #expect(screen.line(7).contains("lost"))
        #expect(screen.line(7).contains("mine tripped by bob"))
        // Without colour the mine that went off is still marked, by reverse video.
        #expect(screen[1, 2].style.reverse)
    }

    @Test func tooSmallSaysSo() {
        var v = viewer(gameView(["##", "##"], mines: 1))
        let screen = ascii.render(&v, width: 20, height: 6)
        #expect(screen.text.contains("Terminal too small"))
        #expect(screen.text.contains("(20x6; need 30x10)"))
    }

    @Test func bigBoardsScrollWithTheCursor() {
        let rows = Array(repeating: String(repeating: "#", count: 40), count: 30)
        var v = viewer(gameView(rows, mines: 10))
        v.cursor = BoardPosition(x: 39, y: 29)
        let screen = ascii.render(&v, width: 30, height: 12)
        let layout = ascii.layout(v, width: 30, height: 12)
        #expect(layout.columns == 14 && layout.rows == 6)
        #expect(v.origin == BoardPosition(x: 26, y: 24))
        // More board above and to the left: the frame says so.
        #expect(screen.line(1).contains("^"))
        #expect(screen[0, 3].character == "<")
        // The cursor is the bottom-right visible cell.
        #expect(screen[1 + 13 * 2, 2 + 5].style.reverse)
    }

    @Test func exactDiffBytes() {
        var old = Screen(width: 4, height: 2)
        old.put(0, 0, "abcd")
        var new = old
        new.set(2, 0, ScreenCell("X", Style(foreground: .red)))
        let bytes = ScreenRenderer(color: true).diff(from: old, to: new)
        #expect(String(decoding: bytes, as: UTF8.self) == "\u{1B}[1;3H\u{1B}[0;31mX\u{1B}[0m")
        #expect(ScreenRenderer(color: true).diff(from: new, to: new).isEmpty)
        // Without colour the same change carries no colour code.
        let plain = ScreenRenderer(color: false).diff(from: old, to: new)
        #expect(String(decoding: plain, as: UTF8.self) == "\u{1B}[1;3H\u{1B}[0mX\u{1B}[0m")
    }

    @Test func wideCharactersTakeTwoColumnsOnScreenAndOnTheTerminal() {
        var screen = Screen(width: 8, height: 1)
        let end = screen.put(0, 0, "🦊 Mum")
        #expect(end == 6 && screen.line(0) == "🦊 Mum  ")
        #expect(screen[1, 0].isContinuation)
        // The terminal gets the fox once: it moves the cursor two columns.
        let painted = String(decoding: ScreenRenderer(color: false).full(screen), as: UTF8.self)
        #expect(painted.components(separatedBy: "🦊").count == 2 && painted.contains("🦊 Mum  "))
        // Writing over its right half blanks its left half: no half a fox.
        var over = screen
        over.set(1, 0, ScreenCell("x"))
        #expect(over.line(0) == " x Mum  ")
        // A change to the right half repaints from the left half.
        var changed = screen
        changed.put(0, 0, "🐻")
        let diff = String(decoding: ScreenRenderer(color: false).diff(from: screen, to: changed), as: UTF8.self)
        #expect(diff.hasPrefix("\u{1B}[1;1H") && diff.contains("🐻"), "\(diff.debugDescription)")
        // A wide character that does not fit at the end stays out.
        var narrow = Screen(width: 3, height: 1)
        narrow.put(0, 0, "ab🦊")
        #expect(narrow.line(0) == "ab ")
    }

    @Test func theGameListStaysInItsFrameWithEmojiNames() {
        var v = viewer(gameView(["##", "##"], mines: 1))
        _ = v.handle(.character("g"))
        v.showGames([
            GameListing(
                game: "aaaa1111", width: 9, height: 9, mines: 10, status: .playing, progress: 0, elapsedMillis: 0,
                playerNames: ["🦊 Fox", "Mum"], createdAt: 0, assisted: false),
            GameListing(
                game: "bbbb2222", width: 9, height: 9, mines: 10, status: .playing, progress: 0, elapsedMillis: 0,
                playerNames: ["Max", "Mum"], createdAt: 0, assisted: false),
        ])
        let screen = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 90, height: 24)
        let rows = (0..<24).map { screen.line($0) }.filter { $0.contains("Mum") }
        #expect(rows.count == 2)
        // The right edge of the frame is in the same terminal column on both rows.
        let edges = rows.map { row in DisplayWidth.of(String(row.reversed().drop { $0 == " " }.reversed())) }
        #expect(Set(edges).count == 1, "\(rows)")
    }

    @Test func aPeersOneCellMoveIsTensOfBytes() {
        let board = Array(repeating: "#########", count: 9)
        var v = viewer(gameView(board, mines: 10))
        v.selfID = "me"
        let r = ViewerRenderer(glyphs: .unicode, color: true)
        let before = r.render(&v, width: 80, height: 24)
        let actions = v.apply(
            ControlEvent(
                event: .cells, game: "abcdef1234567890", cells: [CellChange(x: 1, y: 1, value: "F")], status: .playing, byPeer: "me",
                x: 1, y: 1))
        // The event is the move: nothing is fetched.
        #expect(actions == [])
        let after = r.render(&v, width: 80, height: 24)
        let bytes = ScreenRenderer(color: true).diff(from: before, to: after)
        let full = ScreenRenderer(color: true).full(after)
        // The flag, and the two counters in the status line.
        #expect(bytes.count < 80, "\(bytes.count) bytes: \(String(decoding: bytes, as: UTF8.self).debugDescription)")
        #expect(full.count > 10 * bytes.count)
        #expect(String(decoding: bytes, as: UTF8.self).contains("⚑"))
    }

    /// A move's cells come in its answer and in its event: the viewer
    /// applies them, scores the player who opened them once, and fetches
    /// the game whole only when it ended (for its ending).
    @Test func movesApplyTheirCellsAndFetchOnlyAtTheEnd() {
        var v = viewer(gameView(["###", "###", "###"], mines: 1, players: [PlayerScore(peer: "me", name: "ann", score: 0)]))
        v.selfID = "me"
        let opened = [CellChange(x: 0, y: 0, value: "."), CellChange(x: 1, y: 0, value: "1"), CellChange(x: 0, y: 1, value: "2")]
        #expect(v.apply(ControlEvent(event: .cells, game: v.game?.game, cells: opened, status: .playing, byPeer: "p2", x: 0, y: 0)) == [])
        // Bob (unknown until now) scores one for each cell he opened: his cells, as his ending part says.
        #expect(v.game?.players.first?.peer == "p2" && v.game?.players.first?.score == 3)
        // The same cells again (an answer and its event) score nothing more.
        _ = v.apply(ControlEvent(event: .cells, game: v.game?.game, cells: opened, status: .playing, byPeer: "p2"))
        #expect(v.game?.players.first?.score == 3)
        #expect(v.look(1, 0) == "1" && abs(v.progress - 3.0 / 8.0) < 1e-9)
        // My move answers with its cells; it did not end the game: no fetch.
        let mine = Commands.MoveResult(
            game: v.game?.game ?? "", changed: [CellChange(x: 2, y: 0, value: "1")], status: .playing, progress: 0.5, trippedByPeer: nil)
        #expect(v.apply(mine) == [])
        #expect(v.game?.players.first { $0.peer == "me" }?.score == 1)
        // The move that ends it: one fetch, for the ending.
        let last = Commands.MoveResult(
            game: v.game?.game ?? "", changed: [CellChange(x: 2, y: 2, value: "X")], status: .lost, progress: 0.5, trippedByPeer: "me")
        #expect(v.apply(last) == [.refresh(game: v.game?.game ?? "")])
    }

    @Test func otherPlayersLastMoveIsMarked() {
        let board = Array(repeating: "#####", count: 5)
        var v = viewer(gameView(board, mines: 3, players: [PlayerScore(peer: "me", name: "ann", score: 0), PlayerScore(peer: "p2", name: "Bob", score: 0)]))
        v.selfID = "me"
        _ = v.apply(ControlEvent(event: .cells, game: v.game?.game, cells: [CellChange(x: 3, y: 0, value: "2")], byPeer: "p2", x: 3, y: 0))
        _ = v.apply(ControlEvent(event: .cells, game: v.game?.game, cells: [CellChange(x: 0, y: 4, value: "1")], byPeer: "me", x: 0, y: 4))
        #expect(v.lastActed == ["p2": BoardPosition(x: 3, y: 0)])
        let screen = ascii.render(&v, width: 40, height: 12)
        #expect(screen.line(2).hasPrefix("|# # # 2b# |"))
        // A plain reveal names no cell: not the first cell it opened (a guess),
        // but where the player's cursor is while they look at the game.
        _ = v.apply(
            ControlEvent(
                event: .cells, game: v.game?.game,
                cells: [
                    CellChange(x: 0, y: 1, value: "."), CellChange(x: 1, y: 1, value: "."), CellChange(x: 4, y: 1, value: "1"),
                ], byPeer: "p2"))
        #expect(v.lastActed["p2"] == BoardPosition(x: 3, y: 0))
        _ = v.apply(ControlEvent(event: .presence, presence: PresenceInfo(peer: "p2", name: "Bob", game: v.game?.game, x: 1, y: 1)))
        _ = v.apply(
            ControlEvent(
                event: .cells, game: v.game?.game,
                cells: [
                    CellChange(x: 0, y: 2, value: "."), CellChange(x: 1, y: 2, value: "."), CellChange(x: 4, y: 2, value: "1"),
                ], byPeer: "p2"))
        #expect(v.lastActed["p2"] == BoardPosition(x: 1, y: 1))
        // Events of other games change nothing.
        _ = v.apply(ControlEvent(event: .cells, game: "other", cells: [CellChange(x: 1, y: 3, value: "1")], byPeer: "p2"))
        #expect(v.look(1, 3) == "#")
    }

    @Test func peersWithTheirSyncState() {
        func peer(_ name: String, _ state: PeerState, _ sync: PeerInfo.Sync?, other: Bool = false) -> PeerInfo {
            PeerInfo(
                peer: name, name: name, addresses: [], state: state, via: [], lastSeenAt: nil, roundTripMillis: nil, sync: sync,
                otherCircle: other)
        }
        var v = viewer(gameView(["##", "##"], mines: 1))
        v.peers = [
            peer("bob", .connected, PeerInfo.Sync(theyLack: 0, weLack: 0)), peer("cy", .connected, PeerInfo.Sync(theyLack: 3, weLack: 0)),
            peer("dan", .offline, nil), peer("zed", .discovered, nil, other: true),
        ]
        let screen = ascii.render(&v, width: 100, height: 12)
        #expect(screen.line(10).contains("Players: ann 3 | Peers: bob in sync, cy catching up, dan never reached"))
        #expect(!screen.text.contains("zed"))
    }

    @Test func noColorMeansNoColourCodes() {
        var v = viewer(gameView(["123", "456", "78F"], mines: 1))
        let screen = ViewerRenderer(glyphs: .unicode, color: false).render(&v, width: 40, height: 12)
        let text = String(decoding: ScreenRenderer(color: false).full(screen), as: UTF8.self)
        let sgrs = text.split(separator: "\u{1B}[").compactMap { part -> [Int]? in
            guard let m = part.firstIndex(of: "m"), part[..<m].allSatisfy({ $0.isNumber || $0 == ";" }) else { return nil }
            return part[..<m].split(separator: ";").compactMap { Int($0) }
        }
        #expect(!sgrs.isEmpty)
        #expect(sgrs.allSatisfy { codes in codes.allSatisfy { !(30...49).contains($0) && !(90...107).contains($0) } })
    }

    @Test func localeDecidesUnicode() {
        #expect(Glyphs.localeIsUTF8(["LANG": "en_GB.UTF-8"]))
        #expect(Glyphs.localeIsUTF8(["LC_ALL": "C.utf8", "LANG": "C"]))
        #expect(!Glyphs.localeIsUTF8(["LC_ALL": "C", "LANG": "en_GB.UTF-8"]))
        #expect(!Glyphs.localeIsUTF8(["LC_CTYPE": "POSIX"]))
        #expect(!Glyphs.localeIsUTF8([:]))
        #expect(PlayOptions(socketPath: "s", environment: ["LANG": "C"]).glyphs == .ascii)
        #expect(PlayOptions(socketPath: "s", ascii: true, environment: ["LANG": "C.UTF-8"]).glyphs == .ascii)
        #expect(PlayOptions(socketPath: "s", environment: ["LANG": "C.UTF-8"]).glyphs == .unicode)
        #expect(!PlayOptions(socketPath: "s", environment: ["NO_COLOR": "1"]).color)
        #expect(PlayOptions(socketPath: "s", environment: ["NO_COLOR": ""]).color)
    }
}

@Suite struct ViewerTests {
    let id = "abcdef1234567890"

    @Test func movesWithCountsAndClamps() {
        var v = viewer(gameView(Array(repeating: "##########", count: 10), mines: 5))
        #expect(v.cursor == BoardPosition(x: 5, y: 5))
        for k in "3h" { _ = v.handle(.character(k)) }
        #expect(v.cursor == BoardPosition(x: 2, y: 5))
        _ = v.handle(.character("J"))
        #expect(v.cursor == BoardPosition(x: 2, y: 9))
        for k in "12l" { _ = v.handle(.character(k)) }
        #expect(v.cursor == BoardPosition(x: 9, y: 9))
        _ = v.handle(.up)
        _ = v.handle(.character("Y"))
        #expect(v.cursor == BoardPosition(x: 4, y: 8))
    }

    @Test func revealChordFlagByKey() {
        var v = viewer(gameView(["#1F", "###", "###"], mines: 2))
        v.cursor = BoardPosition(x: 0, y: 0)
        #expect(v.handle(.character(" ")) == [.reveal(game: id, x: 0, y: 0)])
        #expect(v.handle(.character("f")) == [.flag(game: id, x: 0, y: 0)])
        _ = v.handle(.right)
        #expect(v.handle(.enter) == [.chord(game: id, x: 1, y: 0)])
        #expect(v.handle(.character("f")).isEmpty)  // a number cannot be flagged
        _ = v.handle(.right)
        #expect(v.handle(.enter).isEmpty)  // a flag is not revealed
        #expect(v.message != nil)
        // H asks first (a hint marks the game assisted for everyone); n asks nothing.
        #expect(v.handle(.character("H")).isEmpty)
        #expect(v.overlay == .confirm("Ask for a hint? The game will be marked assisted for everyone (no record). (y/n)", .hint(game: id)))
        #expect(v.handle(.character("n")).isEmpty && v.overlay == nil)
        _ = v.handle(.character("H"))
        #expect(v.handle(.character("y")) == [.hint(game: id)])
        // Assisted already: no question.
        var assisted = gameView(["#1F", "###", "###"], mines: 2)
        assisted.assisted = true
        v.load(assisted)
        #expect(v.handle(.character("H")) == [.hint(game: id)])
        #expect(v.handle(.character("q")) == [.quit])
        #expect(v.quitting)
    }

    @Test func aSpectatorSeesWatchingAndSendsNoMove() {
        var view = gameView(["#1#", "###", "###"], mines: 2)
        view.watching = true
        view.chosenPlayerNames = ["bob", "cat"]
        var v = viewer(view)
        v.cursor = BoardPosition(x: 0, y: 0)
        for key in [Key.character(" "), .character("f"), .enter, .character("c"), .character("H")] {
            #expect(v.handle(key).isEmpty, "\(key) sent a move from a device that watches")
            #expect(v.message?.contains("You watch this game") == true)
        }
        _ = v.handle(.right)
        #expect(v.handle(.enter).isEmpty, "a chord")
        let screen = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 60, height: 12)
        #expect(screen.line(9).contains("| you watch |") && !screen.line(9).contains("playing"), "\(screen.text)")
        // Added as a player (the view fetched again after `game-changed`), it plays.
        view.watching = nil
        v.load(view)
        #expect(v.apply(ControlEvent(event: .gameChanged, game: id)) == [.refresh(game: id)])
        #expect(v.handle(.enter) == [.chord(game: id, x: 1, y: 0)])
    }

    /// With the daemon away, the peers line does not go on saying what it
    /// last heard ("Mum in sync"): their state is not known.
    @Test func thePeersLineSaysNothingStaleWhileTheDaemonIsAway() {
        var v = viewer(gameView(["##", "##"], mines: 1))
        v.peers = [
            PeerInfo(
                peer: "p1", name: "Mum", addresses: [], state: .connected, via: [], lastSeenAt: Int64(Date().timeIntervalSince1970 * 1000) - 0,
                roundTripMillis: 1,
                sync: PeerInfo.Sync(theyLack: 0, weLack: 0), otherCircle: false)
        ]
        var screen = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 90, height: 12)
        #expect(screen.text.contains("Mum in sync"), "\(screen.text)")
        v.connection = .retrying("The daemon went away; retrying in 1.0 s (attempt 1).")
        screen = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 90, height: 12)
        #expect(!screen.text.contains("in sync") && screen.text.contains("unknown while the daemon is away"), "\(screen.text)")
    }

    /// A big board opens on its opening, in the middle of the view, and
    /// the status line says where the cursor is.
    @Test func aBigBoardOpensCentredOnItsOpening() {
        var view = gameView(Array(repeating: String(repeating: "#", count: 500), count: 500), mines: 40_000)
        view.start = CellPosition(x: 310, y: 120)
        var v = viewer(view)
        let ascii = ViewerRenderer(glyphs: .ascii, color: false)
        let screen = ascii.render(&v, width: 80, height: 24)
        let layout = ascii.layout(v, width: 80, height: 24)
        #expect(v.cursor == BoardPosition(x: 310, y: 120))
        #expect(abs(v.origin.x + layout.columns / 2 - 310) <= 1 && abs(v.origin.y + layout.rows / 2 - 120) <= 1, "origin \(v.origin)")
        #expect(screen.text.contains("at 310,120"), "\(screen.text)")
        // Moving on scrolls only as much as it must.
        _ = v.handle(.right)
        _ = ascii.render(&v, width: 80, height: 24)
        #expect(v.origin.x == 310 - layout.columns / 2 || v.origin.x == 310 - layout.columns / 2 + 1)
    }

    @Test func peekAsksFirst() {
        var v = viewer(gameView(["##", "##"], mines: 1))
        #expect(v.handle(.character("c")).isEmpty)
        #expect(v.overlay == .confirm("Show the mines? The game will be marked assisted for everyone. (y/n)", .peek(game: id)))
        #expect(v.handle(.character("n")).isEmpty)
        #expect(v.overlay == nil)
        _ = v.handle(.character("c"))
        #expect(v.handle(.character("y")) == [.peek(game: id)])
    }

    @Test func theHelpListsEveryKeyAndLeavesTheBoardsCornerInSight() {
        var v = viewer(gameView(["#F1.", "#?2.", "#13."], mines: 3))
        _ = v.handle(.character("?"))
        let screen = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 100, height: 24)
        let text = (0..<24).map { screen.line($0) }.joined(separator: "\n")
        for key in ["PgUp", "PgDn", "0 or Home", "$ or End", "h j k l", "J K L", "space", "f ", "H ", "' ", "g ", "p ", "n ", "c ", "q"] {
            #expect(text.contains(key), "the help does not list \(key)")
        }
        // The board's top-left cells are still drawn beside the help.
        let layout = BoardLayout(width: 100, height: 24, boardWidth: 4, boardHeight: 3)
        #expect(screen.line(layout.top).dropFirst(layout.left).hasPrefix("#"), "\(screen.line(layout.top))")
    }

    @Test func thePeersPanelSaysWhenMDNSIsUnavailable() {
        var v = viewer(gameView(["##", "##"], mines: 1))
        v.mdns = "unavailable (avahi-daemon is not running)"
        _ = v.handle(.character("p"))
        v.peers = []
        let screen = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 90, height: 24)
        let text = (0..<24).map { screen.line($0) }.joined(separator: "\n")
        #expect(text.contains("mDNS is unavailable") && text.contains("avahi-daemon"), "\(text)")
    }

    @Test func otherPlayersCursorsColourTheirCellAndNeverCoverTheNextOne() {
        // Max's and Mum's cursors side by side on a row of numbers: both stay readable.
        var v = viewer(gameView(["####", "1234", "####"], mines: 3))
        v.selfID = "me"
        v.cursor = BoardPosition(x: 0, y: 0)
        #expect(v.cursorReport == Commands.Cursor.Arguments(game: "abcdef1234567890", x: 0, y: 0))
        _ = v.apply(ControlEvent(event: .presence, presence: PresenceInfo(peer: "p1", name: "Mum", game: "abcdef1234567890", x: 1, y: 1)))
        _ = v.apply(ControlEvent(event: .presence, presence: PresenceInfo(peer: "p2", name: "Max", game: "abcdef1234567890", x: 2, y: 1)))
        _ = v.apply(ControlEvent(event: .presence, presence: PresenceInfo(peer: "p3", name: "Dad", game: "another", x: 0, y: 0)))
        #expect(v.watching.map(\.name) == ["Max", "Mum"])
        let r = ViewerRenderer(glyphs: .ascii, color: true)
        var screen = r.render(&v, width: 100, height: 10)
        let layout = BoardLayout(width: 100, height: 10, boardWidth: 4, boardHeight: 3)
        let row = layout.top + 1
        // Every number of the row is still there, each in its own column.
        for x in 0..<4 { #expect(screen[layout.left + 2 * x, row].character == Character("\(x + 1)"), "\(screen.line(row))") }
        // Each cursor: the cell in the player's colour and one letter of
        // their own beside it (Max took M, so Mum is U), never over the next cell.
        let colours = ViewerRenderer.playerColours(["p1", "p2"])
        #expect(screen[layout.left + 2 * 1 + 1, row].character == "U" && screen[layout.left + 2 * 2 + 1, row].character == "M")
        #expect(screen[layout.left + 2 * 1, row].style.background == colours["p1"]?.background)
        #expect(screen[layout.left + 2 * 2, row].style.background == colours["p2"]?.background)
        // The status line names who is where, after the same letters.
        #expect(screen.text.contains("looking: M Max 2,1, U Mum 1,1") && !screen.text.contains("watching"), "\(screen.text)")
        // Dad looks at another game: not drawn, not said.
        #expect(!screen.text.contains("Dad"))
        // On a narrower screen the names stay, without the places.
        #expect(r.render(&v, width: 80, height: 10).text.contains("looking: M Max, U Mum"))
        // Both on one cell: a `+`, and the status line says both are there.
        _ = v.apply(ControlEvent(event: .presence, presence: PresenceInfo(peer: "p1", name: "Mum", game: "abcdef1234567890", x: 2, y: 1)))
        screen = r.render(&v, width: 100, height: 10)
        #expect(screen[layout.left + 2 * 2 + 1, row].character == "+")
        #expect(screen[layout.left + 2 * 2, row].character == "3")
        #expect(screen.text.contains("Max 2,1, U Mum 2,1"), "\(screen.text)")
        // Without colour: underlined, and the letters still say who.
        screen = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 100, height: 10)
        #expect(screen[layout.left + 2 * 2, row].style.underline && screen[layout.left + 2 * 2, row].character == "3")
        // Mum leaves.
        _ = v.apply(ControlEvent(event: .presence, presence: PresenceInfo(peer: "p1", name: "Mum")))
        screen = r.render(&v, width: 100, height: 10)
        #expect(screen.text.contains("looking: M Max 2,1") && !screen.text.contains("Mum"))
        #expect(screen[layout.left + 2 * 2 + 1, row].character == "M")
        // With the game list open, the viewer says it shows no game.
        _ = v.handle(.character("g"))
        v.showGames([])
        #expect(v.cursorReport == Commands.Cursor.Arguments())
    }

    @Test func aPointFlashesItsCellInThePointersColourAndFades() {
        var v = viewer(gameView(["####", "1234", "####"], mines: 3))
        v.selfID = "me"
        v.cursor = BoardPosition(x: 3, y: 2)
        // `'` asks to point at the cell under the cursor.
        #expect(v.handle(.character("'")) == [.point(game: "abcdef1234567890", x: 3, y: 2)])
        let mum = PresenceInfo(peer: "p1", name: "Mum", game: "abcdef1234567890", x: 2, y: 1, colour: 5)
        // A point at another game, or off the board, shows nothing.
        _ = v.apply(ControlEvent(event: .point, game: "another", x: 2, y: 1, presence: mum))
        _ = v.apply(ControlEvent(event: .point, game: "abcdef1234567890", x: 9, y: 1, presence: mum))
        #expect(v.points.isEmpty && v.message == nil)
        _ = v.apply(ControlEvent(event: .point, game: "abcdef1234567890", byName: "Mum", x: 2, y: 1, presence: mum))
        let r = ViewerRenderer(glyphs: .ascii, color: true)
        let layout = BoardLayout(width: 100, height: 10, boardWidth: 4, boardHeight: 3)
        let (cell, beside) = (layout.left + 2 * 2, layout.left + 2 * 2 + 1)
        var screen = r.render(&v, width: 100, height: 10)
        // The cell keeps its number, in Mum's chosen colour (red, the fifth), a `!` beside it; the status line says who.
        #expect(screen[cell, layout.top + 1].character == "3" && screen[beside, layout.top + 1].character == "!")
        #expect(screen[cell, layout.top + 1].style.background == ViewerRenderer.playerPalette[4].background)
        #expect(screen.text.contains("Mum: look here (2,1)"), "\(screen.text)")
        // It flashes: a second later the colours are swapped.
        v.tick(1.2)
        screen = r.render(&v, width: 100, height: 10)
        #expect(screen[cell, layout.top + 1].style.reverse && screen[beside, layout.top + 1].character == "!")
        // After a few seconds it is gone, and so is its line.
        v.tick(Viewer.pointShownFor + 0.1)
        screen = r.render(&v, width: 100, height: 10)
        #expect(v.points.isEmpty && screen[beside, layout.top + 1].character == " " && !screen.text.contains("look here"))
        // This player's own point shows too, with its own words.
        _ = v.apply(ControlEvent(event: .point, game: "abcdef1234567890", x: 3, y: 2, presence: PresenceInfo(peer: "me", name: "ann", own: true)))
        #expect(v.message == "You point at 3,2." && v.points["me"]?.own == true)
    }

    @Test func eightPlayersGetEightColours() {
        let peers = (1...8).map { "PEER\($0)-XXXXX" }
        let colours = ViewerRenderer.playerColours(peers)
        #expect(Set(peers.compactMap { colours[$0]?.background }).count == 8)
        // An id keeps the colour derived from it when nobody before it took that colour.
        let alone = ViewerRenderer.playerColours(["PEER1-XXXXX"])["PEER1-XXXXX"]
        #expect(alone != nil && ViewerRenderer.playerColours(["PEER1-XXXXX", "Z"])["PEER1-XXXXX"] == alone)
    }

    @Test func theNewGameFormOpensOnTheChoiceLastMadeOnThisDevice() {
        let game = gameView(["####", "####", "####"], mines: 3)
        #expect(NewGameForm(like: game).selected == 0)
        let expert = NewGameForm(like: game, last: .init(preset: "expert", noGuess: true))
        #expect(expert.arguments == .init(preset: "expert", noGuess: true))
        let custom = NewGameForm(like: game, last: .init(width: 20, height: 10, mines: 30))
        #expect(custom.arguments == .init(width: 20, height: 10, mines: 30, noGuess: false))
        #expect(NewGameForm(like: game, last: .init(width: 4, height: 3, mines: 3)).selected == 0)
        // Starting a game from the form is what it opens on next time.
        var v = viewer(game)
        _ = v.handle(.character("n"))
        _ = v.handle(.down)
        #expect(v.handle(.enter) == [.startGame(.init(preset: "beginner", noGuess: false))])
        #expect(v.lastNewGame == .init(preset: "beginner", noGuess: false))
        _ = v.handle(.character("n"))
        guard case .newGame(let again)? = v.overlay else {
            Issue.record("n did not open the form")
            return
        }
        #expect(again.arguments == .init(preset: "beginner", noGuess: false))
    }

    @Test func theViewerRemembersTheLastNewGameInItsStateDirectory() throws {
        let dir = NSTemporaryDirectory() + "sweeper-viewer-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let memory = ViewerMemory(environment: ["XDG_STATE_HOME": dir, "HOME": "/nonexistent"])
        #expect(memory.lastNewGame == nil)
        memory.rememberNewGame(.init(preset: "expert", noGuess: true, seed: 5))
        #expect(ViewerMemory(environment: ["XDG_STATE_HOME": dir, "HOME": "/nonexistent"]).lastNewGame == .init(preset: "expert", noGuess: true))
        #expect(memory.path.hasPrefix(dir))
    }

    @Test func eachPlayerHasALetterOfTheirOwn() {
        let letters = PlayerLetters.assign(["p1": "h1", "p2": "h2", "p3": "h3", "p4": "Mum", "p5": "Max"])
        #expect(letters == ["p1": "H", "p2": "2", "p3": "3", "p4": "U", "p5": "M"])
        #expect(PlayerLetters.assign(["p1": "ann", "p2": "bob"]) == ["p1": "A", "p2": "B"])
        #expect(PlayerLetters.assign(["p1": "h", "p2": "h"]) == ["p1": "H", "p2": "A"])
        #expect(PlayerLetters.assign(["p1": "🦊"]) == ["p1": "A"])
        // A last move: the letter in the cell's second column; the next cell keeps its own.
        var v = viewer(gameView(["....", "...."], mines: 1))
        v.selfID = "me"
        _ = v.apply(ControlEvent(event: .cells, game: id, cells: [CellChange(x: 0, y: 0, value: "F")], status: .playing, byPeer: "p1", x: 0, y: 0))
        _ = v.apply(ControlEvent(event: .cells, game: id, cells: [CellChange(x: 2, y: 1, value: "F")], status: .playing, byPeer: "p2", x: 2, y: 1))
        v.peers = ["p1", "p2"].map {
            PeerInfo(
                peer: $0, name: $0 == "p1" ? "h1" : "h2", addresses: [], state: .connected, via: [], lastSeenAt: nil, roundTripMillis: nil, sync: nil,
                otherCircle: false)
        }
        let screen = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 44, height: 10)
        let layout = BoardLayout(width: 44, height: 10, boardWidth: 4, boardHeight: 2)
        #expect(screen.line(layout.top).dropFirst(layout.left).hasPrefix("Fh  "), "\(screen.line(layout.top))")
        #expect(screen.line(layout.top + 1).dropFirst(layout.left + 4).hasPrefix("F2  "), "\(screen.line(layout.top + 1))")
    }

    @Test func nOpensAFormForAnyPresetOrACustomSize() {
        var v = viewer(gameView(["##", "##"], mines: 1))
        #expect(v.handle(.character("n")).isEmpty)
        guard case .newGame(let form)? = v.overlay else {
            Issue.record("n opened \(String(describing: v.overlay))")
            return
        }
        // Like this one first, then the presets, then custom.
        #expect(form.choices.count == 5 && form.choices[0] == .like(width: 2, height: 2, mines: 1))
        _ = v.handle(.down)
        _ = v.handle(.down)
        _ = v.handle(.character("g"))
        #expect(v.handle(.enter) == [.startGame(Commands.New.Arguments(preset: "intermediate", noGuess: true))])
        #expect(v.overlay == nil)

        // A custom size is typed field by field (the form opens on the last
        // choice, intermediate with no-guess on, which stays on).
        _ = v.handle(.character("n"))
        for _ in 0..<4 { _ = v.handle(.down) }
        for _ in 0..<3 { _ = v.handle(.backspace) }  // width was 2
        for key in ["4", "0"] { _ = v.handle(.character(Character(key))) }
        _ = v.handle(.tab)
        _ = v.handle(.backspace)
        for key in ["2", "0"] { _ = v.handle(.character(Character(key))) }
        _ = v.handle(.tab)
        _ = v.handle(.backspace)
        for key in ["9", "9"] { _ = v.handle(.character(Character(key))) }
        let screen = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 100, height: 24)
        #expect((0..<24).contains { screen.line($0).contains("custom") && screen.line($0).contains("[99]") })
        #expect(v.handle(.enter) == [.startGame(Commands.New.Arguments(width: 40, height: 20, mines: 99, noGuess: true))])

        // Escape cancels; an incomplete custom size does not start.
        _ = v.handle(.character("n"))
        _ = v.handle(.escape)
        #expect(v.overlay == nil)
        var empty = Viewer()
        _ = empty.handle(.character("n"))
        for _ in 0..<3 { _ = empty.handle(.down) }
        #expect(empty.handle(.enter).isEmpty)
        #expect(empty.message != nil)
    }

    @Test func droppedEventsMakeTheViewerFetchAgain() {
        var v = viewer(gameView(["##", "##"], mines: 1))
        #expect(v.apply(ControlEvent(event: .eventsDropped, dropped: 3)) == [.refresh(game: id), .listPeers])
    }

    @Test func peekIsAToggle() {
        var shown = gameView(["##", "##"], mines: 1)
        shown.mineLayout = ["*.", ".."]
        var v = viewer(shown)
        #expect(v.peekMine(0, 0))
        // c hides the mines, and shows them again without asking.
        #expect(v.handle(.character("c")).isEmpty)
        #expect(!v.peekMine(0, 0) && v.overlay == nil)
        #expect(v.handle(.character("c")).isEmpty)
        #expect(v.peekMine(0, 0) && v.overlay == nil)
        // Another game forgets them.
        v.load(gameView(["##", "##"], mines: 1, id: "0123456789abcdef"))
        #expect(!v.peekMine(0, 0))
    }

    @Test func mouseClicksMapToCells() {
        var v = viewer(gameView(["###", "#2#", "###"], mines: 1))
        let layout = BoardLayout(width: 40, height: 12, boardWidth: 3, boardHeight: 3)
        // Column 4 (1-based) is screen column 3: board column 1; row 3 is board row 0.
        #expect(v.handle(MouseEvent(button: .left, column: 4, row: 3, pressed: true), layout: layout) == [.reveal(game: id, x: 1, y: 0)])
        #expect(v.cursor == BoardPosition(x: 1, y: 0))
        #expect(v.handle(MouseEvent(button: .left, column: 5, row: 4, pressed: true), layout: layout) == [.chord(game: id, x: 1, y: 1)])
        #expect(v.handle(MouseEvent(button: .right, column: 6, row: 5, pressed: true), layout: layout) == [.flag(game: id, x: 2, y: 2)])
        // Releases and clicks off the board do nothing.
        #expect(v.handle(MouseEvent(button: .left, column: 4, row: 3, pressed: false), layout: layout).isEmpty)
        #expect(v.handle(MouseEvent(button: .left, column: 30, row: 3, pressed: true), layout: layout).isEmpty)
    }

    @Test func gameListOpensTheSelectedGame() {
        var v = viewer(gameView(["##", "##"], mines: 1))
        #expect(v.handle(.character("g")) == [.listGames])
        let games = ["g1", "g2"].map {
            GameListing(
                game: $0, width: 9, height: 9, mines: 10, status: .playing, progress: 0, elapsedMillis: 0, playerNames: [], createdAt: 0, assisted: false)
        }
        v.showGames(games)
        _ = v.handle(.down)
        #expect(v.handle(.enter) == [.open(game: "g2")])
        #expect(v.overlay == nil)
        // Escape and p arriving together (Alt-p): the list closes and the peers panel opens.
        _ = v.handle(.character("g"))
        v.showGames(games)
        #expect(v.handle(.alt("p")) == [.listPeers])
        #expect(v.overlay == .peers)
    }

    @Test func aGameStartedElsewhereIsAnnouncedAndTheListOpensOnTheNewest() {
        var v = viewer(gameView(["##", "##"], mines: 1))
        let theirs = GameListing(
            game: "fedcba9876543210", width: 30, height: 16, mines: 99, status: .playing, progress: 0, elapsedMillis: 65000,
            playerNames: ["Mum"], createdAt: 0, assisted: false)
        #expect(v.apply(ControlEvent(event: .gameAdded, game: theirs.game, listing: theirs)).isEmpty)
        #expect(v.message == "Mum started 30×16 (99): g to open")
        // The game list opens on the newest (the first) and shows each game's time.
        let mine = GameListing(
            game: id, width: 2, height: 2, mines: 1, status: .playing, progress: 0, elapsedMillis: 7000, playerNames: ["ann"], createdAt: 0,
            assisted: false)
        _ = v.handle(.character("g"))
        v.showGames([theirs, mine])
        #expect(v.overlay == .games([theirs, mine], selected: 0))
        let screen = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 100, height: 24)
        #expect((0..<24).contains { (screen.line($0).contains("30x16 (99)") || screen.line($0).contains("30×16 (99)")) && screen.line($0).contains("0:01:05") })
        // Its own new game is no news.
        var mineToo = viewer(gameView(["##", "##"], mines: 1, players: [PlayerScore(peer: "me", name: "ann", score: 0)]))
        mineToo.selfID = "me"
        let own = GameListing(
            game: "0000000000000001", width: 9, height: 9, mines: 10, status: .playing, progress: 0, elapsedMillis: 0, playerNames: ["ann"],
            createdAt: 0, assisted: false)
        _ = mineToo.apply(ControlEvent(event: .gameAdded, game: own.game, listing: own))
        #expect(mineToo.message == nil)
    }

    @Test func elapsedTicksOnlyWhilePlaying() {
        var v = Viewer()
        v.tick(100)
        v.load(gameView(["##", "#1"], mines: 1))
        v.tick(105.5)
        #expect(v.elapsed == 47)
        _ = v.apply(ControlEvent(event: .cells, game: id, cells: [CellChange(x: 0, y: 0, value: "X")], status: .lost, byPeer: "p2", trippedByPeer: "p2"))
        v.tick(200)
        #expect(v.elapsed == 47)
        #expect(v.game?.trippedByPeer == "p2")
    }
}

/// The viewer's clock ticks only while the game's time counts.
@Suite struct ViewerClockTests {
    @Test func theClockStopsWhenIdleAndGoesOnWithAKeyOrAnotherPlayer() {
        var v = viewer(gameView(["##", "#1"], mines: 1))
        v.tick(0)
        v.tick(10)
        #expect(v.elapsed == 52, "42 s when fetched, 10 s open")
        // Five minutes and more without a key: the clock stops at the idle limit.
        for t in stride(from: 20.0, through: 900, by: 10) { v.tick(t) }
        #expect(v.elapsed == 42 + Int(Viewer.idleLimit))
        #expect(!v.clockRuns)
        // A key: it goes on.
        _ = v.handle(.right)
        v.tick(910)
        #expect(v.elapsed == 42 + Int(Viewer.idleLimit) + 10)
        // Idle again, but another player watches the game: it goes on.
        for t in stride(from: 920.0, through: 1_300, by: 10) { v.tick(t) }
        let stopped = v.elapsed
        _ = v.apply(ControlEvent(event: .presence, presence: PresenceInfo(peer: "p1", name: "Mum", game: "abcdef1234567890", x: 0, y: 0)))
        v.tick(1_310)
        #expect(v.elapsed == stopped + 10)
        // A game that is over does not tick.
        var over = viewer(gameView(["1*", "11"], mines: 1, status: .won))
        over.tick(0)
        over.tick(30)
        #expect(over.elapsed == 42)
    }
}

/// The ending every viewer shows when the game it has open is won or lost.
@Suite struct EndingOverlayTests {
    static func ending(_ status: PlayStatus, undone: String? = nil) -> GameEnding {
        GameEnding(
            status: status, playedMillis: 102000, threeBV: 30, solvedThreeBV: status == .won ? 30 : 21, threeBVPerSecond: 0.29, clicks: 40,
            efficiency: 0.75,
            parts: [
                GameEnding.PlayerPart(name: "Sam", cellsOpened: 50, threeBV: 20, flagsRight: 4, flagsWrong: 1, clicks: 30, hintCount: 0, peekedAt: nil),
                GameEnding.PlayerPart(name: "Mum", cellsOpened: 10, threeBV: 10, flagsRight: 0, flagsWrong: 0, clicks: 10, hintCount: 2, peekedAt: nil),
            ],
            trippedByName: status == .lost ? "Max" : nil, trippedCell: status == .lost ? CellPosition(x: 3, y: 1) : nil,
            trippedAfterMillis: status == .lost ? 192000 : nil, winThatDidNotStandName: undone, ranked: status == .won,
            record: status == .won ? "Best Beginner 9×9 (10), classic time: Sam & Mum, 0:01:42" : nil)
    }

    @Test func theEndingOpensWhenTheGameEndsAndAnyKeyClosesIt() {
        var v = viewer(gameView(["#1", "11"], mines: 1))
        var done = gameView(["F1", "11"], mines: 1, status: .won)
        done.ending = Self.ending(.won)
        v.load(done)
        guard case .ending? = v.overlay else {
            Issue.record("no ending shown: \(String(describing: v.overlay))")
            return
        }
        let screen = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 100, height: 24)
        let text = screen.text
        #expect(text.contains("Won in 0:01:42.00: 3BV 30/30, 3BV/s 0.29, 40 clicks, efficiency 75%"), "\(text)")
        #expect(text.contains("Sam: 50 cells, 3BV 20, flags 4 right, 1 wrong") && text.contains("Mum: 10 cells, 3BV 10, flags 0 right, 2 hints"))
        #expect(text.contains("New record! Best Beginner 9x9 (10), classic time: Sam & Mum, 0:01:42"))
        _ = v.handle(.character("x"))
        #expect(v.overlay == nil)
        // Fetched again (a late share of time), the same ending does not open twice.
        v.load(done)
        #expect(v.overlay == nil)
    }

    @Test func aWinThatDidNotStandIsSaid() {
        var v = viewer(gameView(["#1", "11"], mines: 1))
        var won = gameView(["F1", "11"], mines: 1, status: .won)
        won.ending = Self.ending(.won)
        v.load(won)
        _ = v.handle(.character("x"))
        var lost = gameView(["X1", "11"], mines: 1, status: .lost)
        lost.ending = Self.ending(.lost, undone: "Sam")
        v.load(lost)
        guard case .ending? = v.overlay else {
            Issue.record("the merge's ending was not shown")
            return
        }
        let text = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 110, height: 24).text
        #expect(text.contains("Max tripped the mine at 3,1 after 0:03:12 while apart from Sam, whose win on the other side does not stand"), "\(text)")
        #expect(v.message?.contains("did not stand") == true)
    }
}

/// A game played again in the viewer.
@Suite struct ReplayViewerTests {
    static let result = Commands.Replay.Result(
        game: "abcdef1234567890", width: 3, height: 2, mines: 1, opening: ["..#", "1##"], startedAt: 1_000_000,
        moves: [
            Commands.ReplayMove(
                index: 1, name: "Sam", authorPeer: "p1", kind: "flag", x: 2, y: 1, changed: [CellChange(x: 2, y: 1, value: "F")],
                atMillis: 4000, madeAt: 1_004_000, status: .playing),
            Commands.ReplayMove(
                index: 2, name: "Mum", authorPeer: "p2", kind: "reveal", x: 2, y: 0, changed: [CellChange(x: 2, y: 0, value: "1")],
                atMillis: 64000, madeAt: 1_064_000, status: .playing),
            Commands.ReplayMove(
                index: 3, name: "Sam", authorPeer: "p1", kind: "reveal", x: 1, y: 1, changed: [CellChange(x: 1, y: 1, value: "1")],
                atMillis: 70000, madeAt: 1_070_000, status: .won),
        ],
        status: .won)

    @Test func stepsShowWhoDidWhatWhereAndPlayOnAtItsSpeed() {
        var v = Viewer()
        v.startReplay(Self.result)
        #expect(v.replay?.position == 0 && v.look(2, 0) == "#" && v.replayTimeline?.contains("move 0/3") == true)
        _ = v.handle(.home)
        _ = v.handle(.right)
        #expect(v.look(2, 1) == "F" && v.lastActed == ["p1": BoardPosition(x: 2, y: 1)] && v.cursor == BoardPosition(x: 2, y: 1))
        #expect(v.replayTimeline == "replay · move 1/3 · 0:00:04 · Sam flag at 2,1 · 1× · paused")
        _ = v.handle(.right)
        #expect(v.look(2, 0) == "1" && v.lastActed["p2"] == BoardPosition(x: 2, y: 0))
        let screen = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 80, height: 12)
        // Mum's mark beside the cell she opened, Sam's beside his flag.
        #expect(screen.line(2).hasPrefix("|    1m") && screen.line(3).hasPrefix("|1 # Fs"), "\(screen.text)")
        #expect(screen.text.contains("move 2/3 · 0:01:04 · Mum reveal at 2,0"))
        // Back a step: the board as it was.
        _ = v.handle(.left)
        #expect(v.look(2, 0) == "#" && v.replay?.position == 1)
        // Played on at 2×: a move every half second of the viewer's clock, none sooner.
        _ = v.handle(.character("+"))
        _ = v.handle(.character(" "))
        v.tick(v.clock + 0.3)
        #expect(v.advanceReplay() == [] && v.replay?.position == 1)
        v.tick(v.clock + 0.3)
        _ = v.advanceReplay()
        #expect(v.replay?.position == 2)
        _ = v.handle(.end)
        #expect(v.game?.status == .won && v.replay?.position == 3)
        // Esc leaves it for the game as it is now.
        #expect(v.handle(.escape) == [.refresh(game: "abcdef1234567890")] && v.replay == nil)
    }

    @Test func theEndingsRStartsAReplay() {
        var v = viewer(gameView(["#1", "11"], mines: 1))
        var done = gameView(["F1", "11"], mines: 1, status: .won)
        done.ending = EndingOverlayTests.ending(.won)
        v.load(done)
        #expect(v.handle(.character("r")) == [.replay(game: done.game)])
    }
}
