import NIOCore
import SweeperCrypto
import SweeperMessages
import Testing

@testable import SweeperDaemon

/// The rules by which a daemon keeps members' address notes and says
/// where it listens itself.
@Suite struct AddressBookTests {
    let gran = SigningIdentity()
    let here = [ListenAddress(host: "198.18.1.3", port: 7455)!]
    let moved = [ListenAddress(host: "198.18.1.9", port: 7455)!]

    @Test func theNewestNoteOfEachAuthorIsKeptAndCopiesStop() {
        var book = AddressBook()
        let first = AddressNote(signing: gran, serial: 100, addresses: here)
        #expect(took(&book, first, at: 0))
        // A relayed copy, or an older note, changes nothing (and is not relayed again).
        #expect(!took(&book, first, at: 10))
        #expect(!took(&book, AddressNote(signing: gran, serial: 99, addresses: moved), at: 10))
        #expect(book.notes == [first])
        let second = AddressNote(signing: gran, serial: 200, addresses: moved)
        #expect(took(&book, second, at: 10))
        #expect(book.notes == [second])
    }

    @Test func aStreamOfNotesIsCutToOneEveryFewSeconds() {
        var book = AddressBook()
        #expect(took(&book, AddressNote(signing: gran, serial: 1, addresses: here), at: 100))
        var taken = 0
        for i in 1..<60 where book.take(AddressNote(signing: gran, serial: UInt64(2 + i), addresses: here), at: 100 + Double(i) * 0.25) { taken += 1 }
        // 59 notes in the next 15 seconds: one each 5 seconds goes through (at 105 and 110).
        #expect(taken == 2)
        #expect(book.notes.first?.serial == 2 + 40)
    }

    @Test func notesExpireAndThoseOfNonMembersGo() {
        var book = AddressBook()
        let mum = SigningIdentity()
        #expect(took(&book, AddressNote(signing: gran, serial: 1, addresses: here), at: 0))
        #expect(took(&book, AddressNote(signing: mum, serial: 1, addresses: moved), at: 600))
        let early = book.expire(at: AddressBook.lifetime - 1)
        #expect(early.isEmpty)
        let late = book.expire(at: AddressBook.lifetime)
        #expect(late == [gran.peerID])
        #expect(book.notes.map(\.author) == [mum.peerID])
        // Removed from the circle: forgotten at once.
        let removed = book.expire(at: AddressBook.lifetime, keeping: { $0 != mum.peerID })
        #expect(removed == [mum.peerID])
        #expect(book.notes.isEmpty)
        // Expired, an old serial is taken again (the author's clock went back).
        #expect(took(&book, AddressNote(signing: gran, serial: 1, addresses: here), at: 3 * AddressBook.lifetime))
    }

    @Test func onlyAFreshNoteCountsAsSeeingItsAuthor() {
        let now: UInt64 = 1_795_000_000_000
        #expect(AddressBook.isFresh(AddressNote(signing: gran, serial: now - 60_000, addresses: here), wallMillis: now))
        #expect(AddressBook.isFresh(AddressNote(signing: gran, serial: now + 60_000, addresses: here), wallMillis: now))
        #expect(!AddressBook.isFresh(AddressNote(signing: gran, serial: now - 11 * 60_000, addresses: here), wallMillis: now))
    }

    @Test func aDaemonListeningEverywhereNamesEachInterfaceAddress() throws {
        let any6 = try SocketAddress(ipAddress: "::", port: 7455)
        let any4 = try SocketAddress(ipAddress: "0.0.0.0", port: 7456)
        let one = try SocketAddress(ipAddress: "198.18.0.2", port: 7457)
        let interfaces = ["2001:db8::5", "198.18.0.2", "10.0.0.7"]
        #expect(
            AddressGossip.dialable(listening: [any6], interfaces: interfaces).map(\.description)
                == ["198.18.0.2:7455", "10.0.0.7:7455", "[2001:db8::5]:7455"])
        #expect(AddressGossip.dialable(listening: [any4], interfaces: interfaces).map(\.description) == ["198.18.0.2:7456", "10.0.0.7:7456"])
        #expect(AddressGossip.dialable(listening: [one], interfaces: interfaces).map(\.description) == ["198.18.0.2:7457"])
        // Listening on loopback only: nothing another host can dial.
        #expect(AddressGossip.dialable(listening: [try SocketAddress(ipAddress: "127.0.0.1", port: 7455)], interfaces: interfaces).isEmpty)
        let many = (1...12).map { "198.18.2.\($0)" }
        #expect(AddressGossip.dialable(listening: [any6], interfaces: many).count == AddressNote.addressLimit)
    }
}

/// `book.take`, callable inside `#expect`.
private func took(_ book: inout AddressBook, _ note: AddressNote, at now: Double) -> Bool { book.take(note, at: now) }
