import SweeperConventions
import SweeperCrypto
import Testing

@testable import SweeperMessages

@Suite struct PresenceTests {
    let alice = try! SigningIdentity(seed: [UInt8](repeating: 1, count: 32))
    let bob = try! SigningIdentity(seed: [UInt8](repeating: 2, count: 32))
    let game = [UInt8](repeating: 7, count: 16)

    func note(_ who: SigningIdentity, _ serial: UInt64, _ x: Int? = nil, _ y: Int = 0) -> PresenceNote {
        PresenceNote(signing: who, serial: serial, spot: x.flatMap { PresenceSpot(game: game, x: $0, y: y) })
    }

    @Test func aNoteTravelsAsALinkMessageAndOnlyItsAuthorCanMakeIt() throws {
        let here = note(alice, 1_795_000_000_000, 3, 4)
        let decoded = try PeerMessage(decoding: PeerMessage.presence(here).encoded)
        #expect(decoded == .presence(here))
        #expect(here.isAuthentic)
        let gone = note(alice, 1_795_000_000_001)
        let decodedGone = try PresenceNote(decoding: gone.encoded[...])
        #expect(decodedGone == gone && decodedGone.isAuthentic && decodedGone.spot == nil)

        // A relay that moves the cursor, or claims the note for another author, breaks the signature.
        var bytes = here.encoded
        bytes[32 + 6 + 1 + 16] = 9  // x (the serial is 6 bytes of LEB128 here)
        let moved = try PresenceNote(decoding: bytes[...])
        #expect(moved.spot?.x == 9 && !moved.isAuthentic)
        let stolen = try PresenceNote(decoding: (bob.peerID.bytes + here.encoded.dropFirst(32))[...])
        #expect(stolen.author == bob.peerID && !stolen.isAuthentic)
    }

    @Test func malformedNotesAreRefused() {
        let good = note(alice, 5, 1, 1).encoded
        var unknownState = good
        unknownState[33] = 2
        var offBoard = note(alice, 5, 1, 1).encoded
        offBoard[32 + 1 + 1 + 16] = 0x80  // x's varint goes on into y's byte: 0x80 0x01 = 128, then a short note
        let cases: [(String, [UInt8])] = [
            ("empty", []), ("cut", Array(good.dropLast())), ("trailing", good + [0]), ("unknown state", unknownState),
            ("a number not in its shortest form", Array(good[0..<32]) + [0x85, 0x00] + Array(good[33...])),
            ("a varint running over", offBoard),
        ]
        for (what, bytes) in cases {
            #expect(throws: ByteDecodingError.self, "\(what)") { try PresenceNote(decoding: bytes[...]) }
        }
        #expect(PresenceSpot(game: game, x: 500, y: 0) == nil)
        #expect(PresenceSpot(game: [1, 2], x: 0, y: 0) == nil)
        // 500 as x on the wire is out of range.
        let x500 = Array(good[0..<(32 + 1 + 1 + 16)]) + [0xF4, 0x03, 0x01] + Array(repeating: 0, count: 64)
        #expect(throws: ByteDecodingError.self) { try PresenceNote(decoding: x500[...]) }
    }

    @Test func theNewestNoteWinsWhileItLivesAndLateCopiesChangeNothing() {
        var table = PresenceTable()
        let spot = { (x: Int) in PresenceSpot(game: game, x: x, y: 0) }
        #expect(table.take(note(alice, 10, 1), now: 0) == .moved(spot(1)))
        #expect(table.take(note(alice, 12, 2), now: 0.1) == .moved(spot(2)))
        // A relayed copy of an older note, arriving late, is stale.
        #expect(table.take(note(alice, 11, 1), now: 0.2) == .none)
        #expect(table.take(note(alice, 12, 2), now: 0.2) == .none)
        // The heartbeat repeats the spot: renewed, nothing to show.
        #expect(table.take(note(alice, 13, 2), now: 2) == .renewed)
        #expect(table.spots == [alice.peerID: spot(2)!])
        // Leaving is kept as such, so a late "here" cannot bring the cursor back.
        #expect(table.take(note(alice, 14), now: 2.5) == .moved(nil))
        #expect(table.take(note(alice, 13, 2), now: 2.6) == .none)
        #expect(table.spots.isEmpty)
        // A note of someone never shown that says they left is nothing to show.
        #expect(table.take(note(bob, 1), now: 3) == .renewed)
    }

    @Test func aPlayerWhoStopsRenewingExpires() {
        var table = PresenceTable()
        _ = table.take(note(alice, 100, 1), now: 0)
        _ = table.take(note(bob, 100, 1), now: 3)
        #expect(table.expire(now: PresenceTable.lifetime - 0.01).isEmpty)
        #expect(table.expire(now: PresenceTable.lifetime) == [alice.peerID])
        #expect(table.spots.keys.sorted() == [bob.peerID])
        // Once expired, any serial is taken: a daemon restarted with its clock set back is seen again.
        #expect(table.take(note(alice, 5, 3), now: 6) == .moved(PresenceSpot(game: game, x: 3, y: 0)))
    }

    @Test func whenTheLastLinkToAPeerClosesEveryoneItBroughtLooksNowhere() {
        var table = PresenceTable()
        let carol = SigningIdentity()
        // Alice heard from Alice, Bob relayed by Alice, Carol heard from Carol.
        _ = table.take(note(alice, 100, 1), now: 0, via: alice.peerID)
        _ = table.take(note(bob, 100, 2), now: 0, via: alice.peerID)
        _ = table.take(note(carol, 100, 3), now: 0, via: carol.peerID)
        #expect(table.spots.count == 3)
        // Alice's link closes, long before the notes would expire: both go at once; Carol stays.
        #expect(table.linkLost(to: alice.peerID) == [alice.peerID, bob.peerID].sorted())
        #expect(table.spots.keys.sorted() == [carol.peerID] && table.expire(now: 1).isEmpty)
        #expect(table.linkLost(to: alice.peerID).isEmpty)
        // Bob heard again by another path shows again.
        #expect(table.take(note(bob, 101, 2), now: 1, via: carol.peerID) == .moved(PresenceSpot(game: game, x: 2, y: 0)))
    }
}
