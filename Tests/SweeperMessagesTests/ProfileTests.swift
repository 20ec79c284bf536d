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

@Suite struct PeerMessageTests {
    /// Membership records go in messages of at most 4,096 records and
    /// 1 MiB of them (a larger record alone), in order, so that no message
    /// nears the 16 MiB frame limit whatever a circle holds.
    @Test func membershipBatchesStayUnderTheirBudgets() throws {
        let large = (0..<5).map { [UInt8](repeating: UInt8($0), count: 400 << 10) }
        let huge = [UInt8](repeating: 9, count: 2 << 20)
        let batches = PeerMessage.membershipBatches(large + [huge] + large.prefix(1))
        let counts = batches.map { m -> Int in if case .membership(let r) = m { r.count } else { 0 } }
        #expect(counts == [2, 2, 1, 1, 1])
        var carried: [[UInt8]] = []
        for message in batches {
            guard case .membership(let records) = message else { continue }
            #expect(records.count == 1 || records.reduce(0) { $0 + $1.count } <= PeerMessage.membershipByteBudget)
            #expect(try PeerMessage(decoding: message.encoded) == message)
            carried += records
        }
        #expect(carried == large + [huge] + large.prefix(1))
        let many = (0..<5_000).map { [UInt8($0 % 251), 1] }
        #expect(PeerMessage.membershipBatches(many).count == 2)
        #expect(PeerMessage.membershipBatches([]).isEmpty)
    }

    /// Types that are not the application's are refused, naming the type.
    @Test func unknownTypesAreRefused() {
        #expect { try PeerMessage(type: 99, body: [1, 2]) } throws: { "\($0)" == "unknown message type 99" }
        #expect(PeerMessage.Kind.allCases.allSatisfy { PeerCapabilities(version: $0.since).reads($0) })
        #expect(!PeerCapabilities(version: 2).reads(.presence) && !PeerCapabilities(version: 5).reads(.membership))
    }
}
