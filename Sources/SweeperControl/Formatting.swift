import FoundationEssentials
import SweeperConventions

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Text forms of control results, shared by the CLI and the viewer.
public enum ControlFormatting {
    /// `H:MM:SS`.
    public static func duration(_ seconds: Int) -> String {
        let s = max(0, seconds)
        return String(cFormat: "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60)
    }

    /// A played time as records give it: `H:MM:SS.hh` when known to the
    /// millisecond (so a win in under a second shows its time), else `H:MM:SS`.
    public static func duration(_ seconds: Int, millis: Int?) -> String {
        guard let millis, millis >= 0 else { return duration(seconds) }
        return duration(millis / 1000) + String(cFormat: ".%02ld", (millis % 1000) / 10)
    }

    /// A played time in milliseconds as records give it: `H:MM:SS.hh`
    /// (so a win in under a second shows its time).
    public static func duration(millis: Int) -> String {
        duration(max(0, millis) / 1000, millis: max(0, millis))
    }

    /// A played time in milliseconds to the whole second, `H:MM:SS`.
    public static func duration(wholeSecondsOf millis: Int) -> String {
        duration(max(0, millis) / 1000)
    }

    /// `1 mine`, `2 mines`: a count and its noun, plural unless one.
    public static func count(_ n: Int, _ noun: String, plural: String? = nil) -> String {
        "\(n) " + (n == 1 ? noun : plural ?? noun + "s")
    }

    /// `30×16 (99)`.
    public static func size(width: Int, height: Int, mines: Int) -> String { "\(width)×\(height) (\(mines))" }

    /// `won`, `lost`, or `playing` with the progress as a percentage: the
    /// words the JSON, the viewer and the man pages use.
    public static func status(_ status: PlayStatus, progress: Double) -> String {
        switch status {
        case .won: "won"
        case .lost: "lost"
        case .playing: "playing \(Int((progress * 100).rounded(.down)))%"
        }
    }

    /// A date as `2026-11-23 18:05`, in local time, 24-hour whatever the
    /// locale: the one date format every command prints. Within an hour of
    /// `near` (an expiry seconds away), with seconds: `2026-11-23 18:05:42`.
    public static func date(_ secondsSince1970: Double, near: Date? = nil) -> String {
        let close = near.map { abs($0.timeIntervalSince1970 - secondsSince1970) < 3600 } ?? false
        return String(localTime: secondsSince1970, format: close ? "%Y-%m-%d %H:%M:%S" : "%Y-%m-%d %H:%M")
    }

    /// ``date(_:near:)`` of a time in ms since 1970.
    public static func date(millis: UInt64, near: Date? = nil) -> String {
        date(Double(millis) / 1000, near: near)
    }

    /// ``date(_:near:)`` of an instant in ms since 1970, as answers give them (`…At`).
    public static func date(at millis: Int64, near: Date? = nil) -> String {
        date(Double(millis) / 1000, near: near)
    }

    /// Seconds from an instant (ms since 1970) to `now`, never below 0.
    public static func secondsSince(_ millis: Int64, now: Date = Date()) -> Double {
        max(0, now.timeIntervalSince1970 - Double(millis) / 1000)
    }

    /// An id as tables and messages show it: a peer id (or an invitation's,
    /// written the same way, in hyphenated groups) by its first group, five
    /// characters, as the daemon's own messages name a device; a game id
    /// by its first 8 characters.
    public static func shortID(_ id: String) -> String {
        if let hyphen = id.firstIndex(of: "-") { return String(id[..<hyphen]) }
        return String(id.prefix(8))
    }

    /// Lays out rows as left-aligned columns separated by two spaces.
    public static func table(_ header: [String], _ rows: [[String]]) -> String {
        let all = [header] + rows
        var widths = [Int](repeating: 0, count: header.count)
        // Aligned by the columns a terminal draws (a name with emoji takes two per emoji).
        for row in all { for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], DisplayWidth.of(cell)) } }
        return all.map { row in
            row.enumerated().map { i, cell in
                i == row.count - 1 || i >= widths.count ? cell : DisplayWidth.padded(cell, to: widths[i])
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    /// What sets a game apart, in words: `assisted`, `watching`, `private`,
    /// `only on this device`, `race`, `day 2026-11-28`, `practice`. The
    /// `games` table and the viewer's list say the same.
    public static func marks(_ g: GameListing) -> [String] {
        var marks: [String] = []
        if g.assisted { marks.append("assisted") }
        if g.watching == true { marks.append("watching") }
        if g.privateGame == true { marks.append("private") }
        if g.onlyHere == true { marks.append("only on this device") }
        if g.race == true { marks.append("race") }
        if let day = g.day { marks.append("day \(day)") }
        if g.seeded == true { marks.append("practice") }
        return marks
    }

    /// Rows of cells aligned in columns (by the columns a terminal draws),
    /// two spaces apart, with no header: the viewer's lists.
    public static func columns(_ rows: [[String]]) -> [String] {
        let count = rows.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], DisplayWidth.of(cell)) } }
        return rows.map { row in
            var line = row.enumerated().map { i, cell in i == row.count - 1 ? cell : DisplayWidth.padded(cell, to: widths[i]) }.joined(separator: "  ")
            while line.last == " " { line.removeLast() }
            return line
        }
    }

    /// The `games` table.
    public static func games(_ games: [GameListing]) -> String {
        if games.isEmpty { return "No games yet. Start one with `sweeper new`.\n" }
        return table(
            ["GAME", "SIZE", "STATUS", "ELAPSED", "STARTED", "ENDED", "PLAYERS"],
            games.map { g -> [String] in
                let state = ([status(g.status, progress: g.progress)] + marks(g).map { "(\($0))" }).joined(separator: " ")
                let ended: String = g.endedAt.map { date(at: $0) } ?? "-"
                let players: String = g.chosenPlayerNames.map { "only " + $0.joined(separator: ", ") } ?? g.playerNames.joined(separator: ", ")
                return [
                    shortID(g.game) + (g.archived == true ? " (archived)" : ""),
                    size(width: g.width, height: g.height, mines: g.mines) + (g.noGuess == true ? " no-guess" : ""), state,
                    duration(wholeSecondsOf: g.elapsedMillis), date(at: g.createdAt), ended, players,
                ]
            })
    }

    /// The games peers have and this device does not, as `games --available` adds them.
    public static func available(_ games: [AvailableGame]) -> String {
        if games.isEmpty { return "\nNo other games on the linked peers.\n" }
        return "\nOn linked peers (sweeper follow GAME):\n"
            + table(
                ["GAME", "SIZE", "STATUS", "STARTED", "CREATOR", "PLAYERS", "OPS", "HELD BY"],
                games.map { g -> [String] in
                    var sized = "-"
                    if let w = g.width, let h = g.height, let m = g.mines {
                        sized = size(width: w, height: h, mines: m) + (g.noGuess == true ? " no-guess" : "")
                    }
                    let players =
                        g.chosenPlayerNames.map { "only " + $0.joined(separator: ", ") }
                        ?? g.playerNames.map { $0.joined(separator: ", ") } ?? "\(g.playerCount)"
                    return [
                        shortID(g.game) + (g.forgotten ? " (forgotten)" : ""), sized, g.status.map { status($0, progress: g.progress ?? 0) } ?? "-",
                        g.createdAt.map { date(at: $0) } ?? "-", g.creatorName ?? "-", players, "\(g.ops)", g.heldByNames.joined(separator: ", "),
                    ]
                })
    }

    /// What `sync` prints: the mode and the games followed and forgotten.
    public static func sync(_ r: Commands.Sync.Result) -> String {
        var out = "Sync: \(r.mode.rawValue)"
        out += r.mode == .all ? " (every game of the circle but those forgotten)\n" : " (the games held here and those followed)\n"
        if !r.followedGames.isEmpty { out += "Followed: \(r.followedGames.map(shortID).joined(separator: ", "))\n" }
        if !r.forgottenGames.isEmpty { out += "Forgotten: \(r.forgottenGames.map(shortID).joined(separator: ", "))\n" }
        return out
    }

    /// The board and its status line, as `show` prints them.
    public static func show(_ v: GameView) -> String {
        var out = "Game \(v.game)\n"
        let columnsHeader = "   " + (0..<v.width).map { String($0 % 10) }.joined()
        out += columnsHeader + "\n"
        // After a loss a flag on a safe cell is drawn `x`, as the viewer draws it ✗.
        let wrong = Set((v.wrongFlags ?? []).map { $0.y * v.width + $0.x })
        for (y, row) in v.board.enumerated() {
            let drawn = wrong.isEmpty ? row : String(row.enumerated().map { x, c in wrong.contains(y * v.width + x) ? "x" : c })
            out += String(cFormat: "%2ld ", y % 100) + drawn + "\n"
        }
        out += statusLine(v) + "\n"
        if let over = v.overQuotaByNames, !over.isEmpty {
            out += "Warning: \(over.joined(separator: ", ")) sent more moves than a game can take; they were refused (a broken device, or an attack).\n"
        }
        if let forked = v.equivocatedByNames, !forked.isEmpty {
            out +=
                "Warning: \(forked.joined(separator: ", ")) signed two different moves at one place: devices may show different boards (a broken device, or an attack).\n"
        }
        if let layout = v.mineLayout {
            out += "Mines (assisted):\n"
            for (y, row) in layout.enumerated() { out += String(cFormat: "%2ld ", y % 100) + row + "\n" }
        }
        if let e = v.ending { out += ending(e).joined(separator: "\n") + "\n" }
        if let r = v.race { out += race(r).joined(separator: "\n") + "\n" }
        return out
    }

    /// Mines left, flags, elapsed, status, progress, players, who tripped the mine.
    public static func statusLine(_ v: GameView) -> String {
        var parts = [
            "mines left \(v.status == .won ? 0 : v.mines - v.flags)/\(v.mines)", "flags \(v.flags)", "time \(duration(wholeSecondsOf: v.elapsedMillis))",
            status(v.status, progress: v.progress),
        ]
        if v.assisted { parts.append("assisted") }
        if let hints = v.hints { parts.append("hints " + hints.map { "\($0.name) \($0.hintCount)" }.joined(separator: ", ")) }
        if let peeks = v.peeks { parts.append("looked at the mines " + peeks.map { "\($0.name) \(date(at: $0.peekedAt))" }.joined(separator: ", ")) }
        if v.seeded == true { parts.append("practice (seed chosen)") }
        if v.noGuess == true { parts.append("no-guess") }
        if v.archived == true { parts.append("archived") }
        if v.privateGame == true { parts.append("private") }
        if v.onlyHere == true { parts.append("only on this device (held before joining this circle)") }
        if let race = v.race {
            let shown = race.racers.first { $0.peer == race.shownPeer }?.name ?? shortID(race.shownPeer)
            parts.append("race: \(shown)'s board")
        } else if let chosen = v.chosenPlayerNames {
            parts.append("played by " + chosen.joined(separator: ", "))
        }
        if v.watching == true { parts.append("watching") }
        if !v.players.isEmpty {
            parts.append("scores " + v.players.map { "\($0.name) \($0.score)" }.joined(separator: ", "))
        }
        if let tripped = v.trippedByPeer {
            let name = v.players.first { $0.peer == tripped }?.name ?? shortID(tripped)
            parts.append("tripped by \(name)")
        }
        if let created = v.createdAt { parts.append("started \(date(at: created))") }
        if let ended = v.endedAt { parts.append("ended \(date(at: ended))") }
        return parts.joined(separator: " · ")
    }

    /// What a move changed.
    public static func move(_ r: Commands.MoveResult) -> String {
        var out: String
        if r.changed.isEmpty {
            out = "Nothing changed."
        } else if r.changed.count <= 12 {
            out = "Changed: " + r.changed.map { "\($0.x),\($0.y)=\($0.value)" }.joined(separator: " ")
        } else {
            out = "Changed \(count(r.changed.count, "cell"))."
        }
        out += "\n" + "Status: " + status(r.status, progress: r.progress)
        if r.status == .lost, let t = r.trippedByPeer { out += " (mine tripped by \(r.trippedByName ?? shortID(t)))" }
        return out + "\n"
    }

    /// The `status` report.
    public static func status(_ s: Commands.Status.Result) -> String {
        (s.removedNote.map { "Removed: \($0)\n" } ?? "")
            + table(
                ["", ""],
                [
                    ["peer id", s.peer], ["player", s.name], ["circle", s.circleTag],
                    ["listening", s.listening.isEmpty ? "-" : s.listening.joined(separator: ", ")], ["mdns", s.mdns],
                    ["peers", "\(s.peerCount)"], ["games", "\(s.gameCount)"], ["version", s.version], ["pid", "\(s.pid)"],
                ]
            ).split(separator: "\n", omittingEmptySubsequences: false).dropFirst().joined(separator: "\n")
            + (s.presence.map { $0.isEmpty ? "" : "\n" + watching($0) } ?? "")
    }

    /// What `scores` prints: each class's best times, the wins not ranked,
    /// and a player's record when asked.
    /// A day's board of the day as lines: each player's result, then the streaks.
    /// A race's table: each racer's place, result, progress, flags and time.
    public static func race(_ r: Commands.RaceTable) -> [String] {
        var lines: [String]
        if r.over == true {
            lines = [r.winnerName.map { "Race over: \($0) won." } ?? "Race over: nobody cleared the board."]
        } else {
            lines = ["Race"]
        }
        var place = 0
        let rows = r.racers.map { racer -> [String] in
            let how: String =
                switch racer.status {
                case .won: "won"
                case .lost: racer.gaveUp == true ? "gave up" : "lost"
                case .playing: racer.didNotStart == true ? "did not start" : "playing"
                }
            if racer.status == .won { place += 1 }
            let shown = racer.peer == r.shownPeer ? " (shown)" : ""
            return [
                racer.status == .won ? "\(place)" : "-", racer.name + shown, how + (racer.assisted == true ? ", assisted" : ""),
                "\(Int((racer.progress * 100).rounded(.down)))%", "\(racer.flags)", racer.playedMillis.map { duration(wholeSecondsOf: $0) } ?? "-",
            ]
        }
        lines += table(["#", "RACER", "RESULT", "OPENED", "FLAGS", "TIME"], rows).split(separator: "\n").map(String.init)
        return lines
    }

    public static func daily(_ d: Commands.DailyTable) -> [String] {
        var lines = ["Board of the day \(d.date)"]
        if d.results.isEmpty {
            lines.append("Nobody has played it yet: sweeper daily opens it.")
        } else {
            let rows = d.results.enumerated().map { i, r -> [String] in
                let how: String =
                    switch r.status {
                    case .won: "won"
                    case .lost: "lost"
                    case .playing: "playing \(Int((r.progress * 100).rounded(.down)))%"
                    }
                return [
                    r.status == .won ? "\(i + 1)" : "-", r.name, how + (r.assisted == true ? ", assisted" : ""),
                    r.status == .won ? duration(millis: r.playedMillis) : duration(wholeSecondsOf: r.playedMillis),
                    r.threeBVPerSecond.map { String(cFormat: "%.2f", $0) } ?? "-",
                ]
            }
            lines += table(["#", "PLAYER", "RESULT", "TIME", "3BV/S"], rows).split(separator: "\n").map(String.init)
        }
        if !d.streaks.isEmpty {
            lines.append("Streaks: " + d.streaks.map { "\($0.name) \($0.days) day" + ($0.days == 1 ? "" : "s") }.joined(separator: ", "))
        }
        return lines
    }

    public static func scores(_ r: Commands.Scores.Result) -> String {
        var out = ""
        let classes = r.classes ?? []
        if classes.isEmpty { out += "No ranked wins yet.\n" }
        for c in classes {
            out += "\n" + c.name + "\n"
            out += table(
                ["#", "TIME", "3BV/S", "PLAYERS", "DATE", "GAME"],
                c.best.enumerated().map { i, b in
                    [
                        "\(i + 1)", duration(millis: b.playedMillis), b.threeBVPerSecond.map { String(cFormat: "%.2f", $0) } ?? "-",
                        b.playerNames.joined(separator: ", "),
                        date(at: b.startedAt), shortID(b.game),
                    ]
                })
        }
        if let assisted = r.assistedWins, !assisted.isEmpty {
            out += "\nAssisted (not ranked)\n"
            out += table(
                ["SIZE", "TIME", "PLAYERS", "HINTS", "LOOKED AT THE MINES", "GAME"],
                assisted.map { a in
                    [
                        size(width: a.win.width, height: a.win.height, mines: a.win.mines) + (a.win.noGuess == true ? " no-guess" : ""),
                        duration(wholeSecondsOf: a.win.playedMillis), a.win.playerNames.joined(separator: ", "),
                        a.hints.isEmpty ? "-" : a.hints.map { "\($0.name) \($0.hintCount)" }.joined(separator: ", "),
                        a.peeks.isEmpty ? "-" : a.peeks.map { "\($0.name) \(date(at: $0.peekedAt))" }.joined(separator: ", "), shortID(a.win.game),
                    ]
                })
        }
        if let practice = r.practice, !practice.isEmpty {
            out += "\nPractice, seed chosen (not ranked)\n"
            out += table(
                ["SIZE", "TIME", "PLAYERS", "DATE", "GAME"],
                practice.map { b in
                    [
                        size(width: b.width, height: b.height, mines: b.mines) + (b.noGuess == true ? " no-guess" : ""),
                        duration(wholeSecondsOf: b.playedMillis),
                        b.playerNames.joined(separator: ", "), date(at: b.startedAt), shortID(b.game),
                    ]
                })
        }
        if let d = r.daily {
            out += "\n" + daily(d).joined(separator: "\n") + "\n"
        }
        if let p = r.player {
            out += "\n\(p.name): \(p.played) played, \(p.won) won, \(p.lost) lost, \(count(p.minesTripped, "mine")) tripped"
            out += p.bestThreeBVPerSecond.map { String(cFormat: ", best 3BV/s %.2f", $0) } ?? ""
            out += "\n"
            if !p.records.isEmpty {
                out += table(
                    ["SIZE", "BEST", "3BV/S", "WITH", "DATE"],
                    p.records.map { b in
                        [
                            size(width: b.width, height: b.height, mines: b.mines) + (b.noGuess == true ? " no-guess" : ""), duration(millis: b.playedMillis),
                            b.threeBVPerSecond.map { String(cFormat: "%.2f", $0) } ?? "-",
                            b.playerNames.count > 1 ? b.playerNames.filter { $0 != p.name }.joined(separator: ", ") : "alone", date(at: b.startedAt),
                        ]
                    })
            }
        }
        return out.hasPrefix("\n") ? String(out.dropFirst()) : out
    }

    /// How a game ended, as `show` prints it and the viewer shows it.
    public static func ending(_ e: GameEnding) -> [String] {
        var lines: [String] = []
        let rate = e.threeBVPerSecond.map { String(cFormat: "%.2f", $0) } ?? "-"
        lines.append(
            (e.status == .won ? "Won" : "Lost") + " in \(duration(millis: e.playedMillis)): 3BV \(e.solvedThreeBV)/\(e.threeBV), 3BV/s \(rate), "
                + "\(count(e.clicks, "click")), efficiency \(Int((e.efficiency * 100).rounded()))%")
        if let who = e.trippedByName {
            var line = "\(who) tripped the mine" + (e.trippedCell.map { " at \($0.x),\($0.y)" } ?? "")
            // The ending's own time, said once: only a different figure (an older daemon's) is added.
            if let after = e.trippedAfterMillis, after / 1000 != e.playedMillis / 1000 { line += " after \(duration(wholeSecondsOf: after))" }
            if let apart = e.winThatDidNotStandName, apart != who {
                line += " while apart from \(apart), whose win on the other side does not stand"
            }
            lines.append(line + ".")
        }
        for p in e.parts {
            var line = "  \(p.name): \(count(p.cellsOpened, "cell")), 3BV \(p.threeBV), flags \(p.flagsRight) right"
            if p.flagsWrong > 0 { line += ", \(p.flagsWrong) wrong" }
            if p.hintCount > 0 { line += ", " + count(p.hintCount, "hint") }
            if let at = p.peekedAt { line += ", looked at the mines \(date(at: at))" }
            lines.append(line)
        }
        if let record = e.record { lines.append("New record! " + record) }
        if let why = e.notRanked { lines.append("Not ranked: \(why).") }
        return lines
    }

    /// The `peers` table.
    public static func peers(_ peers: [PeerInfo]) -> String {
        if peers.isEmpty { return "No peers known.\n" }
        return table(
            ["PEER", "NAME", "STATE", "ADDRESSES", "VIA", "SEEN", "RTT"],
            peers.map { p in
                let seen = p.lastSeenAt.map { secondsSince($0) }.map { $0 < 1 ? "now" : "\(Int($0))s ago" } ?? "-"
                let rtt = p.roundTripMillis.map { "\($0) ms" } ?? "-"
                let state = p.lackWords.map { "\(p.stateWords) (\($0))" } ?? p.stateWords
                let name = p.hostNames.map { "\(p.name) (hosts \($0.joined(separator: ", ")))" } ?? p.name
                return [shortID(p.peer), name, state, p.addresses.isEmpty ? "-" : p.addresses.joined(separator: " "), p.via.joined(separator: ","), seen, rtt]
            })
    }
}
