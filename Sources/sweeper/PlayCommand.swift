import ArgumentParser
import FoundationEssentials
import SweeperControl
import SweeperTUI

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `sweeper play [GAME] [new-game options]`: the live board viewer.
struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play in the terminal: the live board, with keys and the mouse.",
        discussion: """
            Opens GAME, or a new game when new-game options are given, or the most recent game in progress \
            (a new one when there is none). Starts sweeperd in the background when none answers. Press ? for the keys.
            """)
    @OptionGroup var options: ClientOptions
    @Argument(
        help: "A game id or unique prefix (default: the most recent game in progress).",
        completion: .custom { words, _, _ in GameIDCompletion.ids(words: words) })
    var game: String?
    @OptionGroup var newGame: NewGameOptions
    @Flag(help: "Draw with ASCII only (the default when the locale is not UTF-8).") var ascii = false
    @Flag(name: .customLong("no-start-daemon"), help: "Do not start sweeperd when none answers.") var noStartDaemon = false

    func validate() throws {
        if game != nil && !newGame.isEmpty { throw ValidationError("give a GAME or new-game options, not both") }
        if options.json {
            throw ValidationError("play draws the board on a terminal and has no JSON; a script uses the other commands (sweeper --json show GAME)")
        }
    }

    func run() async throws {
        let play = PlayOptions(
            socketPath: options.socketPath, game: game, newGame: newGame.isEmpty ? nil : newGame.arguments, ascii: ascii,
            startDaemon: !noStartDaemon)
        try await runViewer(play)
    }
}

/// `sweeper daily`: today's board of the day in the viewer.
struct DailyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daily",
        abstract: "Play today's board of the day: the same board for everyone in the circle.",
        discussion: """
            Opens your board of the day in the viewer: one no-guess intermediate board a day (16×16, 40 mines), \
            derived from the circle and the date, the same on every member's device and chosen by nobody. Each player \
            plays it once, as a game of their own; a device that was apart all day plays the same board, and its \
            result joins the day's table when it links. When the game ends the viewer shows the day's table; \
            `sweeper scores --daily` shows it any time. With --json, prints the game instead.
            """)
    @OptionGroup var options: ClientOptions
    @Flag(help: "Draw with ASCII only (the default when the locale is not UTF-8).") var ascii = false
    @Flag(name: .customLong("no-start-daemon"), help: "Do not start sweeperd when none answers.") var noStartDaemon = false

    func run() async throws {
        if options.json {
            try await callDaemon(options, Commands.Daily.self, Empty()) { _ in "" }
            return
        }
        var play = PlayOptions(socketPath: options.socketPath, game: nil, ascii: ascii, startDaemon: !noStartDaemon)
        play.daily = true
        try await runViewer(play)
    }
}

/// `sweeper replay GAME`: the game played again in the viewer, move by move.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Watch a game again, move by move: who did what, where.",
        discussion: """
            Opens GAME in the viewer from its opening and plays its moves back, each in its player's colour at the cell \
            they acted on: space plays or pauses, ←/→ step one move, +/- set the speed (1× to 16× moves a second), \
            Home/End jump, esc shows the game as it is now, q quits. A game still being played goes live at the end. \
            With --json, prints the moves instead: index, author (name and peer id), kind, cell, the cells it changed, \
            seconds from the start and wall time. A race replays one racer's board: --racer's, else yours.
            """)
    @OptionGroup var options: ClientOptions
    @Argument(help: "A game id or unique prefix.", completion: .custom { words, _, _ in GameIDCompletion.ids(words: words) })
    var game: String
    @Option(help: "In a race, whose board to replay (a racer's name or peer id; default: yours).") var racer: String?
    @Flag(help: "Draw with ASCII only (the default when the locale is not UTF-8).") var ascii = false
    @Flag(name: .customLong("no-start-daemon"), help: "Do not start sweeperd when none answers.") var noStartDaemon = false

    func run() async throws {
        if options.json {
            try await callDaemon(options, Commands.Replay.self, .init(game: game, racer: racer)) { _ in "" }
            return
        }
        var play = PlayOptions(socketPath: options.socketPath, game: game, ascii: ascii, startDaemon: !noStartDaemon)
        play.replay = true
        play.racer = racer
        try await runViewer(play)
    }
}

/// Runs the viewer until the player quits; a failure is printed, and exits with its code.
func runViewer(_ options: PlayOptions) async throws {
    switch await PlaySession.run(options) {
    case .quit: return
    case let .failed(message, code):
        Output.write("sweeper: \(message)\n".utf8, to: STDERR_FILENO)
        throw ExitCode(code)
    }
}
