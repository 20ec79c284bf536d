import FoundationEssentials
import SweeperConventions
import SweeperGame

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes the program's output with `write(2)`, which reports errors:
/// Foundation's `FileHandle.write(_:)` traps on them, and a reader that
/// went away (`sweeper show GAME | head -1`) is no reason to crash. When
/// standard output's reader is gone, the program ends at once, quietly,
/// with the status `cat` gives in that case (141); a gone standard error
/// is simply not written to.
enum Output {
    /// The exit status when standard output's reader went away (128 + SIGPIPE).
    static let closedPipeStatus: Int32 = 141

    /// Writes all of `bytes` to `descriptor` (1, standard output; 2, standard error).
    static func write(_ bytes: some Collection<UInt8>, to descriptor: Int32 = STDOUT_FILENO) {
        // EPIPE (the reader is gone) or any other failure: nothing more can be said there.
        if !FileDescriptorWriter.writeAll(Array(bytes), to: descriptor) && descriptor == STDOUT_FILENO { exit(closedPipeStatus) }
    }

    /// Writes `text` to `descriptor`.
    static func write(_ text: String, to descriptor: Int32 = STDOUT_FILENO) {
        write(Array(text.utf8), to: descriptor)
    }
}

/// Buffered writes to standard output: boards are printed in bulk.
final class StandardOutput {
    private var buffer: [UInt8] = []

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    func writeJSON(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        buffer.append(contentsOf: try encoder.encode(value))
        buffer.append(UInt8(ascii: "\n"))
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        Output.write(buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}

/// One generated board, as `board generate --json` prints it.
struct GeneratedBoardReport: Encodable {
    var width: Int
    var height: Int
    var mines: Int
    var start: Cell
    var seed: UInt64
    var noGuess: Bool
    var threeBV: Int
    var rows: [String]

    init(_ board: GeneratedBoard, rows: [String]) {
        width = board.parameters.width
        height = board.parameters.height
        mines = board.layout.mineCount
        start = board.parameters.start
        seed = board.seed
        noGuess = board.parameters.noGuess
        threeBV = board.layout.threeBV
        self.rows = rows
    }
}

/// One board's verdict, as `board solve --json` prints it.
struct SolveReport: Encodable {
    var board: Int
    var solvable: Bool
    var cleared: Int
    var safe: Int

    init(board: Int, _ result: SolveResult) {
        self.board = board
        solvable = result.solvable
        cleared = result.clearedSafeCells
        safe = result.safeCells
    }
}
