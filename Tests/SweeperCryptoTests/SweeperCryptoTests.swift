import Testing

@testable import SweeperCrypto

@Suite struct SigningTests {
    @Test func signAndVerify() {
        let me = SigningIdentity()
        let message = Array("reveal 3,4".utf8)
        let sig = me.sign(message)
        #expect(me.peerID.isValidSignature(sig, of: message))
        #expect(!me.peerID.isValidSignature(sig, of: Array("reveal 3,5".utf8)))
        #expect(!SigningIdentity().peerID.isValidSignature(sig, of: message))
        var bent = sig.bytes
        bent[10] ^= 1
        #expect(Signature(bytes: bent).map { me.peerID.isValidSignature($0, of: message) } == false)
        #expect(me.peerID.isValidSignature(me.sign([]), of: []))
    }

    @Test func saveAndLoad() throws {
        let me = SigningIdentity()
        let saved = me.secretKeyBytes
        #expect(saved.count == 64)
        let loaded = try SigningIdentity(secretKeyBytes: saved)
        #expect(loaded.peerID == me.peerID)
        let sig = loaded.sign([1, 2, 3])
        #expect(me.peerID.isValidSignature(sig, of: [1, 2, 3]))
        #expect(throws: IdentityError.wrongByteCount(expected: 64, actual: 63)) { try SigningIdentity(secretKeyBytes: Array(saved.dropLast())) }
        var damaged = saved
        damaged[63] ^= 0x80
        #expect(throws: IdentityError.inconsistentKey) { try SigningIdentity(secretKeyBytes: damaged) }
    }

    @Test func seededIdentitiesAreReproducible() throws {
        let seed = [UInt8](repeating: 7, count: 32)
        #expect(try SigningIdentity(seed: seed).peerID == SigningIdentity(seed: seed).peerID)
        #expect(try SigningIdentity(seed: seed).peerID != SigningIdentity(seed: [UInt8](repeating: 8, count: 32)).peerID)
    }
}

@Suite struct PeerIDTests {
    @Test func printsAndParses() throws {
        for _ in 0..<20 {
            let id = SigningIdentity().peerID
            let text = id.description
            #expect(text.split(separator: "-").count == 11)
            #expect(try PeerID(parsing: text) == id)
            #expect(try PeerID(parsing: String(text.lowercased().map { $0 == "-" ? " " : $0 })) == id)
        }
    }

    @Test func rejectsTyposNamingTheFault() {
        let id = SigningIdentity().peerID
        let text = Array(id.description)
        // Every single-symbol substitution is caught by the check (or the padding).
        var caught = 0
        var tried = 0
        for position in stride(from: 0, to: text.count, by: 7) where text[position] != "-" {
            var typo = text
            typo[position] = typo[position] == "X" ? "Y" : "X"
            tried += 1
            do {
                _ = try PeerID(parsing: String(typo))
            } catch {
                if error == .checkMismatch { caught += 1 }
            }
        }
        #expect(caught == tried)
        #expect(throws: PeerIDError.wrongLength(expected: PeerID.symbolCount, actual: PeerID.symbolCount - 1)) {
            try PeerID(parsing: String(text.dropLast()))
        }
        var bad = text
        bad[0] = "U"
        #expect(throws: PeerIDError.invalidCharacter("U", position: 1)) { try PeerID(parsing: String(bad)) }
    }
}

@Suite struct Base32Tests {
    /// The one-pass grouped encoding against grouping the plain one, and a
    /// known text (RFC 4648's "foobar", in Crockford's alphabet).
    @Test func groupedEncodingIsTheGroupedText() throws {
        #expect(CrockfordBase32.encode(Array("foobar".utf8)) == "CSQPYRK1E8")
        #expect(CrockfordBase32.encode(Array("foobar".utf8), groupedBy: 3) == "CSQ-PYR-K1E-8")
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for length in 0...48 {
            let bytes = (0..<length).map { _ in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: state >> 56)
            }
            for size in [1, 4, 5, 7] {
                let text = CrockfordBase32.encode(bytes, groupedBy: size)
                #expect(text == CrockfordBase32.grouped(CrockfordBase32.encode(bytes), size: size))
                #expect(try CrockfordBase32.decode(text) == bytes)
            }
        }
    }
}

@Suite struct HashTests {
    @Test func blake2bMatchesKnownVector() {
        // RFC 7693 Appendix A: BLAKE2b-512("abc").
        let digest = Blake2b.hash(Array("abc".utf8), length: 64)
        let hex = digest.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        #expect(hex.hasPrefix("ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc95"))
    }

    @Test func partsAreConcatenated() {
        #expect(Blake2b.hash([1, 2], [3]) == Blake2b.hash([1, 2, 3]))
        #expect(Blake2b.hash([1, 2, 3]) != Blake2b.hash([1, 2, 4]))
    }

    @Test func keyedHashDependsOnKey() {
        let k1 = SecretBytes(randomCount: 32)
        let k2 = SecretBytes(randomCount: 32)
        #expect(Blake2b.keyedHash(key: k1, [1]) == Blake2b.keyedHash(key: k1, [1]))
        #expect(Blake2b.keyedHash(key: k1, [1]) != Blake2b.keyedHash(key: k2, [1]))
        #expect(Blake2b.keyedHash(key: k1, [1]) != Blake2b.hash([1]))
    }

    @Test func constantTimeComparison() {
        #expect(constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEqual([1, 2, 3], [1, 2]))
        #expect(constantTimeEqual([UInt8](), [UInt8]()))
        #expect(SecretBytes(copying: [9, 9]) == SecretBytes(copying: [9, 9]))
        #expect(SecretBytes(copying: [9, 9]) != SecretBytes(copying: [9, 8]))
    }
}

@Suite struct CircleTests {
    @Test func membershipProofs() {
        let circle = CircleKey()
        let other = CircleKey()
        let member = SigningIdentity().peerID
        let proof = circle.membershipProof(for: member)
        #expect(proof.count == 16)
        #expect(circle.isValidMembershipProof(proof, for: member))
        #expect(!circle.isValidMembershipProof(proof, for: SigningIdentity().peerID))
        #expect(!other.isValidMembershipProof(proof, for: member))
    }

    @Test func tagIsStablePerCircle() throws {
        let circle = CircleKey()
        let copy = try CircleKey(bytes: circle.bytes)
        #expect(circle.tag == copy.tag)
        #expect(circle.tag.count == 16)
        #expect(circle.tag != CircleKey().tag)
        #expect(throws: CircleKeyError.wrongByteCount(expected: 32, actual: 31)) { try CircleKey(bytes: [UInt8](repeating: 0, count: 31)) }
    }

    @Test func inviteCodesRoundTrip() throws {
        let circle = CircleKey()
        let code = InviteCode.encode(circle)
        #expect(code.hasPrefix("SWEEPER-"))
        #expect(try InviteCode.decode(code) == circle)
        #expect(try InviteCode.decode("  " + code.lowercased() + "\n") == circle)
    }

    @Test func inviteCodesRejectTypos() {
        let code = InviteCode.encode(CircleKey())
        var chars = Array(code)
        let i = chars.count - 10
        chars[i] = chars[i] == "7" ? "8" : "7"
        #expect(throws: InviteCode.DecodingError.checksumMismatch) { try InviteCode.decode(String(chars)) }
        #expect(throws: InviteCode.DecodingError.missingPrefix) { try InviteCode.decode(String(code.dropFirst(3))) }
        #expect(throws: InviteCode.DecodingError.self) { try InviteCode.decode(String(code.dropLast(2))) }
        #expect(throws: InviteCode.DecodingError.invalidCharacter("U", position: 3)) {
            var c = Array(code)
            c[10] = "U"
            _ = try InviteCode.decode(String(c))
        }
    }
}
