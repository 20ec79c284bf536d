// Membership records: bytes as a record (`MembershipRecord(decoding:)`,
// which must survive re-encoding), and a script of devices that found,
// invite, admit, revoke, remove and rekey, each against its own copy,
// exchanging records in the order the fuzzer picks. Invariants: once every
// device holds every record, all derive the same view; no removed device
// is a member; a device's records inserted in any order give that view.
import FuzzSupport
import SweeperCrypto
import SweeperMembership
import SweeperSync

let devices: [SigningIdentity] = (1...5).map { Fixtures.identity($0) }
let invitations: [SigningIdentity] = (100...103).map { Fixtures.identity($0) }
let game = Fixtures.genesis.gameID

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMembership(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    guard !input.isAtEnd else { return 0 }
    if input.byte() & 1 == 0 {
        let bytes = input.rest()
        if let record = try? MembershipRecord(decoding: bytes) {
            let again = try? MembershipRecord(decoding: record.encoded)
            check(again == record && again?.signature == record.signature && again?.change == record.change,
                  "a record does not survive re-encoding")
        }
        return 0
    }
    var copies = devices.map { _ in CircleMembership(firstKey: Fixtures.circle) }
    var clock: UInt64 = 1_000
    var steps = 0
    while !input.isAtEnd && steps < 48 {
        steps += 1
        let who = Int(input.byte()) % devices.count
        let what = input.byte() % 8
        let other = Int(input.byte()) % devices.count
        clock += 1
        let me = devices[who]
        let view = copies[who].view
        switch what {
        case 0: copies[who].record(.found(proof: Fixtures.circle.membershipProof(for: me.peerID)), by: me, atMillis: clock)
        case 1:
            let invitation = invitations[other % invitations.count]
            copies[who].record(.invite(key: invitation.peerID, expiresMillis: clock + 100), by: me, atMillis: clock)
        case 2:
            let invitation = invitations[Int(input.byte()) % invitations.count]
            copies[who].record(.admit(subject: devices[other].peerID, invitation: invitation.peerID, name: "d\(other)"), by: me, atMillis: clock)
        case 3:
            copies[who].record(.revoke(key: invitations[other % invitations.count].peerID), by: me, atMillis: clock)
        case 4:
            copies[who].record(.remove(subject: devices[other].peerID, kept: [game: UInt64(input.byte() % 4)]), by: me, atMillis: clock)
        case 5:
            copies[who].record(.rekey(to: CircleKey(), epoch: view.currentEpoch + 1 + UInt64(input.byte() % 2), members: view.members.keys),
                               by: me, atMillis: clock)
        default:
            // Some of another device's records, newest first (so some wait for their parents).
            let records = Array(copies[other].ordered.reversed().prefix(Int(input.byte()) % 8 + 1))
            copies[who].insert(records)
        }
    }
    // Everyone gets everything, in an order the fuzzer chose, twice over.
    for _ in 0..<2 {
        for i in copies.indices {
            for j in copies.indices where i != j { copies[i].insert(copies[j].ordered.reversed()) }
        }
    }
    let first = copies[0].view
    for c in copies {
        check(c.view == first, "two devices with the same records disagree")
        check(c.records.count == copies[0].records.count, "records did not reach everyone")
    }
    for peer in first.removed.keys { check(!first.isMember(peer), "a removed device is a member") }
    var again = CircleMembership(firstKey: Fixtures.circle)
    again.insert(copies[0].records.values.sorted { $0.hash > $1.hash })
    check(again.view == first, "the view depends on the order records came in")
    return 0
}

@_cdecl("FuzzMembership_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    writeSeedsIfAsked {
        var m = CircleMembership(firstKey: Fixtures.circle)
        let a = devices[0]
        m.record(.found(proof: Fixtures.circle.membershipProof(for: a.peerID)), by: a, atMillis: 1)
        m.record(.invite(key: invitations[0].peerID, expiresMillis: 9), by: a, atMillis: 2)
        m.record(.admit(subject: devices[1].peerID, invitation: invitations[0].peerID, name: "b"), by: a, atMillis: 3)
        m.record(.remove(subject: devices[1].peerID, kept: [game: 2]), by: a, atMillis: 4)
        m.record(.rekey(to: CircleKey(), epoch: 1, members: [a.peerID]), by: a, atMillis: 5)
        m.record(.revoke(key: invitations[0].peerID), by: a, atMillis: 6)
        var seeds = m.ordered.map { [0] + $0.encoded }
        // Scripts: found, invite, admit, exchange, remove, rekey, exchange.
        seeds.append([1, 0, 0, 0, 0, 1, 0, 0, 2, 1, 0, 1, 7, 0, 8, 0, 4, 1, 2, 0, 5, 0, 0, 2, 7, 0, 9])
        seeds.append([1, 0, 0, 0, 1, 0, 1, 0, 4, 1, 3, 1, 4, 0, 1, 0, 7, 1, 5, 1, 7, 0, 5])
        return seeds
    }
    return runFuzzer(argc, argv, fuzzMembership)
}
