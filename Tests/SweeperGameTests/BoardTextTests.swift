import Testing

@testable import SweeperGame

@Suite struct BoardTextTests {
    func fault(_ text: String) -> BoardTextError? {
        do {
            _ = try TextBoard.parseAll(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func readsSeveralBoardsAndSkipsBlankLines() throws {
        let boards = try TextBoard.parseAll("3 2 0 0\n..*\n...\n\n\n2 2 1 1\r\n*.\r\n..\r\n")
        #expect(boards.count == 2)
        #expect(boards[0].layout.mineCount == 1)
        #expect(boards[0].layout.isMine(2))
        #expect(boards[1].start == Cell(x: 1, y: 1))
    }

    @Test func namesTheLineAndTheFault() {
        #expect(fault("3 2 0 0\n..*\n..\n")?.line == 3)
        #expect(fault("3 2 0 0\n..*\n..\n")?.fault.contains("ragged") == true)
        #expect(fault("3 2 0 0\n..x\n...\n")?.fault.contains("bad character `x`") == true)
        #expect(fault("3 2 5 0\n...\n...\n")?.fault.contains("off the") == true)
        #expect(fault("3 2 2 0\n..*\n...\n")?.fault.contains("on a mine") == true)
        #expect(fault("3 2 0 0\n...\n")?.fault.contains("missing row 2") == true)
        #expect(fault("3 2 0\n...\n...\n")?.line == 1)
        #expect(fault("1 2 0 0\n.\n.\n")?.fault.contains("2 to 500") == true)
        #expect(fault("\n\n3 2 0 0\n...\n.?.\n")?.line == 5)
    }

    @Test func emptyInputHasNoBoards() throws {
        #expect(try TextBoard.parseAll("").isEmpty)
        #expect(try TextBoard.parseAll("\n\n").isEmpty)
    }
}
