import ArgumentParser
import FoundationEssentials
import SweeperConventions
import SweeperGame

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `sweeper board`: offline board tools that need no daemon.
struct BoardCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "board",
        abstract: "Generate and check boards offline (no daemon needed).",
        subcommands: [BoardGenerate.self, BoardSolve.self]
    )
}

extension Preset: ExpressibleByArgument {}

extension Cell: ExpressibleByArgument {
    /// Parses `X,Y` (a start cell, on every command that takes one).
    public init?(argument: String) {
        let parts = argument.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let x = Int(parts[0]), let y = Int(parts[1]) else { return nil }
        self.init(x: x, y: y)
    }
}

/// The options that describe a board's size, shared by every command that makes one.
struct BoardSizeOptions: ParsableArguments {
    @Option(help: "A preset size: beginner (9×9, 10), intermediate (16×16, 40) or expert (30×16, 99).")
    var preset: Preset?

    @Option(help: "Width in cells (2 to 500).")
    var width: Int?

    @Option(help: "Height in cells (2 to 500).")
    var height: Int?

    @Option(help: "Number of mines (1 to (width−1)×(height−1)).")
    var mines: Int?

    @Option(help: ArgumentHelp("The start cell, revealed when play begins (default: the centre).", valueName: "x,y"))
    var start: Cell?

    @Flag(help: "Make a board that can be cleared from the opening by deduction alone.")
    var noGuess = false

    /// Checks the combination and builds validated parameters.
    func parameters() throws -> GameParameters {
        let custom = [width, height, mines].compactMap { $0 }.count
        do {
            if let preset {
                guard custom == 0 else {
                    throw ValidationError("give either --preset or --width, --height and --mines, not both")
                }
                return try GameParameters(preset: preset, start: start, noGuess: noGuess)
            }
            if custom == 0 {
                return try GameParameters(preset: .beginner, start: start, noGuess: noGuess)
            }
            guard let width, let height, let mines else {
                throw ValidationError("a custom size needs all of --width, --height and --mines")
            }
            return try GameParameters(width: width, height: height, mines: mines, start: start, noGuess: noGuess)
        } catch let error as ParameterError {
            throw ValidationError(error.description)
        }
    }
}

/// `sweeper board generate`.
struct BoardGenerate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Print boards: a line `W H X Y`, then H rows of `.` (safe) and `*` (mine), then an empty line.",
        discussion: "Board k (from 0) of a run uses seed S+k, so `--seed S+k --count 1` makes it again."
    )

    @OptionGroup var size: BoardSizeOptions

    @Option(help: "The seed of the first board (default: random).")
    var seed: UInt64?

    @Option(help: "How many boards to print (1 to 100000).")
    var count = 1

    /// `--json` (shared with the root command, so it works before or after
    /// the subcommand); the socket is not used here.
    @OptionGroup var options: ClientOptions
    var json: Bool { options.json }

    func validate() throws {
        guard (1...100_000).contains(count) else { throw ValidationError("--count must be 1 to 100000, not \(count)") }
        _ = try size.parameters()
    }

    func run() throws {
        let parameters = try size.parameters()
        let first = seed ?? UInt64.random(in: .min ... .max)
        let output = StandardOutput()
        var reports: [GeneratedBoardReport] = []
        for k in 0..<count {
            let board: GeneratedBoard
            do {
                board = try Generator.generate(parameters, seed: first &+ UInt64(k))
            } catch {
                Output.write("sweeper: \(error)\n".utf8, to: STDERR_FILENO)
                throw ExitCode(1)
            }
            let text = TextBoard(layout: board.layout, start: parameters.start)
            if json {
                reports.append(GeneratedBoardReport(board, rows: text.rows))
            } else {
                output.write(text.text)
            }
        }
        if json { try output.writeJSON(reports) }
        output.flush()
    }
}

/// `sweeper board solve`.
struct BoardSolve: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "solve",
        abstract: "Check boards read from standard input (the form `board generate` prints) for no-guess solvability.",
        discussion: """
            Prints, per board, `solvable` or `needs-guess` with the safe cells cleared out of the total.
            Exit status: 0 all solvable, 1 any needs a guess, 2 malformed input (the message names the line).
            """
    )

    /// `--json`, shared with the root command; the socket is not used here.
    @OptionGroup var options: ClientOptions
    var json: Bool { options.json }

    /// The largest input read, in bytes.
    static let maximumInput = 256 << 20

    func run() throws {
        let data: [UInt8]
        do {
            data = try FileDescriptorReader.readAll(from: STDIN_FILENO, limit: Self.maximumInput)
        } catch {
            Output.write("sweeper: standard input \(error.description)\n".utf8, to: STDERR_FILENO)
            throw ExitCode(2)
        }
        guard data.count <= Self.maximumInput else {
            Output.write("sweeper: input is over \(Self.maximumInput >> 20) MiB\n".utf8, to: STDERR_FILENO)
            throw ExitCode(2)
        }
        let boards: [TextBoard]
        do {
            boards = try TextBoard.parseAll(String(decoding: data, as: UTF8.self))
        } catch {
            Output.write("sweeper: malformed board input: \(error)\n".utf8, to: STDERR_FILENO)
            throw ExitCode(2)
        }
        let output = StandardOutput()
        var reports: [SolveReport] = []
        var anyNeedsGuess = false
        for (k, board) in boards.enumerated() {
            let result = Solver.solve(board.layout, start: board.layout.geometry.index(of: board.start))
            anyNeedsGuess = anyNeedsGuess || !result.solvable
            if json {
                reports.append(SolveReport(board: k + 1, result))
            } else {
                output.write("\(result.solvable ? "solvable" : "needs-guess") \(result.clearedSafeCells)/\(result.safeCells)\n")
            }
        }
        if json { try output.writeJSON(reports) }
        output.flush()
        if anyNeedsGuess {
            throw ExitCode(1)
        }
    }
}
