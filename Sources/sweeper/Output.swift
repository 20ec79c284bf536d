import Foundation
import SweeperGame

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
        FileHandle.standardOutput.write(Data(buffer))
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
