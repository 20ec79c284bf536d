import SweeperConventions
import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

@Suite struct OpEncodingTests {
    let author = OpAuthor(identity: Fixtures.identity(1), circle: Fixtures.circle(1))

    @Test func idsPrintAsLowercaseHexAndParseBack() throws {
        let id = try #require(GameID(hex: "00112233445566778899aabbccddeeff"))
        #expect(id.description == "00112233445566778899aabbccddeeff")
        #expect(GameID(hex: id.description.uppercased()) == id)
        #expect(GameID(hex: "0011") == nil)
    }

    @Test func opsRoundTripThroughStorageEncoding() throws {
        var world = try OpWorld(seed: 42)
        for _ in 0..<60 { world.step() }
        #expect(world.allOps.count > 10)
        for op in world.allOps {
            let decoded = try Op(decoding: op.encoded)
            #expect(decoded.hash == op.hash)
            #expect(decoded.payload == op.payload)
            #expect(decoded.signature == op.signature)
            #expect(decoded.hasValidSignature)
        }
    }

    @Test func decodingRejectsTrailingTruncatedAndUnknown() throws {
        let op = try Fixtures.genesis(by: author)
        let bytes = op.encoded
        #expect(throws: ByteDecodingError.trailingBytes(count: 1)) { try Op(decoding: bytes + [0]) }
        for cut in [0, 1, 17, 60, bytes.count / 2, bytes.count - 1] {
            #expect(throws: ByteDecodingError.self) { try Op(decoding: Array(bytes.prefix(cut))) }
        }
        var v2 = bytes
        v2[0] = 2
        #expect(throws: ByteDecodingError.unknownVersion(2)) { try Op(decoding: v2) }
    }

    @Test func decodingNeverTrapsOnMutatedBytes() throws {
        var world = try OpWorld(seed: 7)
        for _ in 0..<30 { world.step() }
        var rng = BoardRandom(seed: 99)
        var verified = 0
        for op in world.allOps {
            for _ in 0..<40 {
                var b = op.encoded
                let position = rng.below(b.count)
                let old = b[position]
                b[position] = UInt8(truncatingIfNeeded: rng.next())
                // Decoding may fail with an error or succeed; it must not trap. A
                // changed op that still decodes must not verify.
                if let decoded = try? Op(decoding: b), decoded.hasValidSignature {
                    verified += 1
                    #expect(b[position] == old, "a changed byte at \(position) still verified")
                }
            }
        }
        // Unchanged bytes (a random byte equal to the old one) are the only ones that verify.
        #expect(verified < world.allOps.count * 2)
    }

    @Test func cellsOutOfRangeAreRejectedByTheDecoder() {
        var w = ByteWriter()
        w.byte(OpPayload.Kind.mark.rawValue)
        w.varint(CellRuns.cellLimit)
        w.byte(1)
        var r = ByteReader(w.bytes)
        #expect(throws: ByteDecodingError.cellOutOfRange(CellRuns.cellLimit)) { try OpPayload.decode(from: &r) }

        var runs = ByteWriter()
        runs.byte(OpPayload.Kind.reveal.rawValue)
        runs.varint(1)
        runs.varint(CellRuns.cellLimit - 1)
        runs.varint(1)
        var rr = ByteReader(runs.bytes)
        #expect(throws: ByteDecodingError.cellOutOfRange(CellRuns.cellLimit)) { try OpPayload.decode(from: &rr) }
    }

    @Test func varintsMustBeShortest() throws {
        var r = ByteReader([0x80, 0x00])
        #expect(throws: ByteDecodingError.badVarint(field: "x")) { try r.varint("x") }
        var big = ByteReader([UInt8](repeating: 0xFF, count: 10) + [0x01])
        #expect(throws: ByteDecodingError.self) { try big.varint("x") }
        var w = ByteWriter()
        for v: UInt64 in [0, 1, 127, 128, 300, 1 << 40, .max] { w.varint(v) }
        var rr = ByteReader(w.bytes)
        for v: UInt64 in [0, 1, 127, 128, 300, 1 << 40, .max] { #expect(try rr.varint("v") == v) }
    }

    @Test func cellRunsRoundTrip() throws {
        var rng = BoardRandom(seed: 5)
        for _ in 0..<200 {
            let cells = (0..<rng.below(60)).map { _ in rng.below(400) }
            let runs = CellRuns(cells: cells)
            #expect(Array(runs) == Set(cells).sorted())
            guard !runs.isEmpty else { continue }
            var w = ByteWriter()
            runs.encode(into: &w)
            var r = ByteReader(w.bytes)
            #expect(try CellRuns.decode(from: &r) == runs)
            #expect(r.isAtEnd)
        }
    }

    @Test(arguments: [(9, 9, 10), (30, 16, 99), (50, 50, 2400), (500, 500, 50), (500, 500, 200_000)])
    func layoutsRoundTripCompactly(width: Int, height: Int, mines: Int) throws {
        let (p, l) = try Fixtures.layout(width: width, height: height, mines: mines, seed: UInt64(mines))
        let g = try Genesis(parameters: p, layout: l, questionMarks: false, seed: 3, createdAtMillis: 9)
        var w = ByteWriter()
        g.encode(into: &w)
        var r = ByteReader(w.bytes)
        let back = try Genesis.decode(from: &r)
        #expect(back == g)
        #expect(r.isAtEnd)
        // Never worse than the packed bitmap plus the header.
        #expect(w.bytes.count <= (width * height + 7) / 8 + 40)
        if width == 500 && mines == 50 { #expect(w.bytes.count < 200) }
    }

    @Test func genesisRefusesAMineOnTheStart() throws {
        let (p, _) = try Fixtures.layout(width: 9, height: 9, mines: 10, seed: 1)
        let onStart = try MineLayout(geometry: p.geometry, mineIndices: [p.geometry.index(of: p.start)] + Array(0..<9))
        #expect(throws: ByteDecodingError.self) {
            try Genesis(parameters: p, layout: onStart, questionMarks: false, seed: 0, createdAtMillis: 0)
        }
    }

    @Test func segmentsRoundTripAndCarryOneSignature() throws {
        var world = try OpWorld(seed: 11)
        for _ in 0..<80 { world.step() }
        let game = try #require(world.replicas[0].games[world.gameID])
        let segments = game.segments(after: VersionVector())
        #expect(!segments.isEmpty)
        let message = SyncMessage.ops(segments)
        let back = try SyncMessage(decoding: message.encoded)
        guard case .ops(let decoded) = back else {
            Issue.record("wrong message type")
            return
        }
        #expect(decoded.map { $0.ops.map(\.hash) } == segments.map { $0.ops.map(\.hash) })
        for s in decoded {
            #expect(s.ops.dropLast().allSatisfy { $0.signature == nil })
            #expect(s.ops.last?.hasValidSignature == true)
        }
        let summary = SyncMessage.summary(world.replicas[0].summary, wantsReply: true)
        #expect(try SyncMessage(decoding: summary.encoded) == summary)
        #expect(throws: ByteDecodingError.self) { try SyncMessage(decoding: message.encoded + [0]) }
        #expect(throws: ByteDecodingError.unknownVersion(9)) { try SyncMessage(decoding: [9, 0]) }
        #expect(throws: ByteDecodingError.unknownKind(field: "message type", value: 9)) { try SyncMessage(decoding: [1, 9]) }
        // A huge claimed count with no bytes behind it is refused before allocating.
        #expect(throws: ByteDecodingError.self) { try SyncMessage(decoding: [1, 0, 0, 0xFF, 0xFF, 0x03]) }
    }
}

@Suite struct MessageMutationTests {
    /// Damaged sync messages either fail to decode or, when they decode,
    /// change nothing a replica accepts beyond the original ops.
    @Test func damagedMessagesNeverTrapNorSneakOpsIn() throws {
        let world = try OpWorld.make(seed: 17, steps: 60)
        let source = world.replicas[0]
        let message = SyncMessage.ops(source.segments(for: world.gameID, after: VersionVector())).encoded
        let genuine = Set((source.games[world.gameID]?.everyOp ?? []).map(\.hash))
        var rng = BoardRandom(seed: 4)
        var decoded = 0
        for _ in 0..<300 {
            var bytes = message
            for _ in 0..<(1 + rng.below(3)) {
                switch rng.below(3) {
                case 0: bytes[rng.below(bytes.count)] = UInt8(truncatingIfNeeded: rng.next())
                case 1: bytes.removeLast(rng.below(min(8, bytes.count - 2)) + 1)
                default: bytes.insert(UInt8(truncatingIfNeeded: rng.next()), at: rng.below(bytes.count))
                }
            }
            guard let damaged = try? SyncMessage(decoding: bytes) else { continue }
            decoded += 1
            var replica = Replica(circle: world.circle)
            guard case .ops(let segments) = damaged else { continue }
            for s in segments {
                for op in replica.insert(s).accepted {
                    #expect(genuine.contains(op.hash), "a damaged message got a new op accepted")
                }
            }
        }
        // Most damage is caught by the decoder itself.
        #expect(decoded < 300)
        #expect(decoded > 0, "no damaged message decoded, so acceptance was not exercised")
    }
}
