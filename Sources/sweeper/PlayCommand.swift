import ArgumentParser
import Foundation
import SweeperControl
import SweeperTUI

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
    @Argument(help: "A game id or unique prefix (default: the most recent game in progress).") var game: String?
    @Option(help: "beginner (9×9, 10), intermediate (16×16, 40) or expert (30×16, 99).") var preset: String?
    @Option(help: "Width in cells (2–500).") var width: Int?
    @Option(help: "Height in cells (2–500).") var height: Int?
    @Option(help: "Number of mines.") var mines: Int?
    @Flag(name: .customLong("no-guess"), help: "Only boards solvable without guessing.") var noGuess = false
    @Option(help: "The generator's seed.") var seed: UInt64?
    @Option(help: "The start cell X,Y (default: the centre).") var start: CellArgument?
    @Flag(name: .customLong("question-marks"), help: "Let marks cycle through question marks.") var questionMarks = false
    @Flag(help: "Draw with ASCII only (the default when the locale is not UTF-8).") var ascii = false
    @Flag(name: .customLong("no-start-daemon"), help: "Do not start sweeperd when none answers.") var noStartDaemon = false

    var newGameRequested: Bool {
        preset != nil || width != nil || height != nil || mines != nil || noGuess || seed != nil || start != nil || questionMarks
    }

    func validate() throws {
        if game != nil && newGameRequested { throw ValidationError("give a GAME or new-game options, not both") }
        if preset != nil && (width != nil || height != nil || mines != nil) {
            throw ValidationError("give --preset or --width/--height/--mines, not both")
        }
        let given = [width, height, mines].compactMap { $0 }.count
        if given != 0 && given != 3 { throw ValidationError("give --width, --height and --mines together") }
    }

    func run() async throws {
        let newGame = newGameRequested
            ? Commands.New.Arguments(
                preset: preset, width: width, height: height, mines: mines, noGuess: noGuess, seed: seed, startX: start?.x,
                startY: start?.y, questionMarks: questionMarks)
            : nil
        let play = PlayOptions(
            socketPath: options.socketPath, game: game, newGame: newGame, ascii: ascii, startDaemon: !noStartDaemon)
        switch await PlaySession.run(play) {
        case .quit: return
        case let .failed(message, code):
            FileHandle.standardError.write(Data("sweeper: \(message)\n".utf8))
            throw ExitCode(code)
        }
    }
}
