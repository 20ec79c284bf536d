import SweeperConventions
import SweeperCrypto
import Testing

@testable import SweeperMessages

@Suite struct ProfileTests {
    let alice = try! SigningIdentity(seed: [UInt8](repeating: 1, count: 32))
    let bob = try! SigningIdentity(seed: [UInt8](repeating: 2, count: 32))

    @Test func aProfileTravelsAsALinkMessageAndOnlyItsAuthorCanMakeIt() throws {
        let mum = ProfileNote(signing: alice, serial: 1_795_000_000_000, name: "Mum", colour: 8)
        #expect(try PeerMessage(decoding: PeerMessage.profile(mum).encoded) == .profile(mum))
        #expect(mum.isAuthentic)
        // Another author's key, or another name, breaks the signature.
        let stolen = try ProfileNote(decoding: (bob.peerID.bytes + mum.encoded.dropFirst(32))[...])
        #expect(stolen.author == bob.peerID && !stolen.isAuthentic)
        var renamed = mum.encoded
        renamed[32 + 6 + 1] = UInt8(ascii: "B")
        let bum = try ProfileNote(decoding: renamed[...])
        #expect(bum.name == "Bum" && !bum.isAuthentic)
    }

    @Test func namesAreCleanedWhenMadeAndRefusedWhenForeign() {
        // Made here: control characters go and the name is cut on a character boundary.
        let made = ProfileNote(signing: alice, serial: 1, name: "M\u{1B}[2Jum" + String(repeating: "Ü", count: 40), colour: 99)
        #expect(made.name.hasPrefix("M[2Jum") && made.name.utf8.count <= 64 && made.colour == ProfileNote.colourLimit)
        // From the network: a name with an escape, a colour past the palette, or a cut name are malformed.
        func body(name: [UInt8], colour: UInt8) -> [UInt8] {
            alice.peerID.bytes + [1, UInt8(name.count)] + name + [colour] + [UInt8](repeating: 0, count: 64)
        }
        let cases: [(String, [UInt8])] = [
            ("an escape", body(name: Array("a\u{1B}b".utf8), colour: 0)),
            ("colour 9", body(name: Array("ann".utf8), colour: 9)),
            ("not UTF-8", body(name: [0xC3], colour: 0)),
            ("over 64 bytes", body(name: [UInt8](repeating: 0x61, count: 65), colour: 0)),
            ("cut short", Array(body(name: Array("ann".utf8), colour: 0).dropLast())),
        ]
        for (what, bytes) in cases {
            #expect(throws: ByteDecodingError.self, "\(what)") { try ProfileNote(decoding: bytes[...]) }
        }
    }
}
