import SweeperCrypto
import SweeperMessages
import Testing

extension PeerProtocolVectorTests {
    /// Alice's address note: the `addresses` vector, and what a receiver
    /// refuses as malformed.
    @Test func addressNote() throws {
        let v = try Self.vector("addresses")
        let cast = try Cast()
        let listed = try #require(v["addresses"]).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let addresses = try listed.map { text in
            let colon = try #require(text.lastIndex(of: ":"))
            var host = String(text[..<colon])
            if host.hasPrefix("[") { host = String(host.dropFirst().dropLast()) }
            let port = try #require(UInt16(text[text.index(after: colon)...]))
            return try #require(ListenAddress(host: host, port: port))
        }
        let note = AddressNote(signing: cast.alice, serial: try v.number("serial"), addresses: addresses)
        Self.check(v, inputs: ["serial", "addresses"], outputs: [("message", Self.hex(PeerMessage.addresses(note).encoded))])
        guard case .addresses(let decoded) = try PeerMessage(decoding: v.bytes("message")) else {
            Issue.record("vector addresses: not an address note")
            return
        }
        #expect(decoded.isAuthentic && decoded.addresses.map(\.description) == listed)

        // A relay cannot move a member elsewhere: one changed byte of an address voids the signature.
        var moved = try v.bytes("message")
        moved[1 + 32 + 6 + 1 + 1 + 3] ^= 1
        guard case .addresses(let forged) = try PeerMessage(decoding: moved) else {
            Issue.record("vector addresses: a moved address does not decode")
            return
        }
        #expect(forged.addresses != decoded.addresses && !forged.isAuthentic)
    }

    /// Addresses nobody else can dial, and repeats, are malformed: a
    /// member cannot send the circle to its own loopback.
    @Test func addressNotesRefuseWhatNoOtherHostCanDial() throws {
        let cast = try Cast()
        for host in ["127.0.0.1", "0.0.0.0", "169.254.1.2", "224.0.0.251", "255.255.255.255", "::1", "::", "fe80::1", "ff02::fb", "::ffff:198.18.0.1"] {
            #expect(ListenAddress(host: host, port: 7455) == nil, "\(host) was taken")
        }
        #expect(ListenAddress(host: "198.18.0.1", port: 0) == nil)
        let good = try #require(ListenAddress(host: "198.18.0.1", port: 7455))
        let note = AddressNote(signing: cast.alice, serial: 1, addresses: [good])
        // Each crafted body differs from a good one in one place only.
        var loopback = note.encoded
        loopback.replaceSubrange((32 + 1 + 1 + 1)..<(32 + 1 + 1 + 1 + 4), with: [127, 0, 0, 1])
        var family = note.encoded
        family[32 + 1 + 1] = 5
        var count = note.encoded
        count[32 + 1] = UInt8(AddressNote.addressLimit + 1)
        for (what, body) in [("a loopback address", loopback), ("family 5", family), ("nine addresses", count)] {
            #expect(throws: (any Error).self, "\(what) decoded") { _ = try AddressNote(decoding: body) }
        }
        #expect(try AddressNote(decoding: note.encoded) == note)
        // Signed twice over, an address counts once.
        #expect(AddressNote(signing: cast.alice, serial: 2, addresses: [good, good]).addresses == [good])
    }
}
