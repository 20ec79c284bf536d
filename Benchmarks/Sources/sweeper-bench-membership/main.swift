import SweeperCrypto
import SweeperMembership
import SweeperSync

// sweeper-bench-membership: what deriving a circle's membership costs.
// Build in release; Scripts/bench.sh runs it.
//
//   sweeper-bench-membership [--floods]
//
// Prints, for people and as `result: KEY VALUE` lines for Scripts/bench.sh
// (wall-clock milliseconds on one thread, best of 3):
//
// - derive: a full circle of 4,096 budgeted records (a founder, 64 members
//   each at its budget of invitations) taken in one message: 4,096
//   signatures checked and one derivation (the daemon does this off its
//   event loop);
// - incremental: one more record (a removal, which counts whatever the
//   circle holds) taken by a replica that holds those 4,096: one signature
//   and one derivation, what each later record costs;
// - flood: the same 4,096 records arriving one per message, as a member
//   flooding them would send them: the longest single insert (the longest
//   the event loop is held) and the total;
// - a chain of admissions 1,024 deep (each device admits the next), taken in
//   one message;
// - 256 removals by one admin, one per message: the longest insert;
// - hostile messages (Floods.swift): the longest one message of each kind
//   holds the event loop, from a member and from a holder of the circle key
//   no admission names, and the memory a flood of them leaves.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let firstKey = (try? CircleKey(bytes: [UInt8](repeating: 0xC1, count: 32))) ?? CircleKey()

let circle = CircleID(firstKey: firstKey)

func identity(_ n: Int) -> SigningIdentity {
    var seed = [UInt8](repeating: 0x5E, count: 32)
    seed[0] = UInt8(n & 0xFF)
    seed[1] = UInt8((n >> 8) & 0xFF)
    return (try? SigningIdentity(seed: seed)) ?? SigningIdentity()
}

func milliseconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) * 1000 + Double(t.tv_nsec) / 1_000_000
}

/// Milliseconds with one decimal.
func ms(_ x: Double) -> String { "\((x * 10).rounded() / 10) ms" }

func best(_ runs: Int = 3, _ body: () -> Double) -> Double { (0..<runs).map { _ in body() }.min() ?? 0 }

/// Makes records as a device would, in one replica that holds them all.
struct Writer {
    var membership = CircleMembership(firstKey: firstKey)
    var clock: UInt64 = 1_000

    mutating func make(_ change: MembershipChange, by who: SigningIdentity) {
        clock += 1
        _ = try? membership.record(change, by: who, atMillis: clock)
    }
}

// `--floods`: the hostile messages alone.
if CommandLine.arguments.contains("--floods") {
    measureFloods()
    exit(0)
}

// MARK: A full circle

let founder = identity(0)
var full = Writer()
full.make(.found(proof: firstKey.membershipProof(for: founder.peerID)), by: founder)
let members = (1...64).map { identity($0) }
for (i, m) in members.enumerated() {
    let key = identity(10_000 + i).peerID
    full.make(.invite(key: key, expiresMillis: .max), by: founder)
    full.make(.admit(subject: m.peerID, invitation: key, name: "m\(i)", through: 0), by: founder)
}
var n = 20_000
outer: for m in members {
    for _ in 0..<(CircleMembership.authorBudget) {
        guard full.membership.records.count < CircleMembership.recordLimit else { break outer }
        full.make(.invite(key: identity(n).peerID, expiresMillis: .max), by: m)
        n += 1
    }
}
let records = full.membership.ordered
print("sweeper-bench-membership (one thread; wall clock, best of 3)")
print("a circle of \(records.count) records, \(full.membership.view.members.count) members")

let derive = best {
    var m = CircleMembership(firstKey: firstKey)
    let t0 = milliseconds()
    m.insert(records)
    return milliseconds() - t0
}
print("derive \(records.count) records in one message: \(ms(derive))")
print("result: membership.derive4096_ms \(derive)")

let extra = MembershipRecord(
    signing: founder, circle: circle, madeMillis: 9, seq: (full.membership.chainHead(of: founder.peerID)?.seq ?? 0) + 1,
    previous: full.membership.chainHead(of: founder.peerID)?.hash, parents: full.membership.heads,
    change: .remove(subject: members[63].peerID, through: full.membership.chainHead(of: members[63].peerID)?.seq ?? 0, kept: [:]))
var incrementalApplied = false
let incremental = best {
    var m = full.membership
    let t0 = milliseconds()
    let outcome = m.insert([extra])
    let took = milliseconds() - t0
    incrementalApplied = outcome.added.count == 1 && m.view.isRemoved(members[63].peerID)
    return took
}
guard incrementalApplied else {
    // The figure would not be a derivation: say so and give none.
    print("sweeper-bench-membership: the extra record was not taken")
    exit(1)
}
print("one more record (a removal: a signature and a derivation), holding \(records.count): \(ms(incremental))")
print("result: membership.incremental_ms \(incremental)")

// MARK: A flood, one record per message

var longest = 0.0
var total = 0.0
do {
    var m = CircleMembership(firstKey: firstKey)
    for record in records {
        let t0 = milliseconds()
        m.insert([record])
        let took = milliseconds() - t0
        longest = max(longest, took)
        total += took
    }
}
print("flood of \(records.count) records, one per message: longest insert \(ms(longest)), all \(ms(total))")
print("result: membership.flood_longest_ms \(longest)")
print("result: membership.flood_total_ms \(total)")

// MARK: A deep chain of admissions

var deep = Writer()
let chain = (0...1_024).map { identity(30_000 + $0) }
deep.make(.found(proof: firstKey.membershipProof(for: chain[0].peerID)), by: chain[0])
for i in 1..<chain.count {
    let key = identity(40_000 + i).peerID
    deep.make(.invite(key: key, expiresMillis: .max), by: chain[i - 1])
    deep.make(.admit(subject: chain[i].peerID, invitation: key, name: "", through: 0), by: chain[i - 1])
}
let deepRecords = deep.membership.ordered
let deepTime = best {
    var m = CircleMembership(firstKey: firstKey)
    let t0 = milliseconds()
    m.insert(deepRecords)
    return milliseconds() - t0
}
print("a chain of \(chain.count - 1) admissions (\(deepRecords.count) records) in one message: \(ms(deepTime))")
print("result: membership.deep1024_ms \(deepTime)")

// MARK: Removals, one per message

var removing = full
var removalLongest = 0.0
for m in members.prefix(64) {
    let t0 = milliseconds()
    removing.make(.remove(subject: m.peerID, through: removing.membership.chainHead(of: m.peerID)?.seq ?? 0, kept: [:]), by: founder)
    removalLongest = max(removalLongest, milliseconds() - t0)
}
print("64 removals by the founder, holding \(records.count) records: longest \(ms(removalLongest)); \(removing.membership.view.removed.count) removed")
print("result: membership.removal_longest_ms \(removalLongest)")

// MARK: Hostile messages

measureFloods()
