// Membership records: bytes as a record of either version (which must
// survive re-encoding), and a script of devices acting in good and bad
// faith, each against its own copy, exchanging records in the order the
// fuzzer picks. The honest moves go through `record` as the daemon makes
// them (found, invite, admit, promote, remove, rekey, revoke, invitations
// off and on); the
// adversarial ones are forged: a removal with no parents (backdated), a
// second record at a place in the author's chain (equivocation), a record
// of a removed device written after its removal, a founding by a stranger
// holding the first key, a rekey sealed to made-up recipients, and a
// removed device's fork of its own chain below its cut (an invitation and
// the admission of a puppet identity, at places its real chain holds
// already). Invariants:
// once every device holds every record, all hold the same records and
// derive the same view, in any order; the founder is never removed; no
// removed device is a member; every removal's author was, when it wrote
// it, more senior than the device it removed; no record written after its
// author's cut counts: a puppet a removed device admitted by a fork is no
// member anywhere while its remover's records count.
import FuzzSupport
import SweeperCrypto
import SweeperMembership
import SweeperSync

let devices: [SigningIdentity] = (1...5).map { Fixtures.identity($0) }
let invitations: [SigningIdentity] = (100...107).map { Fixtures.identity($0) }
let stranger = Fixtures.identity(60)
let puppet = Fixtures.identity(61)
let game = Fixtures.genesis.gameID
let circleID = CircleID(firstKey: Fixtures.circle)

/// The next record of `who`'s chain in `m`, with every field chosen.
func forged(_ m: CircleMembership, _ who: SigningIdentity, parents: Set<RecordHash>, samePlace: Bool, _ change: MembershipChange)
    -> MembershipRecord
{
    let head = m.chainHead(of: who.peerID)
    var seq = (head?.seq ?? 0) + 1
    var previous = head?.hash
    if samePlace, let head, let record = m.records[head.hash] {
        seq = head.seq
        previous = record.previous
    }
    return MembershipRecord(signing: who, circle: circleID, madeMillis: 7, seq: seq, previous: previous, parents: parents, change: change)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMembership(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    guard !input.isAtEnd else { return 0 }
    if input.byte() & 1 == 0 {
        let bytes = input.rest()
        switch try? AnyMembershipRecord(decoding: bytes) {
        case .current(let record):
            let again = try? MembershipRecord(decoding: record.encoded)
            check(
                again == record && again?.signature == record.signature && again?.change == record.change && again?.seq == record.seq,
                "a record does not survive re-encoding")
        case .legacy(let record):
            let again = try? LegacyRecord(decoding: record.encoded)
            check(again == record && again?.change == record.change, "a record of version 1 does not survive re-encoding")
        case nil:
            break
        }
        return 0
    }
    // Device 0 founds, and every copy holds that (a daemon founds or is
    // admitted before it links); the others are admitted as the script goes.
    var founded = CircleMembership(firstKey: Fixtures.circle)
    _ = try? founded.record(.found(proof: Fixtures.circle.membershipProof(for: devices[0].peerID)), by: devices[0], atMillis: 1)
    var copies = devices.map { _ in founded }
    var clock: UInt64 = 1_000
    var steps = 0
    /// Forks a removed device wrote below its cut: by whom, and who removed it.
    var forks: [(forger: PeerID, remover: PeerID)] = []
    while !input.isAtEnd && steps < 48 {
        steps += 1
        let who = Int(input.byte()) % devices.count
        let what = input.byte() % 15
        let other = Int(input.byte()) % devices.count
        clock += 1
        let me = devices[who]
        let m = copies[who]
        let subject = devices[other].peerID
        let through = m.chainHead(of: subject)?.seq ?? 0
        switch what {
        case 0:
            let invitation = invitations[Int(input.byte()) % invitations.count]
            _ = try? copies[who].record(.invite(key: invitation.peerID, expiresMillis: clock + 100), by: me, atMillis: clock)
        case 1:
            let invitation = invitations[Int(input.byte()) % invitations.count]
            _ = try? copies[who].record(.admit(subject: subject, invitation: invitation.peerID, name: "d\(other)", through: through), by: me, atMillis: clock)
        case 2:
            _ = try? copies[who].record(.promote(subject: subject, through: through), by: me, atMillis: clock)
        case 3:
            _ = try? copies[who].record(.remove(subject: subject, through: through, kept: [game: UInt64(input.byte() % 4)]), by: me, atMillis: clock)
        case 4:
            let view = m.view
            _ = try? copies[who].record(.rekey(to: CircleKey(), epoch: view.currentEpoch + 1, members: view.members.keys), by: me, atMillis: clock)
        case 5:
            _ = try? copies[who].record(.revoke(key: invitations[other % invitations.count].peerID), by: me, atMillis: clock)
        case 6:
            // Backdated: a removal naming no parents, through 0.
            copies[who].insert([forged(m, me, parents: [], samePlace: false, .remove(subject: subject, through: 0, kept: [:]))])
        case 7:
            // Equivocation: a second record at the author's last place.
            copies[who].insert([forged(m, me, parents: m.heads, samePlace: true, .promote(subject: subject, through: 0))])
        case 8:
            // A stranger holding the first key founds, and admits a device with its own invitation.
            let founding = MembershipRecord(
                signing: stranger, circle: circleID, madeMillis: 1, seq: 1, previous: nil, parents: [],
                change: .found(proof: Fixtures.circle.membershipProof(for: stranger.peerID)))
            copies[who].insert([founding])
        case 9:
            // A rekey sealed to made-up recipients.
            let fake = (0..<Int(input.byte() % 8)).map { Fixtures.identity(UInt8(200 + $0)).peerID }
            copies[who].insert([
                forged(
                    m, me, parents: m.heads, samePlace: false,
                    .rekey(to: CircleKey(), epoch: m.view.currentEpoch + 1, members: fake))
            ])
        case 10:
            // An admin turns a member's invitations off or on, as the daemon would.
            _ = try? copies[who].record(.invitations(subject: subject, through: through, allowed: input.byte() & 1 == 1), by: me, atMillis: clock)
        case 11:
            // A switch forged with every field chosen: no parents, any place.
            copies[who].insert([
                forged(
                    m, me, parents: [], samePlace: input.byte() & 1 == 1,
                    .invitations(subject: subject, through: UInt64(input.byte() % 4), allowed: input.byte() & 1 == 1))
            ])
        case 14:
            // A removed device, at a place at or below its cut as some copy
            // holds it, signs an invitation and admits a puppet with it, and
            // hands both to a device (perhaps one that missed the removal).
            guard let holder = copies.firstIndex(where: { ($0.view.removed[me.peerID]?.through ?? 0) > 0 }),
                let removal = copies[holder].view.removed[me.peerID]
            else { break }
            let place = 1 + UInt64(input.byte()) % removal.through
            let before = copies[holder].records.values.first { $0.author == me.peerID && $0.seq == place - 1 }?.hash
            guard place == 1 || before != nil else { break }
            let key = invitations[Int(input.byte()) % invitations.count].peerID
            let invite = MembershipRecord(
                signing: me, circle: circleID, madeMillis: 3, seq: place, previous: before, parents: [],
                change: .invite(key: key, expiresMillis: .max))
            let admit = MembershipRecord(
                signing: me, circle: circleID, madeMillis: 4, seq: place + 1, previous: invite.hash, parents: [],
                change: .admit(subject: puppet.peerID, invitation: key, name: "p", through: 0))
            copies[other].insert([invite, admit])
            copies[holder].insert([invite, admit])
            check(!copies[holder].view.isMember(puppet.peerID), "a fork below a cut admitted a device where the cut is held")
            forks.append((me.peerID, removal.removedBy))
        default:
            // Some of another device's records, newest first (so some wait for those they name).
            let records = Array(copies[other].ordered.reversed().prefix(Int(input.byte()) % 8 + 1))
            copies[who].insert(records)
        }
    }
    // Everyone gets everything, newest first, until nothing new comes (a
    // record that waited for its author's admission surfaces only then).
    for _ in 0..<16 {
        var changed = false
        for i in copies.indices {
            for j in copies.indices where i != j {
                if !copies[i].insert(copies[j].ordered.reversed()).added.isEmpty { changed = true }
            }
        }
        if !changed { break }
    }
    let first = copies[0].view
    for c in copies {
        check(Set(c.records.keys) == Set(copies[0].records.keys), "records did not reach everyone")
        check(c.view == first, "two devices with the same records disagree")
    }
    check(first.role(of: devices[0].peerID) == .founder, "the founder is no longer the founder")
    check(!first.isRemoved(devices[0].peerID), "the founder was removed")
    for peer in first.removed.keys { check(!first.isMember(peer), "a removed device is a member") }
    check(!first.isMember(stranger.peerID), "a stranger's founding admitted it")
    for fork in forks where first.isMember(fork.remover) && first.equivocations[fork.remover] == nil {
        check(!first.isMember(puppet.peerID), "a record written below its author's cut counts")
    }
    var again = CircleMembership(firstKey: Fixtures.circle)
    again.insert(copies[0].ordered.reversed())
    again.insert(copies[0].ordered.reversed())
    check(again.view == first, "the view depends on the order records came in")
    return 0
}

@_cdecl("FuzzMembership_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    writeSeedsIfAsked {
        var m = CircleMembership(firstKey: Fixtures.circle)
        let a = devices[0], b = devices[1].peerID
        _ = try? m.record(.found(proof: Fixtures.circle.membershipProof(for: a.peerID)), by: a, atMillis: 1)
        _ = try? m.record(.invite(key: invitations[0].peerID, expiresMillis: 9), by: a, atMillis: 2)
        _ = try? m.record(.admit(subject: b, invitation: invitations[0].peerID, name: "b", through: 0), by: a, atMillis: 3)
        _ = try? m.record(.promote(subject: b, through: 0), by: a, atMillis: 4)
        _ = try? m.record(.remove(subject: b, through: 0, kept: [game: 2]), by: a, atMillis: 5)
        _ = try? m.record(.rekey(to: CircleKey(), epoch: 1, members: [a.peerID]), by: a, atMillis: 6)
        _ = try? m.record(.revoke(key: invitations[0].peerID), by: a, atMillis: 7)
        var seeds = m.ordered.map { [0] + $0.encoded }
        let legacy = LegacyRecord(
            signing: a, circle: circleID, madeMillis: 1, parents: [],
            change: .found(proof: Fixtures.circle.membershipProof(for: a.peerID)))
        seeds.append([0] + legacy.encoded)
        // Scripts: invite, admit, exchange, promote, remove, backdated removal, equivocation, stranger, exchange.
        seeds.append([1, 0, 0, 0, 0, 0, 1, 1, 0, 1, 1, 11, 0, 0, 2, 1, 0, 3, 2, 0, 1, 6, 0, 1, 7, 2, 8, 0, 3, 11, 0, 1, 5])
        seeds.append([1, 0, 0, 2, 3, 0, 1, 2, 3, 1, 11, 0, 0, 0, 3, 1, 3, 6, 0, 0, 4, 1, 3, 9, 0, 4, 3, 11, 0, 7])
        return seeds
    }
    return runFuzzer(argc, argv, fuzzMembership)
}
