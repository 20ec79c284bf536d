import Foundation
import SweeperTestSupport
import Testing

// Five real daemons in network namespaces, a player on each moving at random
// with the real `sweeper` CLI, while links go down and up, daemons are killed
// with SIGKILL and restarted, and one is stopped with SIGTERM. After healing,
// every host must hold the same game, and every move that a `sweeper` command
// saw answered must be on every host.
//
// Seeded: SWEEPER_CHAOS_SEED=N replays a run (the seed is printed, and named in
// every failure). Bounded: at most `rounds` rounds and `seconds` of moving.

/// What became of one host during the run.
private enum HostCondition: Equatable {
    case up
    /// Off the bridge until round `until`.
    case cut(until: Int)
    /// Daemon not running until round `until`.
    case down(until: Int)

    /// Whether its daemon runs (a cut-off host still serves its player).
    var isRunning: Bool {
        if case .down = self { return false }
        return true
    }
}

/// One move a `sweeper` command saw answered.
private struct AnsweredMove {
    var host: Int
    var x: Int
    var y: Int
    var flag: Bool
}

@Suite(.serialized, .enabled(if: labAvailable, Comment(rawValue: labUnavailableReason ?? "")))
struct ChaosTests {
    @Test func fiveHostsUnderChaosConvergeAndLoseNoAnsweredMove() throws {
        let seed =
            ProcessInfo.processInfo.environment["SWEEPER_CHAOS_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 1...999_999)
        print("chaos: seed \(seed) (replay with SWEEPER_CHAOS_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        let hosts = Array(1...5)
        let rounds = 240
        let seconds = 60.0

        let c = try Circle(hosts: 5, members: 5)
        defer { c.down() }
        guard c.waitConnected(hosts, seconds: 90) else {
            Issue.record("seed \(seed): the circle never formed")
            return
        }
        let view = try c[1].json(["new", "--width", "40", "--height", "40", "--mines", "250", "--seed", "\(seed)"])
        guard let game = view["game"] as? String else { throw ProcessError("new printed no id: \(view)") }
        guard c.waitConverged(game, hosts) != nil else {
            Issue.record("seed \(seed): the new game did not reach every host")
            return
        }
        // The test peeks at the mines so players only reveal safe cells and
        // flag mines: every answered move then has one lasting effect.
        let layout = try c[1].json(["show", game, "--peek"])["mineLayout"] as? [String] ?? []
        guard layout.count == 40 else { throw ProcessError("no mine layout: \(layout)") }

        // Each hidden cell belongs to one player, so no two moves contend.
        var todo: [Int: [(x: Int, y: Int)]] = [:]
        for p in hiddenCells(c[1].board(game)).shuffled(using: &random) {
            todo[hosts.randomElement(using: &random) ?? 1, default: []].append(p)
        }

        var condition: [Int: HostCondition] = Dictionary(uniqueKeysWithValues: hosts.map { ($0, .up) })
        var answered: [AnsweredMove] = []
        var refused = 0
        var kills = 0, terms = 0, cuts = 0
        var round = 0
        let start = Date()
        while round < rounds, Date().timeIntervalSince(start) < seconds {
            round += 1
            // Bring back what is due.
            for h in hosts {
                switch condition[h] {
                case .cut(let until) where until <= round:
                    try c.lab.heal(h)
                    condition[h] = .up
                case .down(let until) where until <= round:
                    try c[h].start()
                    condition[h] = .up
                default: break
                }
            }
            // Now and then, something goes wrong on one host; at most two at once.
            let troubled = hosts.filter { condition[$0] != .up }.count
            if troubled < 2, Int.random(in: 0..<8, using: &random) == 0, let h = hosts.randomElement(using: &random),
                condition[h] == .up
            {
                let back = round + Int.random(in: 3...15, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0:
                    try c.lab.cut(h)
                    condition[h] = .cut(until: back)
                    cuts += 1
                case 1:
                    c[h].stop(signal: SIGKILL)
                    condition[h] = .down(until: back)
                    kills += 1
                default:
                    // One clean stop per run is enough; otherwise kill.
                    c[h].stop(signal: terms == 0 ? SIGTERM : SIGKILL)
                    condition[h] = .down(until: back)
                    if terms == 0 { terms += 1 } else { kills += 1 }
                }
            }
            // Every player whose daemon runs makes a move, all at once.
            var started: [(move: AnsweredMove, process: StartedProcess)] = []
            for h in hosts where condition[h]?.isRunning == true {
                guard let p = todo[h]?.popLast() else { continue }
                let isMine = cell(layout, p.x, p.y) == "*"
                let arguments = isMine ? ["flag", game, "\(p.x)", "\(p.y)", "--mark", "flag"] : ["reveal", game, "\(p.x)", "\(p.y)"]
                let move = AnsweredMove(host: h, x: p.x, y: p.y, flag: isMine)
                started.append((move, try StartedProcess(c[h].argv(arguments), environment: c[h].environment)))
            }
            for (move, process) in started {
                if process.wait(seconds: 30).status == 0 { answered.append(move) } else { refused += 1 }
            }
        }

        // Heal everything and start whatever is stopped, then wait for one digest.
        for h in hosts {
            switch condition[h] {
            case .cut: try c.lab.heal(h)
            case .down: try c[h].start()
            default: break
            }
        }
        let healed = Date()
        let summary =
            "seed \(seed): \(round) rounds, \(answered.count) moves answered, \(refused) not answered, \(kills) SIGKILLs, \(terms) SIGTERMs, \(cuts) cuts"
        guard c.waitConverged(game, hosts, seconds: 90) != nil else {
            Issue.record("\(summary): no common digest 90 s after healing")
            return
        }
        let convergedAfter = Date().timeIntervalSince(healed)

        // Every answered move, on every host.
        var found = 0
        var missing: [String] = []
        let boards = hosts.map { c[$0].board(game) }
        for move in answered {
            let onAll = boards.enumerated().allSatisfy { i, board in
                let look = cell(board, move.x, move.y)
                let present = move.flag ? look == "F" : (look.map { ".12345678".contains($0) } ?? false)
                if !present && missing.count < 10 {
                    missing.append(
                        "h\(i + 1) shows \(look.map(String.init) ?? "nothing") at \(move.x),\(move.y) (\(move.flag ? "flagged" : "revealed") on h\(move.host))")
                }
                return present
            }
            if onAll { found += 1 }
        }
        let statuses = hosts.map { c[$0].show(game)?["status"] as? String ?? "?" }
        print(
            "chaos: \(summary); one digest \(String(format: "%.1f", convergedAfter)) s after healing; \(found) of \(answered.count) answered moves found on all 5 hosts"
        )
        #expect(found == answered.count, "\(summary): \(answered.count - found) answered moves missing: \(missing)")
        #expect(answered.count >= 100, "\(summary): too few moves to mean anything")
        #expect(kills + terms + cuts >= 3, "\(summary): too little chaos to mean anything")
        #expect(statuses.allSatisfy { $0 == "playing" }, "\(summary): statuses \(statuses)")
    }
}
