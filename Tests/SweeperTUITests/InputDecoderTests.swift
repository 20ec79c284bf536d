import Testing

@testable import SweeperTUI

@Suite struct InputDecoderTests {
    private func decode(_ text: String) -> [InputEvent] {
        var d = InputDecoder()
        return d.feed(Array(text.utf8))
    }

    @Test func printableKeysAndControls() {
        #expect(decode("hjkl5L ?") == "hjkl5L ?".map { .key(.character($0)) })
        #expect(decode("\r\n\t\u{7F}\u{03}") == [.key(.enter), .key(.enter), .key(.tab), .key(.backspace), .key(.control("c"))])
    }

    @Test func utf8Characters() {
        #expect(decode("é⚑") == [.key(.character("é")), .key(.character("⚑"))])
    }

    @Test func cursorKeysInBothModes() {
        #expect(decode("\u{1B}[A\u{1B}[B\u{1B}[C\u{1B}[D") == [.key(.up), .key(.down), .key(.right), .key(.left)])
        #expect(decode("\u{1B}OA\u{1B}OD") == [.key(.up), .key(.left)])
        #expect(decode("\u{1B}[5~\u{1B}[6~\u{1B}[H\u{1B}[4~") == [.key(.pageUp), .key(.pageDown), .key(.home), .key(.end)])
        // Modifiers are read past: shift-up is still up.
        #expect(decode("\u{1B}[1;2A") == [.key(.up)])
    }

    @Test func sgrMouseReports() {
        #expect(decode("\u{1B}[<0;5;3M") == [.mouse(MouseEvent(button: .left, column: 5, row: 3, pressed: true))])
        #expect(decode("\u{1B}[<2;10;4m") == [.mouse(MouseEvent(button: .right, column: 10, row: 4, pressed: false))])
        #expect(decode("\u{1B}[<64;1;1M") == [.mouse(MouseEvent(button: .wheelUp, column: 1, row: 1, pressed: true))])
        #expect(decode("\u{1B}[<32;7;7M") == [.mouse(MouseEvent(button: .left, column: 7, row: 7, pressed: true, motion: true))])
    }

    @Test func mouseBeyondColumn223() {
        #expect(decode("\u{1B}[<0;224;1M") == [.mouse(MouseEvent(button: .left, column: 224, row: 1, pressed: true))])
        #expect(decode("\u{1B}[<2;1000;300M") == [.mouse(MouseEvent(button: .right, column: 1000, row: 300, pressed: true))])
    }

    @Test func sequencesSplitAcrossReadsAtEveryByte() {
        let text = "a\u{1B}[<0;250;12Mb\u{1B}[Cé\u{1B}OB"
        let expected: [InputEvent] = [
            .key(.character("a")), .mouse(MouseEvent(button: .left, column: 250, row: 12, pressed: true)),
            .key(.character("b")), .key(.right), .key(.character("é")), .key(.down),
        ]
        let bytes = Array(text.utf8)
        for split in 0...bytes.count {
            var d = InputDecoder()
            let events = d.feed(bytes[..<split]) + d.feed(bytes[split...])
            #expect(events == expected, "split at \(split)")
            #expect(!d.hasPending)
        }
        // One byte at a time.
        var d = InputDecoder()
        var events: [InputEvent] = []
        for b in bytes { events += d.feed([b]) }
        #expect(events == expected)
    }

    @Test func loneEscapeWaitsThenFlushes() {
        var d = InputDecoder()
        #expect(d.feed([0x1B]).isEmpty)
        #expect(d.hasPending)
        #expect(d.flush() == [.key(.escape)])
        #expect(!d.hasPending)
        #expect(d.feed([0x1B, 0x1B]) == [.key(.escape)])
        #expect(d.flush() == [.key(.escape)])
        #expect(decode("\u{1B}x") == [.key(.alt("x"))])
    }

    @Test func malformedInputIsDroppedNotTrapped() {
        // Mouse reports with an empty or missing field or a huge number, an unknown final byte.
        let junk = "\u{1B}[<0;;5M" + "\u{1B}[<1;2M" + "\u{1B}[<0;99999999999999999999;1M" + "\u{1B}[99z"
        #expect(decode(junk + "q") == [.key(.character("q"))])
        var d = InputDecoder()
        #expect(d.feed([0xFF, 0x80, UInt8(ascii: "q")]) == [.key(.character("q"))])
        // A sequence that never ends is dropped once it is longer than any real one.
        var e = InputDecoder()
        let endless = [0x1B, UInt8(ascii: "[")] + [UInt8](repeating: UInt8(ascii: "1"), count: 200)
        _ = e.feed(endless)
        #expect(e.feed(Array("q".utf8)).contains(.key(.character("q"))))
    }
}
