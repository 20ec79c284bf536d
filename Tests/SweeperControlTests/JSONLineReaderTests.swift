import Foundation
import Testing

@testable import SweeperControl

/// The hot control lines read and written without `JSONDecoder` and
/// `JSONEncoder`, against them.
@Suite struct JSONLineReaderTests {
    typealias Random = EventLineTests.Random

    func read(_ text: String) -> JSONValue? { JSONLineReader.value(Array(text.utf8)) }

    func event(_ line: Data) -> ControlEvent? { line.withUnsafeBytes { ControlEvent(jsonLine: $0) } }

    @Test func readsJSONValues() {
        #expect(
            read(#"{"a":[1,-2,3.5,1e3,true,false,null],"b":{"c":"d"}} "#)
                == .object([
                    "a": .array([.int(1), .int(-2), .double(3.5), .double(1000), .bool(true), .bool(false), .null]), "b": .object(["c": .string("d")]),
                ]))
        #expect(read("\n [ ] \r\n") == .array([]))
        #expect(read(#""\u00e9\ud83d\udca3\/\\\"\n\t\b\f\r\u0000""#) == .string("é💣/\\\"\n\t\u{8}\u{c}\r\u{0}"))
        #expect(read("\"é💣\"") == .string("é💣"))
        #expect(read("-0") == .int(0))
        #expect(read("123456789012345678901234567890") == .double(1.2345678901234568e29))
        #expect(read("0.1") == .double(0.1))
    }

    @Test func refusesWhatIsNotOneJSONText() {
        let bad = [
            "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "01", "1.", ".5", "-", "1e", "+1", "1e400", "NaN",
            "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"a\tb\"", "tru", "nulls",
            "{} x", "[1] [2]", "{\"a\":1,\"a\":2}", "// no comments", "'single'",
            String(repeating: "[", count: JSONLineReader.depthLimit + 1) + String(repeating: "]", count: JSONLineReader.depthLimit + 1),
        ]
        for text in bad { #expect(read(text) == nil, "\(text)") }
        // Invalid UTF-8 in a string, plain or after an escape.
        #expect(JSONLineReader.value([0x22, 0xC3, 0x22]) == nil)
        #expect(JSONLineReader.value([0x22, 0x5C, 0x6E, 0xFF, 0x22]) == nil)
        // As deep as the limit is read.
        let deep = String(repeating: "[", count: JSONLineReader.depthLimit) + String(repeating: "]", count: JSONLineReader.depthLimit)
        #expect(read(deep) != nil)
    }

    /// Presence, point and other events as the daemon makes them.
    func anyEvent(_ r: inout Random, plain: Bool) -> ControlEvent {
        var e = EventLineTests().event(&r, plain: plain)
        let kinds: [ControlEvent.Kind] = [.cells, .presence, .point, .gameAdded, .gameForgotten, .eventsDropped]
        e.event = kinds[r.below(kinds.count)]
        let t = { (r: inout Random) in EventLineTests().text(&r, plain: plain) }
        if r.chance() {
            e.presence = PresenceInfo(
                peer: t(&r), name: t(&r), game: r.chance() ? t(&r) : nil, x: r.chance() ? r.below(500) : nil, y: r.chance() ? r.below(500) : nil,
                colour: r.chance() ? r.below(9) : nil, own: r.chance() ? r.chance() : nil)
        }
        if r.chance() { e.dropped = r.below(10_000) }
        return e
    }

    @Test func eventsAreReadAsJSONDecoderReadsThem() throws {
        var r = Random(state: 0xE7E7)
        var fast = 0
        for _ in 0..<2_000 {
            let e = anyEvent(&r, plain: false)
            for line in [try e.jsonLine(), try ControlCoding.line(e)] {
                let read = try #require(event(line), "\(String(decoding: line, as: UTF8.self))")
                #expect(read == e)
                #expect(read == (try JSONDecoder().decode(ControlEvent.self, from: line)))
                fast += 1
            }
        }
        #expect(fast == 4_000)
    }

    @Test func plainEventsAreWrittenByteForByteAsJSONEncoderWrites() throws {
        var r = Random(state: 7)
        for _ in 0..<500 {
            let e = anyEvent(&r, plain: true)
            #expect(try e.jsonLine() == (try ControlCoding.line(e)))
        }
    }

    @Test func linesItDoesNotReadAreLeftToJSONDecoder() throws {
        let peer = PeerInfo(
            peer: "P", name: "n", addresses: [], state: .connected, via: [], lastSeenAt: nil, roundTripMillis: nil, sync: nil, otherCircle: false)
        let summary = ControlEvent(event: .peerChanged, peerInfo: peer)
        let line = try ControlCoding.line(summary)
        #expect(event(line) == nil)
        #expect(try JSONDecoder().decode(ControlEvent.self, from: line) == summary)
        // A field of another type, a null, a key it does not know, an unknown kind, an answer.
        for text in [
            #"{"event":"cells","x":1.5}"#, #"{"event":"cells","game":null}"#, #"{"event":"cells","extra":1}"#,
            #"{"event":"cells","cells":[{"x":1,"y":2}]}"#, #"{"event":"unheard-of"}"#, #"{"id":1,"ok":true,"result":{}}"#,
            #"{"event":"presence","presence":{"peer":"P"}}"#,
        ] {
            #expect(event(Data(text.utf8)) == nil, "\(text)")
        }
    }

    /// An answer, however long, is given up at its first key: the reader
    /// does not read it to learn it is not an event.
    @Test func anObjectWithOtherKeysIsGivenUpAtTheFirst() {
        let keys: Set<String> = ["a", "b"]
        func object(_ text: String) -> [String: JSONValue]? {
            Array(text.utf8).withUnsafeBytes { JSONLineReader.object($0, keys: keys) }
        }
        #expect(object(#" {"a":1,"b":{"c":[2]}} "#) == ["a": .int(1), "b": .object(["c": .array([.int(2)])])])
        #expect(object(#"{"a":1,"z":2}"#) == nil)
        #expect(object("[1]") == nil)
        #expect(object(#"{"a":1} x"#) == nil)
        #expect(object(##"{"id":1,"ok":true,"result":{"board":[""## + String(repeating: "#", count: 100_000) + ##""]}}"##) == nil)
        let answer = Data(#"{"id":3,"ok":true,"result":{}}"#.utf8)
        #expect(event(answer) == nil)
    }

    /// Lines damaged byte by byte: whatever the reader still takes for an
    /// event, JSONDecoder reads as the same event.
    @Test func damagedLinesReadAsJSONDecoderReadsThemOrNotAtAll() throws {
        var r = Random(state: 0xDA4A6E)
        let alphabet = Array(#"{}[],:"\0-.eE19u tnfl"#.utf8)
        var taken = 0
        var refused = 0
        for _ in 0..<3_000 {
            var bytes = Array(try anyEvent(&r, plain: r.chance()).jsonLine())
            for _ in 0..<(1 + r.below(3)) {
                let at = r.below(bytes.count)
                switch r.below(3) {
                case 0: bytes[at] = alphabet[r.below(alphabet.count)]
                case 1: bytes.remove(at: at)
                default: bytes.insert(alphabet[r.below(alphabet.count)], at: at)
                }
                if bytes.isEmpty { bytes = [0x20] }
            }
            let line = Data(bytes)
            if let read = event(line) {
                taken += 1
                #expect(read == (try? JSONDecoder().decode(ControlEvent.self, from: line)), "\(String(decoding: line, as: UTF8.self))")
            } else {
                refused += 1
            }
        }
        // Both paths were taken.
        #expect(taken > 100)
        #expect(refused > 100)
    }

    @Test func requestLinesAreWhatJSONEncoderWritesAndReadBack() throws {
        var r = Random(state: 0xC0)
        for _ in 0..<500 {
            let t = { (r: inout Random) in EventLineTests().text(&r, plain: true) }
            let move = Commands.MoveArguments(game: r.chance() ? t(&r) : nil, x: r.below(500), y: r.below(500), mark: r.chance() ? t(&r) : nil)
            let id: RequestID = r.chance() ? .int(Int64(r.below(1_000_000))) : .string(t(&r))
            let line = move.requestLine(command: Commands.Flag.name, id: id)
            #expect(Data(line) == (try ControlCoding.line(Request(id: id, command: Commands.Flag.name, arguments: move))))
            let members = try #require(JSONLineReader.value(line)?.object)
            #expect(Commands.MoveArguments(members: members) == move)
            let head = try #require(RequestHead(members: members))
            #expect(head.id == id && head.command == Commands.Flag.name)

            let cursor = Commands.Cursor.Arguments(game: r.chance() ? t(&r) : nil, x: r.chance() ? r.below(500) : nil, y: r.chance() ? r.below(500) : nil)
            let cursorLine = cursor.requestLine
            #expect(Data(cursorLine) == (try ControlCoding.line(Request(id: .int(0), command: Commands.Cursor.name, arguments: cursor))))
            #expect(cursorLine.withUnsafeBytes { Commands.Cursor.Arguments(requestLine: $0) } == cursor)
        }
        // What a move's reader leaves to JSONDecoder: a missing cell, a null, another type.
        for text in [#"{"x":1}"#, #"{"x":1,"y":2,"game":null}"#, #"{"x":1,"y":"2"}"#, #"{"x":1,"y":2,"mark":3}"#] {
            let members = try #require(JSONLineReader.value(Array(text.utf8))?.object)
            #expect(Commands.MoveArguments(members: members) == nil, "\(text)")
        }
        #expect(RequestHead(members: ["id": .double(1.5)]) == nil)
        #expect(RequestHead(members: ["command": .null]) == nil)
        #expect(Commands.Cursor.Arguments(requestLine: UnsafeRawBufferPointer(start: nil, count: 0)) == nil)
        let other = Array(#"{"command":"flag","x":1,"y":2}"#.utf8)
        #expect(other.withUnsafeBytes { Commands.Cursor.Arguments(requestLine: $0) } == nil)
    }
}
