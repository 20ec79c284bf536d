import SweeperConventions
import SweeperCrypto
import Testing

@testable import SweeperMessages

@Suite struct PointTests {
    let alice = try! SigningIdentity(seed: [UInt8](repeating: 1, count: 32))
    let bob = try! SigningIdentity(seed: [UInt8](repeating: 2, count: 32))
    let game = [UInt8](repeating: 7, count: 16)
    let wall: UInt64 = 1_795_000_000_000

    func note(_ who: SigningIdentity, _ serial: UInt64, x: Int = 3, y: Int = 4) -> PointNote {
        PointNote(signing: who, serial: serial, spot: PresenceSpot(game: game, x: x, y: y)!)
    }

    @Test func aPointTravelsAsALinkMessageAndOnlyItsAuthorCanMakeIt() throws {
        let point = note(alice, wall)
        #expect(try PeerMessage(decoding: PeerMessage.point(point).encoded) == .point(point))
        #expect(point.isAuthentic)
        let stolen = try PointNote(decoding: (bob.peerID.bytes + point.encoded.dropFirst(32))[...])
        #expect(stolen.author == bob.peerID && !stolen.isAuthentic)
        let good = point.encoded
        for bad in [[], Array(good.dropLast()), good + [0]] {
            #expect(throws: ByteDecodingError.self) { try PointNote(decoding: bad[...]) }
        }
        // x = 500 is on no board.
        let x500 = Array(good[0..<(32 + 6 + 16)]) + [0xF4, 0x03, 0x01] + Array(repeating: 0, count: 64)
        #expect(throws: ByteDecodingError.self) { try PointNote(decoding: x500[...]) }
    }

    func took(_ table: inout PointTable, _ note: PointNote, now: Double, wallMillis: UInt64) -> Bool {
        table.take(note, now: now, wallMillis: wallMillis)
    }

    @Test func aReplayedStaleOrFloodingPointIsNotTaken() {
        var table = PointTable()
        #expect(took(&table, note(alice, wall), now: 0, wallMillis: wall))
        // The same note again (a relayed copy, or one replayed), or an older one: dropped.
        #expect(!took(&table, note(alice, wall), now: 0.5, wallMillis: wall))
        #expect(!took(&table, note(alice, wall - 1), now: 0.5, wallMillis: wall))
        // Another author is counted apart.
        #expect(took(&table, note(bob, wall), now: 0.5, wallMillis: wall))
        // A point kept and sent long after, or from a clock far ahead, shows nothing.
        var later = PointTable()
        #expect(!took(&later, note(alice, wall), now: 0, wallMillis: wall + PointTable.freshness + 1))
        #expect(!took(&later, note(alice, wall + PointTable.freshness + 1), now: 0, wallMillis: wall))
        #expect(took(&later, note(alice, wall + PointTable.freshness), now: 0, wallMillis: wall))
        // At most `burst` points of one author in a window; the next window takes more.
        var burst = PointTable()
        let taken = (1...10).filter { burst.take(note(alice, wall + UInt64($0)), now: Double($0) * 0.01, wallMillis: wall) }
        #expect(taken.count == PointTable.burst)
        #expect(took(&burst, note(alice, wall + 11), now: PointTable.burstWindow + 0.5, wallMillis: wall))
    }
}
