import Testing

@testable import SweeperGame

@Suite struct ParametersTests {
    @Test(arguments: Preset.allCases)
    func presetsHaveTheClassicSizes(preset: Preset) throws {
        let p = try GameParameters(preset: preset)
        let expected: (Int, Int, Int) =
            switch preset {
            case .beginner: (9, 9, 10)
            case .intermediate: (16, 16, 40)
            case .expert: (30, 16, 99)
            }
        #expect((p.width, p.height, p.mines) == expected)
        #expect(p.start == Cell(x: (p.width - 1) / 2, y: (p.height - 1) / 2))
    }

    @Test func everyLimitIsEnforcedAndNamed() {
        #expect(throws: ParameterError.widthOutOfRange(1)) { try GameParameters(width: 1, height: 9, mines: 1) }
        #expect(throws: ParameterError.widthOutOfRange(501)) { try GameParameters(width: 501, height: 9, mines: 1) }
        #expect(throws: ParameterError.heightOutOfRange(1)) { try GameParameters(width: 9, height: 1, mines: 1) }
        #expect(throws: ParameterError.heightOutOfRange(501)) { try GameParameters(width: 9, height: 501, mines: 1) }
        #expect(throws: ParameterError.minesOutOfRange(0, maximum: 64)) { try GameParameters(width: 9, height: 9, mines: 0) }
        #expect(throws: ParameterError.minesOutOfRange(65, maximum: 64)) { try GameParameters(width: 9, height: 9, mines: 65) }
        #expect(throws: ParameterError.startOutOfRange(Cell(x: 9, y: 0), width: 9, height: 9)) {
            try GameParameters(width: 9, height: 9, mines: 10, start: Cell(x: 9, y: 0))
        }
        #expect(throws: ParameterError.tooDenseForNoGuess(8, maximum: 7)) {
            try GameParameters(width: 4, height: 4, mines: 8, noGuess: true)
        }
        // The edges of every range are accepted.
        #expect(throws: Never.self) { try GameParameters(width: 2, height: 2, mines: 1) }
        #expect(throws: Never.self) { try GameParameters(width: 500, height: 500, mines: 499 * 499) }
        #expect(throws: Never.self) { try GameParameters(width: 9, height: 9, mines: 64) }
    }

    @Test func errorMessagesNameTheAllowedRange() {
        #expect(ParameterError.widthOutOfRange(0).description.contains("2 to 500"))
        #expect(ParameterError.minesOutOfRange(99, maximum: 64).description.contains("1 to 64"))
    }

    @Test func boardRandomMatchesTheReferenceAlgorithm() {
        // Values from an independent implementation of SplitMix64 seeding
        // and xoshiro256**: a board made from a seed must be the same
        // everywhere, so the generator must never drift.
        var r0 = BoardRandom(seed: 0)
        #expect([r0.next(), r0.next(), r0.next()] == [0x99ec_5f36_cb75_f2b4, 0xbf6e_1f78_4956_452a, 0x1a5f_849d_4933_e6e0])
        var r1 = BoardRandom(seed: 12345)
        #expect([r1.next(), r1.next(), r1.next()] == [0xbe6a_3637_4160_d49b, 0x214a_aa06_37a6_88c6, 0xf69d_16de_9954_d388])
    }

    @Test func boundedDrawsStayInRange() {
        var r = BoardRandom(seed: 7)
        var seen = Set<Int>()
        for _ in 0..<2000 {
            let v = r.below(7)
            #expect((0..<7).contains(v))
            seen.insert(v)
        }
        #expect(seen.count == 7)
    }
}
