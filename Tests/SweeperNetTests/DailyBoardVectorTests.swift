import SweeperConventions
import SweeperCrypto
import SweeperGame
import SweeperSync
import Testing

/// The whole board of a day, from the document's `daily-board` vector: the
/// key in force that day (after a rekey), the seed, and every mine, so that
/// another implementation can check its own derivation and generator.
@Suite struct DailyBoardVectorTests {
    @Test func theBoardOfADayAfterARekeyIsTheDocuments() throws {
        let cast = try PeerProtocolVectorTests.Cast()
        let v = try PeerProtocolVectorTests.vector("daily-board")
        let later = try CircleKey(bytes: try v.bytes("later-key"))
        let keys = DailyKeys(first: cast.circle, later: [(try v.number("later-made"), later)])
        let day = Int(try v.number("day"))
        let board = try #require(try DailyBoard.board(day: day, keys: keys))
        let geometry = board.parameters.geometry
        let rows = (0..<geometry.height).map { y in
            String((0..<geometry.width).map { x in board.layout.isMine(geometry.index(of: Cell(x: x, y: y))) ? "*" : "." })
        }
        PeerProtocolVectorTests.check(
            v, inputs: ["later-key", "later-made", "day"],
            outputs: [("epoch", "\(keys.epoch(for: day))"), ("seed", String(board.seed, radix: 16)), ("layout", rows.joined())])
        // The day before, the rekey had not been made before it began anywhere: the first key's board.
        #expect(keys.epoch(for: day - 1) == 0)
    }
}
