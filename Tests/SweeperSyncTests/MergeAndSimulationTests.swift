import Foundation
import PropertyBased
import SweeperCrypto
import SweeperGame
import Testing

@testable import SweeperSync

/// The replica's view of an op set: its vectors and the game's digest.
struct Outcome: Equatable {
    let summary: [GameID: VersionVector]
    let digest: [UInt8]?

    init(_ r: Replica, _ game: GameID) {
        summary = r.summary
        digest = r.state(of: game)?.digest
    }
}

func replica(_ circle: CircleKey, inserting ops: [Op]) -> Replica {
    var r = Replica(circle: circle)
    for op in ops { r.insert(op) }
    return r
}

@Suite struct MergeProperties {
    /// A random op set from concurrent players, and three random sub-sets.
    static func parts(_ seed: Int) throws -> (OpWorld, [[Op]]) {
        let world = try OpWorld.make(seed: UInt64(seed), steps: 40)
        var rng = BoardRandom(seed: UInt64(seed) ^ 0xABCD)
        var parts: [[Op]] = [[], [], []]
        for op in world.allOps {
            // Each op lands in one part, sometimes in two (duplicated across parts).
            parts[rng.below(3)].append(op)
            if rng.below(4) == 0 { parts[rng.below(3)].append(op) }
        }
        return (world, parts.enumerated().map { $0.element.shuffled(seed: UInt64(seed) &+ UInt64($0.offset)) })
    }

    @Test func mergeIsCommutative() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...1_000_000)) { seed in
            guard let (world, p) = try? Self.parts(seed) else { Issue.record("seed \(seed): no world"); return }
            let ab = Outcome(replica(world.circle, inserting: p[0] + p[1]), world.gameID)
            let ba = Outcome(replica(world.circle, inserting: p[1] + p[0]), world.gameID)
            #expect(ab == ba, "seed \(seed)")
        }
    }

    @Test func mergeIsAssociative() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...1_000_000)) { seed in
            guard let (world, p) = try? Self.parts(seed) else { Issue.record("seed \(seed): no world"); return }
            // (A ∪ B) ∪ C: one replica takes A, then B, then C.
            var left = replica(world.circle, inserting: p[0] + p[1])
            for op in p[2] { left.insert(op) }
            // A ∪ (B ∪ C): a replica of B ∪ C syncs into a replica of A, as
            // segments for what it has accepted and as single ops for what waits.
            let bc = replica(world.circle, inserting: p[2].reversed() + p[1])
            var right = replica(world.circle, inserting: p[0])
            for s in bc.segments(for: world.gameID, after: right.summary[world.gameID] ?? VersionVector()) { right.insert(s) }
            for op in (p[1] + p[2]).shuffled(seed: UInt64(seed)) { right.insert(op) }
            #expect(Outcome(left, world.gameID) == Outcome(right, world.gameID), "seed \(seed)")
        }
    }

    @Test func mergeIsIdempotent() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...1_000_000)) { seed in
            guard let (world, p) = try? Self.parts(seed) else { Issue.record("seed \(seed): no world"); return }
            let once = replica(world.circle, inserting: p[0] + p[1])
            var twice = once
            for op in (p[0] + p[1]).shuffled(seed: UInt64(seed)) { twice.insert(op) }
            for s in once.segments(for: world.gameID, after: VersionVector()) { twice.insert(s) }
            #expect(Outcome(once, world.gameID) == Outcome(twice, world.gameID), "seed \(seed)")
            #expect(twice.rejectionCounts.isEmpty, "seed \(seed)")
        }
    }

    @Test func sameOpsGiveTheSameDigestInAnyOrder() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...1_000_000), Gen.int(in: 0...1_000_000)) { seed, order in
            guard let world = try? OpWorld.make(seed: UInt64(seed), steps: 50) else { Issue.record("seed \(seed): no world"); return }
            var withDuplicates = world.allOps
            var rng = BoardRandom(seed: UInt64(order))
            for _ in 0..<rng.below(10) { withDuplicates.append(world.allOps[rng.below(world.allOps.count)]) }
            let a = replica(world.circle, inserting: world.allOps)
            let b = replica(world.circle, inserting: withDuplicates.shuffled(seed: UInt64(order)))
            #expect(Outcome(a, world.gameID) == Outcome(b, world.gameID), "seed \(seed) order \(order)")
            #expect(a.games[world.gameID]?.opCount == world.allOps.count, "seed \(seed)")
        }
    }
}

@Suite struct SimulatedNetwork {
    static let seedCount = 1_000
    static let chunks = 8

    /// Runs seeds `chunk`, `chunk + chunks`, …: 1,000 seeds in all (from
    /// `SWEEPER_SIM_FIRST_SEED`, 0 by default).
    @Test(arguments: 0..<chunks)
    func convergesDespiteLossPartitionsRestartsAndForgers(chunk: Int) throws {
        var totals = Simulation.Report()
        // SWEEPER_SIM_FIRST_SEED shifts the range, to try other seeds than 0..<1000.
        let first = ProcessInfo.processInfo.environment["SWEEPER_SIM_FIRST_SEED"].flatMap { Int($0) } ?? 0
        for seed in stride(from: first + chunk, to: first + Self.seedCount, by: Self.chunks) {
            var sim = Simulation(seed: UInt64(seed))
            let report = try sim.run()
            if !report.problems.isEmpty {
                Issue.record(
                    """
                    simulation seed \(seed) failed (replay: SWEEPER_SIM_SEED=\(seed) swift test --filter replaySeed):
                    \(report.problems.prefix(8).joined(separator: "\n"))
                    """)
            }
            totals.ops += report.ops
            totals.messages += report.messages
            totals.restarts += report.restarts
            totals.partitions += report.partitions
            totals.addedPlayerMoves += report.addedPlayerMoves
            totals.addedPlayerSealedMoves += report.addedPlayerSealedMoves
            totals.liveOps += report.liveOps
            totals.headSignatures += report.headSignatures
            totals.chainSegments += report.chainSegments
            totals.dailyGames += report.dailyGames
            totals.racesRun += report.racesRun
            totals.racersResigned += report.racersResigned
            totals.opsReadBack += report.opsReadBack
            totals.sleeps += report.sleeps
            totals.wakes += report.wakes
            totals.lostBeforeKept += report.lostBeforeKept
            totals.gaveWay += report.gaveWay
            totals.lostButTaken += report.lostButTaken
        }
        // The runs exercised what they claim to.
        #expect(totals.ops > Self.seedCount / Self.chunks * 5)
        #expect(totals.restarts > 0)
        #expect(totals.partitions > 0)
        // Replicas let go of older ops and read them back from their disks when asked for them.
        #expect(totals.opsReadBack > 0)
        // Games went to sleep on the way, and moves and messages woke them.
        #expect(totals.sleeps > 0 && totals.wakes > 0, "\(totals.sleeps) sleeps, \(totals.wakes) wakes")
        // Links of protocol 15 carried segments in their compact form.
        #expect(totals.chainSegments > 0)
        #expect(totals.addedPlayerMoves > totals.addedPlayerSealedMoves && totals.addedPlayerSealedMoves > 0)
        // Some games became boards of the day on the way, and converged all the same.
        #expect(totals.dailyGames > 0)
        // Races ran, each racer on its own board, some giving up, and converged all the same.
        #expect(totals.racesRun > 0 && totals.racersResigned > 0, "\(totals.racesRun) races, \(totals.racersResigned) resigned")
        // Moves went as live pushes, vouched for by head signatures sent apart.
        #expect(totals.liveOps > totals.ops / 4 && totals.headSignatures > 0, "\(totals.liveOps) live, \(totals.headSignatures) heads, \(totals.ops) ops")
        // Moves went to peers of protocol 18 before they were kept, some were
        // lost with their authors while peers held them, and those peers let
        // them go (every peer ends with the valid ops only, and none named an
        // equivocator: `check` says so).
        #expect(
            totals.lostBeforeKept > 0 && totals.lostButTaken > 0 && totals.gaveWay > 0,
            "\(totals.lostBeforeKept) lost before kept, \(totals.lostButTaken) held by peers, \(totals.gaveWay) gave way")
    }

    /// Replays one seed from the environment (`SWEEPER_SIM_SEED`) and prints its run.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["SWEEPER_SIM_SEED"] != nil, "set SWEEPER_SIM_SEED=N to replay seed N"))
    func replaySeed() throws {
        let text = ProcessInfo.processInfo.environment["SWEEPER_SIM_SEED"] ?? ""
        let seed = try #require(UInt64(text), "SWEEPER_SIM_SEED is not a number: \(text)")
        var sim = Simulation(seed: seed)
        let report = try sim.run()
        print(
            "seed \(seed): \(report.ops) ops, \(report.messages) messages, \(report.restarts) restarts, \(report.partitions) partitions, healed in \(report.healTicks) ticks, \(report.addedPlayerMoves) moves by an added player, \(sim.refusedBeforeTheirAdd) refused before their add arrived; forged \(sim.injected), rejected \(sim.rejected)"
        )
        for p in report.problems { print("  \(p)") }
        #expect(report.problems.isEmpty)
    }

    @Test func forgersAreCaughtOnEveryKind() throws {
        var injected: [OpRejection: Int] = [:]
        var violations = 0
        for seed in 0..<40 {
            var sim = Simulation(seed: UInt64(5_000 + seed))
            let report = try sim.run()
            #expect(report.problems.isEmpty, "seed \(5_000 + seed)")
            for (k, v) in sim.injected { injected[k, default: 0] += v }
            violations += sim.violationsForged
        }
        for kind in [OpRejection.badSignature, .notMember, .brokenChain, .cellOutOfRange, .malformed, .notPlayer, .dailyOfAnother] {
            #expect((injected[kind] ?? 0) > 0, "no \(kind) forgery was tried")
        }
        #expect(violations > 0, "no peer forged a head of its own chain")
    }
}
