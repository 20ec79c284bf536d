import SweeperControl
import Testing

@testable import SweeperTUI

/// Keys a family reached for: `r` replays any game, `q` in a replay comes
/// back to the board, a finished game opened again shows how it ended,
/// `G` says plainly why it does nothing, and `g` lists games in columns.
@Suite struct ViewerKeysTests {
    @Test func rReplaysAndQInAReplayComesBackToTheBoard() {
        var v = viewer(gameView(["##", "##"], mines: 1))
        #expect(v.handle(.character("r")) == [.replay(game: "abcdef1234567890")])
        v.startReplay(ReplayViewerTests.result)
        #expect(v.replay != nil)
        // q leaves the replay, not the viewer: the game as it is now is fetched again.
        #expect(v.handle(.character("q")) == [.refresh(game: ReplayViewerTests.result.game)])
        #expect(v.replay == nil && !v.quitting)
        // On the board, q still quits.
        #expect(v.handle(.character("q")) == [.quit])
    }

    @Test func theHelpAndTheReplayLineSayHowToReplayAndComeBack() {
        var v = viewer(gameView(["##", "##"], mines: 1))
        _ = v.handle(.character("?"))
        let help = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 100, height: 40).text
        #expect(help.contains("r                 replay the game, move by move") && help.contains("q back"), "\(help)")
        var r = Viewer()
        r.startReplay(ReplayViewerTests.result)
        let screen = ViewerRenderer(glyphs: .ascii, color: false).render(&r, width: 100, height: 12).text
        #expect(screen.contains("q back to the game") && !screen.contains("q quit"), "\(screen)")
    }

    @Test func aFinishedGameOpenedAgainShowsItsEndingAndOffersR() {
        var v = viewer(gameView(["##", "##"], mines: 1))
        var done = gameView(["F1", "11"], mines: 1, status: .won, id: "0123456789abcdef")
        done.ending = EndingOverlayTests.ending(.won)
        v.load(done)
        guard case .ending? = v.overlay else {
            Issue.record("no ending on a finished game opened: \(String(describing: v.overlay))")
            return
        }
        let text = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 100, height: 24).text
        #expect(text.contains("r plays the game again"))
        #expect(v.handle(.character("r")) == [.replay(game: "0123456789abcdef")])
        // Closed, the keys line offers the replay first.
        v.load(done)
        let board = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 80, height: 12)
        #expect(board.line(11).hasPrefix(" r replay | n new game"), "\(board.text)")
    }

    @Test func openingAnothersBoardOfTodayAsksFirst() {
        var v = viewer(gameView(["##", "##"], mines: 1))
        v.askToLook(
            game: "fedcba9876543210",
            why: "that is Max's board of the day, the same board as yours: looking at it before yours has ended "
                + "marks yours as having looked at the mines (not ranked), for everyone to see")
        guard case let .confirm(question, action)? = v.overlay else {
            Issue.record("nothing asked: \(String(describing: v.overlay))")
            return
        }
        #expect(question.hasPrefix("That is Max's board of the day") && question.hasSuffix("Open it? (y/n)") && action == .look(game: "fedcba9876543210"))
        // The question is wrapped in its box: every word shows at 80 columns.
        let text = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 80, height: 24).text
        #expect(text.contains("for everyone to see. Open it? (y/n)") && text.contains("| That is Max's board of the day"), "\(text)")
        #expect(v.handle(.character("n")).isEmpty && v.overlay == nil)
        v.askToLook(game: "fedcba9876543210", why: "that is Max's board of the day")
        #expect(v.handle(.character("y")) == [.look(game: "fedcba9876543210")])
    }

    @Test func aRenameShowsAtOnceWhereverThePlayerIsNamed() {
        var v = viewer(
            gameView(["##", "##"], mines: 1, players: [PlayerScore(peer: "p2", name: "Mum", score: 3), PlayerScore(peer: "me", name: "ann", score: 1)]))
        v.selfID = "me"
        _ = v.apply(ControlEvent(event: .presence, presence: PresenceInfo(peer: "p2", name: "Mum", game: "abcdef1234567890", x: 0, y: 0)))
        var renamed = PresenceInfo(peer: "p2", name: "Grandma", game: nil, x: nil, y: nil, colour: 3)
        renamed.letter = "G"
        // The daemon's letter goes by name: the new one is taken, and the view fetched again for the others'.
        let actions = v.apply(ControlEvent(event: .profileChanged, presence: renamed))
        #expect(actions == [.refresh(game: v.game?.game ?? "")], "\(actions)")
        #expect(v.game?.players.first { $0.peer == "p2" }?.name == "Grandma" && v.presence["p2"]?.name == "Grandma" && v.name(of: "p2") == "Grandma")
        #expect(v.game?.players.first { $0.peer == "p2" }?.letter == "G" && v.presence["p2"]?.letter == "G")
        #expect(ViewerRenderer.playerMarks(v)["p2"]?.letter == "G")
        let screen = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 100, height: 12).text
        #expect(screen.contains("Players: Grandma 3") && screen.contains("looking: ") && screen.contains("Grandma 0,0") && !screen.contains("Mum"), "\(screen)")
        // This player's own name, before any view names it, is its name, not a raw id.
        v.selfName = "ann"
        #expect(Viewer().name(of: "me") == ControlFormatting.shortID("me"))
        var fresh = Viewer()
        fresh.selfID = "me"
        fresh.selfName = "ann"
        #expect(fresh.name(of: "me") == "ann")
    }

    @Test func theDaemonsLetterIsTheSameOnEveryScreen() {
        // Sam's screen shows Max and Mum; Max's shows Mum alone. Alone, Mum would be M; the daemon says U.
        func screen(of others: [(String, String)]) -> Viewer {
            var v = viewer(gameView(["##", "##"], mines: 1))
            for (peer, name) in others {
                var p = PresenceInfo(peer: peer, name: name, game: "abcdef1234567890", x: 0, y: 0)
                p.letter = name == "Mum" ? "U" : "M"
                _ = v.apply(ControlEvent(event: .presence, presence: p))
            }
            return v
        }
        let sams = ViewerRenderer.playerMarks(screen(of: [("pmax", "Max"), ("pmum", "Mum")]))
        let maxs = ViewerRenderer.playerMarks(screen(of: [("pmum", "Mum")]))
        #expect(sams["pmum"]?.letter == "U" && maxs["pmum"]?.letter == "U" && sams["pmax"]?.letter == "M")
        // Without the daemon's letter (an older daemon), the screen hands them out itself.
        var old = viewer(gameView(["##", "##"], mines: 1))
        _ = old.apply(ControlEvent(event: .presence, presence: PresenceInfo(peer: "pmum", name: "Mum", game: "abcdef1234567890", x: 0, y: 0)))
        #expect(ViewerRenderer.playerMarks(old)["pmum"]?.letter == "M")
    }

    @Test func anotherRacersCursorIsInTheRaceLineNotOnYourBoard() {
        var view = gameView(["####", "1234", "####"], mines: 3)
        view.race = Commands.RaceTable(
            shownPeer: "me",
            racers: [
                Commands.RacerStanding(peer: "me", name: "ann", status: .playing, progress: 0.2, flags: 0),
                Commands.RacerStanding(peer: "p2", name: "Sam", status: .playing, progress: 0.4, flags: 0),
            ])
        var v = viewer(view)
        v.selfID = "me"
        v.cursor = BoardPosition(x: 0, y: 0)
        _ = v.apply(ControlEvent(event: .presence, presence: PresenceInfo(peer: "p2", name: "Sam", game: "abcdef1234567890", x: 2, y: 1)))
        let screen = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 100, height: 12)
        let layout = BoardLayout(width: 100, height: 12, boardWidth: 4, boardHeight: 3)
        // No mark beside Sam's cell on this board: his cursor is on his own board.
        #expect(screen[layout.left + 2 * 2 + 1, layout.top + 1].character != "S", "\(screen.text)")
        #expect(screen.text.contains("Race: ann 20%, Sam 40% at 2,1"), "\(screen.text)")
        // Showing Sam's board, his cursor is drawn on it.
        view.race?.shownPeer = "p2"
        v.load(view)
        let his = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 100, height: 12)
        #expect(his[layout.left + 2 * 2 + 1, layout.top + 1].character == "S", "\(his.text)")
    }

    @Test func theNewGameFormKeepsItsValuesWhenRefusedAndOffersPlayersPrivateAndRace() {
        var v = viewer(gameView(["##", "##"], mines: 1))
        _ = v.handle(.character("n"))
        for _ in 0..<4 { _ = v.handle(.down) }  // custom
        for _ in 0..<3 { _ = v.handle(.backspace) }
        for key in ["5", "0", "0"] { _ = v.handle(.character(Character(key))) }
        // Players typed (keys that are toggles elsewhere type here), a race, private.
        _ = v.handle(.character("a"))
        for c in "Mum, Max" { _ = v.handle(.character(c)) }
        _ = v.handle(.enter)
        _ = v.handle(.character("r"))
        _ = v.handle(.character("p"))
        let screen = ViewerRenderer(glyphs: .ascii, color: false).render(&v, width: 100, height: 24).text
        #expect(screen.contains("race: on") && screen.contains("private: on") && screen.contains("players: Mum, Max"), "\(screen)")
        let start = v.handle(.enter)
        guard case let .startGame(asked)? = start.first else {
            Issue.record("no game asked for: \(start)")
            return
        }
        #expect(asked.width == 500 && asked.players == ["Mum", "Max"] && asked.race == true && asked.privateGame == true)
        // The daemon refuses the width: the form comes back as it was, saying why.
        v.failed("width must be 5 to 4096")
        guard case let .newGame(form)? = v.overlay else {
            Issue.record("the form did not come back: \(String(describing: v.overlay))")
            return
        }
        #expect(form.custom[0] == "500" && form.playerNames == ["Mum", "Max"] && form.race && form.privateGame)
        #expect(v.message == "width must be 5 to 4096")
        // Another failure later (no form pending) only says so.
        _ = v.handle(.escape)
        v.failed("the daemon went away")
        #expect(v.overlay == nil)
    }

    @Test func gOnAGameThatIsNoRaceSaysSo() {
        var v = viewer(gameView(["##", "##"], mines: 1))
        #expect(v.handle(.character("G")).isEmpty && v.overlay == nil)
        #expect(v.message == "This game is no race: G gives up only your own board in a race.")
    }

    @Test func theGameListIsInColumnsWithItsMarks() {
        var v = viewer(gameView(["##", "##"], mines: 1))
        var race = GameListing(
            game: "1111111111111111", width: 30, height: 16, mines: 99, status: .playing, progress: 0.5, elapsedMillis: 65000, playerNames: ["Mum", "Sam"],
            createdAt: 0, assisted: false)
        race.race = true
        var daily = GameListing(
            game: "2222222222222222", width: 9, height: 9, mines: 10, status: .won, progress: 1, elapsedMillis: 7000, playerNames: ["Max"], createdAt: 0,
            assisted: true)
        daily.day = "2026-11-28"
        daily.noGuess = true
        _ = v.handle(.character("g"))
        v.showGames([race, daily])
        let screen = ViewerRenderer(glyphs: .unicode, color: false).render(&v, width: 120, height: 24)
        let rows = (0..<24).map(screen.line)
        let raceRow = rows.first { $0.contains("11111111") } ?? "", dailyRow = rows.first { $0.contains("22222222") } ?? ""
        #expect(raceRow.contains("race") && dailyRow.contains("assisted, day 2026-11-28") && dailyRow.contains("9×9 (10) no-guess"), "\(rows)")
        // Each column starts at the same place on both rows.
        let timeAt = { (row: String) in row.distance(from: row.startIndex, to: row.range(of: "0:0")?.lowerBound ?? row.startIndex) }
        #expect(timeAt(raceRow) == timeAt(dailyRow) && timeAt(raceRow) > 0, "\(raceRow)\n\(dailyRow)")
        let playersAt = { (row: String, name: String) in row.distance(from: row.startIndex, to: row.range(of: name)?.lowerBound ?? row.startIndex) }
        #expect(playersAt(raceRow, "Mum") == playersAt(dailyRow, "Max"), "\(raceRow)\n\(dailyRow)")
    }
}
