// The board text format (`sweeper board solve` reads it from anyone): the
// parser, then the solver on every small board it accepts, as the command
// does. A parsed board must print back to text that parses to itself.
import FuzzSupport
import SweeperGame

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBoardText(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: FuzzInput(data, size).bytes, as: UTF8.self)
    guard let boards = try? TextBoard.parseAll(text) else { return 0 }
    for board in boards {
        check((try? TextBoard.parseAll(board.text)) == [board], "a board does not survive printing")
        let g = board.layout.geometry
        // Big boards are solved too, but take long: the fuzzer is better off with many small ones.
        if g.cellCount <= 1024 {
            _ = Solver.solve(board.layout, start: g.index(of: board.start))
        }
    }
    return 0
}

@_cdecl("FuzzBoardText_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    writeSeedsIfAsked {
        var seeds: [String] = []
        for (i, p) in [(9, 9, 10), (16, 16, 40), (8, 3, 5), (2, 2, 1)].enumerated() {
            guard let parameters = try? GameParameters(width: p.0, height: p.1, mines: p.2),
                let board = try? Generator.generate(parameters, seed: UInt64(i))
            else { continue }
            seeds.append(TextBoard(layout: board.layout, start: parameters.start).text)
        }
        seeds.append(seeds.joined(separator: "\n"))
        seeds.append("3 2 0 0\r\n.*.\r\n..*\r\n\r\n")
        return seeds.map { Array($0.utf8) }
    }
    return runFuzzer(argc, argv, fuzzBoardText)
}
