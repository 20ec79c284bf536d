// Op decoding: a single op as stored or pushed (`Op(decoding:)`) and a
// chain segment (`OpSegment(decoding:)`), on the same bytes. Whatever
// decodes must encode to bytes that decode to the same thing.
import FuzzSupport
import SweeperSync

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOp(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = FuzzInput(data, size).bytes
    if let op = try? Op(decoding: bytes) {
        let again = try? Op(decoding: op.encoded)
        check(again == op && again?.signature == op.signature, "an op does not survive re-encoding")
    }
    if let segment = try? OpSegment(decoding: bytes) {
        let again = try? OpSegment(decoding: segment.encoded)
        check(again == segment, "a segment does not survive re-encoding")
    }
    return 0
}

@_cdecl("FuzzOp_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    writeSeedsIfAsked {
        let ops = Fixtures.ops + Fixtures.raceOps
        var seeds = ops.map(\.encoded)
        let replica = Fixtures.replica
        for game in replica.games.values {
            for segment in game.segments(after: VersionVector()) { seeds.append(segment.encoded) }
        }
        return seeds
    }
    return runFuzzer(argc, argv, fuzzOp)
}
