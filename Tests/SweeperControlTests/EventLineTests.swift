import Foundation
import Testing

@testable import SweeperControl

/// The hand-written line of a `cells` event against `JSONEncoder`'s.
@Suite struct EventLineTests {
    /// A small deterministic generator (xorshift*), so a failure repeats.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return state &* 2_685_821_657_736_338_717
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func chance() -> Bool { next() & 1 == 0 }
    }

    static let pieces = ["a", "Z", "7", "#", "*", " ", "\"", "\\", "/", "\n", "\r", "\t", "\u{0}", "\u{1f}", "\u{7f}", "é", "💣", "-", "ABCDE-12345"]

    func text(_ r: inout Random, plain: Bool) -> String {
        let alphabet = plain ? ["a", "Z", "7", "#", "*", " ", "-", "ABCDE-12345"] : Self.pieces
        return (0..<r.below(6)).map { _ in alphabet[r.below(alphabet.count)] }.joined()
    }

    func event(_ r: inout Random, plain: Bool) -> ControlEvent {
        let cells =
            r.chance()
            ? nil
            : (0..<r.below(5)).map { _ in
                CellChange(x: r.below(500) - 2, y: r.below(500), value: text(&r, plain: plain))
            }
        let progress: Double? = plain ? nil : r.chance() ? nil : [0, 1, 0.5, 1e-7, Double(r.below(1_000_000)) / 999_983][r.below(5)]
        return ControlEvent(
            event: .cells, game: r.chance() ? text(&r, plain: plain) : nil, cells: cells,
            status: r.chance() ? PlayStatus.allCases[r.below(3)] : nil, minesLeft: r.chance() ? r.below(200) - 100 : nil,
            byPeer: r.chance() ? text(&r, plain: plain) : nil, x: r.chance() ? r.below(300) : nil, y: r.chance() ? r.below(300) : nil,
            progress: progress, trippedByPeer: r.chance() ? text(&r, plain: plain) : nil)
    }

    @Test func cellsEventsDecodeToTheSameEvent() throws {
        var r = Random(state: 0x5EED_CE11)
        for _ in 0..<2_000 {
            let e = event(&r, plain: false)
            let line = try e.jsonLine()
            #expect(line.last == 0x0A)
            #expect(line.dropLast().contains(0x0A) == false)
            let decoded = try JSONDecoder().decode(ControlEvent.self, from: line)
            #expect(decoded == e, "\(String(decoding: line, as: UTF8.self))")
        }
    }

    @Test func plainCellsEventsAreByteForByteWhatJSONEncoderWrites() throws {
        var r = Random(state: 42)
        for _ in 0..<500 {
            let e = event(&r, plain: true)
            #expect(try e.jsonLine() == (try ControlCoding.line(e)))
        }
    }

    @Test func otherEventsGoThroughJSONEncoder() throws {
        let added = ControlEvent(event: .gameAdded, game: "abc")
        #expect(try added.jsonLine() == (try ControlCoding.line(added)))
        // A race's cells carry the racer's standing: the encoder writes them whole.
        let racer = Commands.RacerStanding(peer: "AB12", name: "Mum", status: .playing, progress: 0.25, flags: 3)
        let raced = ControlEvent(event: .cells, game: "abc", cells: [CellChange(x: 1, y: 2, value: "3")], racer: racer)
        #expect(try raced.jsonLine() == (try ControlCoding.line(raced)))
        #expect(try JSONDecoder().decode(ControlEvent.self, from: raced.jsonLine()).racer == racer)
        let odd = ControlEvent(event: .cells, game: "abc", progress: .nan)
        #expect(throws: (any Error).self) { try odd.jsonLine() }
    }
}
