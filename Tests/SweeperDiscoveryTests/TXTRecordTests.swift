import Testing

@testable import SweeperDiscovery

/// How one TXT string from anyone on the network is read.
@Suite struct TXTRecordTests {
    @Test func splitsAtTheFirstEquals() throws {
        let entry = try #require(ServiceRecord.txtEntry(Array("name=a=b".utf8)))
        #expect(entry.key == "name" && entry.value == "a=b")
        let empty = try #require(ServiceRecord.txtEntry(Array("v=".utf8)))
        #expect(empty.key == "v" && empty.value == "")
    }

    @Test func aStringWithoutEqualsIsNoEntry() {
        #expect(ServiceRecord.txtEntry(Array("flag".utf8)) == nil)
        #expect(ServiceRecord.txtEntry([UInt8]()) == nil)
    }

    @Test func keysIgnoreCaseAndTheFirstOfDuplicatesWins() {
        let entries = ServiceRecord.txtEntries(["V=2", "ID=first", "id=second", "flag", "=empty key", "Name=Mum"].map { Array($0.utf8) })
        #expect(entries == ["v": "2", "id": "first", "name": "Mum"])
    }

    @Test func readsAtMost255BytesAndReplacesBadUTF8() throws {
        let long = Array("k=".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 400)
        let entry = try #require(ServiceRecord.txtEntry(long))
        #expect(entry.value.utf8.count == 253)
        let bad = try #require(ServiceRecord.txtEntry(Array("k=".utf8) + [0xFF, 0x41]))
        #expect(bad.value == "\u{FFFD}A")
    }
}
