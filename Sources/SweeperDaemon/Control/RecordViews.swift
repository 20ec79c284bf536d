import FoundationEssentials
import SweeperControl
import SweeperCrypto
import SweeperGame
import SweeperSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Records and endings as `scores`, `show` and the viewer give them.
///
/// A won game is **ranked** when nobody asked for a hint or looked at the
/// mines and its creator did not choose the seed; an assisted win is
/// listed apart with who was helped, and a seeded one as practice. Ranked
/// wins compete within their **class**: the same width, height and mines,
/// no-guess boards apart from classic ones. A game played together credits
/// every player who made a move.
extension ReplyViews {
    /// How many best times each class lists.
    static let classSize = 10

    /// A class of records.
    struct RecordClass: Hashable, Comparable {
        var width: Int, height: Int, mines: Int, noGuess: Bool

        init(_ p: GameParameters) {
            width = p.width
            height = p.height
            mines = p.mines
            noGuess = p.noGuess
        }

        static func < (a: Self, b: Self) -> Bool {
            (a.width * a.height, a.width, a.mines, a.noGuess ? 1 : 0) < (b.width * b.height, b.width, b.mines, b.noGuess ? 1 : 0)
        }

        /// "Beginner 9×9 (10), no-guess"; a custom size by its size alone.
        var name: String {
            let size = ControlFormatting.size(width: width, height: height, mines: mines)
            let preset = Preset.allCases.first { $0.width == width && $0.height == height && $0.mines == mines }
            return (preset.map { $0.rawValue.prefix(1).uppercased() + $0.rawValue.dropFirst() + " " } ?? "") + size
                + (noGuess ? ", no-guess" : ", classic")
        }
    }

    /// A game as the records count it: a game played together, or one
    /// racer's board in a race (a race counts for each racer like a game
    /// of its own of that class).
    struct Played {
        /// The game.
        var replica: GameReplica
        /// The game's state, or the racer's board.
        var state: GameState
        /// In a race, whose board.
        var racer: PeerID?
    }

    /// Every game of `games` as the records count it: each race once per racer.
    static func played(_ games: [(GameReplica, GameState)]) -> [Played] {
        games.flatMap { replica, state -> [Played] in
            guard state.isRace else { return [Played(replica: replica, state: state, racer: nil)] }
            return state.racers.compactMap { r in state.lane(of: r).map { Played(replica: replica, state: $0, racer: r) } }
        }
    }

    /// Who a played game credits: the racer, or every player who moved.
    func players(_ g: Played) -> [PeerID] { g.racer.map { [$0] } ?? players(g.replica, g.state) }

    /// A played game's time in milliseconds: a racer's from the race's
    /// start to its end; a game played together, its played time.
    func millis(_ g: Played) -> UInt64 {
        g.racer != nil ? g.state.elapsedMillis(nowMillis: clock.wallMillis) : play.playedMillis(g.state)
    }

    /// 3BV per second of `millis`, absent for no time.
    static func rate(_ threeBV: Int, millis: UInt64) -> Double? {
        millis > 0 ? Double(threeBV) * 1000 / Double(millis) : nil
    }

    /// Whether a game is won by playing (a move made, not only the opening):
    /// in a race, by the racer.
    static func wasPlayed(_ g: Played) -> Bool {
        guard let racer = g.racer else { return !g.replica.revealers.isEmpty }
        return g.replica.revealers.contains(racer)
    }

    /// A won game as a line of the records.
    func bestTime(_ g: Played, figures: GameFigures?) -> Commands.BestTime {
        let state = g.state
        let p = state.genesis.parameters
        let ms = millis(g)
        var entry = Commands.BestTime(
            width: p.width, height: p.height, mines: p.mines, playedMillis: Int(clamping: ms), game: state.gameID.description,
            playerNames: players(g).map(name(of:)), startedAt: Int64(clamping: state.startMillis), endedAt: state.endMillis.map { Int64(clamping: $0) })
        entry.noGuess = p.noGuess
        if let figures { entry.threeBVPerSecond = Self.rate(figures.solvedThreeBV, millis: ms) }
        return entry
    }

    /// Whether a game competes for records: won by playing, with no hint,
    /// no look at the mines, and no seed chosen.
    static func isRanked(_ g: Played) -> Bool {
        g.state.status == .won && !g.state.isAssisted && !g.state.isSeeded && wasPlayed(g)
    }

    /// The ranked wins of `games` (of class `only`, when given) by class,
    /// each class fastest first; with `figures`, with their 3BV per second.
    func rankedWins(_ games: [Played], only: RecordClass? = nil, figures: Bool = true) -> [RecordClass: [Commands.BestTime]] {
        var classes: [RecordClass: [Commands.BestTime]] = [:]
        for g in games where Self.isRanked(g) {
            let c = RecordClass(g.state.genesis.parameters)
            guard only.map({ $0 == c }) ?? true else { continue }
            classes[c, default: []].append(bestTime(g, figures: figures ? g.replica.figures(of: g.racer) : nil))
        }
        return classes.mapValues {
            $0.sorted {
                ($0.playedMillis, $0.startedAt, $0.game, $0.playerNames.joined(separator: ",")) < (
                    $1.playedMillis, $1.startedAt, $1.game, $1.playerNames.joined(separator: ",")
                )
            }
        }
    }

    /// Who asked for hints in a game, most first.
    func hints(_ state: GameState) -> [Commands.HintCount] {
        state.hintsBy.map { Commands.HintCount(name: name(of: $0.key), hintCount: $0.value) }.sorted { ($1.hintCount, $0.name) < ($0.hintCount, $1.name) }
    }

    /// Who looked at the mines in a game, earliest first.
    func peeks(_ state: GameState) -> [Commands.Peek] {
        state.peeks.map { Commands.Peek(name: name(of: $0.key), peekedAt: Int64(clamping: $0.value)) }.sorted {
            ($0.peekedAt, $0.name) < ($1.peekedAt, $1.name)
        }
    }

    /// `scores`: every class's ten best, the wins not ranked, and with
    /// `player` that player's records and totals.
    func scores(_ held: [(GameReplica, GameState)], player: String?) throws -> Commands.Scores.Result {
        let games = Self.played(held)
        let ranked = rankedWins(games)
        let classes = ranked.keys.sorted().map { c in
            Commands.ScoreClass(
                name: c.name, width: c.width, height: c.height, mines: c.mines, noGuess: c.noGuess,
                best: Array(ranked[c, default: []].prefix(Self.classSize)))
        }
        var assisted: [Commands.AssistedWin] = []
        var practice: [Commands.BestTime] = []
        for g in games where g.state.status == .won && Self.wasPlayed(g) {
            if g.state.isSeeded {
                practice.append(bestTime(g, figures: nil))
            } else if g.state.isAssisted {
                assisted.append(Commands.AssistedWin(win: bestTime(g, figures: nil), hints: hints(g.state), peeks: peeks(g.state)))
            }
        }
        assisted.sort { $0.win.startedAt > $1.win.startedAt }
        practice.sort { $0.startedAt > $1.startedAt }
        return Commands.Scores.Result(
            scores: classes.compactMap(\.best.first), classes: classes, assistedWins: assisted, practice: practice,
            player: try player.map { try record(of: $0, in: games, ranked: ranked) })
    }

    /// A player's totals over every game held here, and their best ranked time per class.
    func record(of asked: String, in games: [Played], ranked: [RecordClass: [Commands.BestTime]]) throws -> Commands.PlayerRecord {
        // Names are unique regardless of case: `max` finds Max.
        let authors = Set(games.flatMap { players($0) }).filter { name(of: $0).equalsIgnoringCase(asked) }
        guard let named = authors.first.map(name(of:)) else {
            let player = asked
            let known = Set(games.flatMap { players($0).map(name(of:)) }).sorted()
            throw ControlError.badArguments(
                "no player named \(player) has made a move here" + (known.isEmpty ? "" : " (players: \(known.joined(separator: ", ")))"))
        }
        let player = named
        var played = 0, won = 0, lost = 0, tripped = 0
        for g in games where Self.wasPlayed(g) {
            // A game played together counts for whoever moved in it; a racer's board for its racer.
            guard g.racer.map({ authors.contains($0) }) ?? !authors.isDisjoint(with: g.replica.authors) else { continue }
            played += 1
            if g.state.status == .won { won += 1 }
            if g.state.status == .lost { lost += 1 }
            if let t = g.state.trippedBy, authors.contains(t) { tripped += 1 }
        }
        let mine = ranked.keys.sorted().compactMap { c in ranked[c]?.first { $0.playerNames.contains(player) } }
        return Commands.PlayerRecord(
            name: player, played: played, won: won, lost: lost, minesTripped: tripped,
            bestThreeBVPerSecond: ranked.values.joined().filter { $0.playerNames.contains(player) }.compactMap(\.threeBVPerSecond).max(),
            records: mine)
    }

    /// How `state` ended, once it did (in a race, how `racer`'s board
    /// did: `state` is then that board); `games` (every game held) decides
    /// whether it set a record of its class.
    func ending(_ replica: GameReplica, _ state: GameState, racer: PeerID? = nil, games: [(GameReplica, GameState)]?) -> GameEnding? {
        let g = Played(replica: replica, state: state, racer: racer)
        guard state.status != .playing, let figures = replica.figures(of: racer) else { return nil }
        let ms = millis(g)
        let geometry = state.genesis.geometry
        let parts = figures.parts.map { author, p in
            GameEnding.PlayerPart(
                name: name(of: author), cellsOpened: p.cellsOpened, threeBV: p.threeBV, flagsRight: p.flagsRight, flagsWrong: p.flagsWrong,
                clicks: p.clicks, hintCount: p.hints, peekedAt: p.peekedAtMillis.map { Int64(clamping: $0) })
        }.sorted { ($1.threeBV, $1.cellsOpened, $0.name) < ($0.threeBV, $0.cellsOpened, $1.name) }
        // Only a win counts for records; what kept a win out is said.
        let ranked = Self.isRanked(g)
        var why: [String] = []
        if state.isSeeded { why.append("a practice game (its seed was chosen)") }
        why += hints(state).map { "\($0.name) asked for \($0.hintCount) hint" + ($0.hintCount == 1 ? "" : "s") }
        why += peeks(state).map { "\($0.name) looked at the mines" }
        if why.isEmpty && !ranked { why.append("the opening won it") }
        var record: String?
        if ranked, let games {
            let c = RecordClass(state.genesis.parameters)
            let names = players(g).map(name(of:))
            if let best = rankedWins(Self.played(games), only: c, figures: false)[c]?.first,
                best.game == state.gameID.description, best.playerNames == names
            {
                record = "Best \(c.name) time: \(best.playerNames.joined(separator: " & ")), \(ControlFormatting.duration(millis: best.playedMillis))"
            }
        }
        let trippedAt = state.trippedMine.map { geometry.cell(at: $0) }.map { CellPosition(x: $0.x, y: $0.y) }
        // One time for a game: the mine was tripped when the game ended, after its played time.
        let trippedAfter = state.status == .lost ? Int(clamping: ms) : nil
        let ending = GameEnding(
            status: state.status.shown, playedMillis: Int(clamping: ms), threeBV: figures.threeBV, solvedThreeBV: figures.solvedThreeBV,
            threeBVPerSecond: Self.rate(figures.solvedThreeBV, millis: ms), clicks: figures.clicks,
            efficiency: figures.efficiency, parts: parts, trippedByName: state.trippedBy.map(name(of:)), trippedCell: trippedAt,
            trippedAfterMillis: trippedAfter, winThatDidNotStandName: figures.winThatDidNotStand.map(name(of:)), ranked: ranked,
            notRanked: state.status == .won && !ranked ? why.joined(separator: "; ") : nil, record: record)
        return ending
    }
}

// MARK: The board of the day

extension ReplyViews {
    /// A day's table: `games` are the day's boards, one per player
    /// (``GameService/dailyGames(of:keys:)``), `streaks` each player's
    /// run of days won (``GameService/dailyStreaks(to:keys:)``).
    ///
    /// A board only made (`daily --json` makes it, a look at another's
    /// marks it) is not in the table until its player moves: looking does
    /// not enter anyone.
    func dailyTable(day: Int, games: [(replica: GameReplica, state: GameState)], streaks: [PeerID: Int]) -> Commands.DailyTable {
        // Played: a click beyond the opening (only its player moves in it), or over.
        let played = games.filter { $0.state.status != .playing || ($0.replica.figures(of: nil)?.clicks ?? 0) > 1 }
        let results = played.map { replica, state -> Commands.DailyResult in
            let ms = play.playedMillis(state)
            var result = Commands.DailyResult(
                name: name(of: state.creator), peer: state.creator.description, game: state.gameID.description, status: state.status.shown,
                playedMillis: Int(clamping: ms), progress: state.board.progress, assisted: state.isAssisted ? true : nil)
            if state.status == .won, let figures = replica.figures(of: nil) {
                result.threeBVPerSecond = Self.rate(figures.solvedThreeBV, millis: ms)
            }
            return result
        }
        let rank = { (r: Commands.DailyResult) -> Int in r.status == .won ? 0 : r.status == .playing ? 1 : 2 }
        let key = { (r: Commands.DailyResult) in (rank(r), r.status == .won ? Double(r.playedMillis) : -r.progress, r.name) }
        let ordered = results.sorted { key($0) < key($1) }
        let runs = streaks.filter { $0.value > 0 }.map { Commands.DailyStreak(name: name(of: $0.key), peer: $0.key.description, days: $0.value) }
        return Commands.DailyTable(date: DailyBoard.date(of: day), results: ordered, streaks: runs.sorted { ($1.days, $0.name) < ($0.days, $1.name) })
    }
}
