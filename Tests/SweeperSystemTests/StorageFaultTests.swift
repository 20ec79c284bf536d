import Foundation
import SweeperStore
import SweeperTestSupport
import Synchronization
import Testing

// Storage faults against a real `sweeperd`: SIGKILL in the middle
// of heavy writes, a full disk, a file system gone read-only, a damaged
// database. Mounts need root; each test that needs them checks first and
// is skipped with its reason otherwise. Every mount, loop device and process
// made here is undone in `FaultRig.cleanup()`, failure or not.

// MARK: - The tests

@Suite(.serialized) struct StorageFaultTests {
    /// Four clients (two per game, on alternate cells) reveal safe cells and
    /// flag mines as fast as the daemon answers; the daemon is SIGKILLed at a
    /// seeded random moment. Then: SQLite's integrity check passes on the files
    /// as the kill left them, and after a restart every answered move's cells
    /// look as answered. Several rounds on the same state directory.
    @Test(.timeLimit(.minutes(5))) func sigkillDuringHeavyWritesKeepsEveryAnsweredMove() throws {
        let seed =
            ProcessInfo.processInfo.environment["SWEEPER_FAULT_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 1...UInt64.max)
        print("StorageFaultTests.sigkill: SWEEPER_FAULT_SEED=\(seed)")
        var random = SplitMix64(seed: seed)
        let rig = try FaultRig()
        defer { rig.cleanup() }
        try rig.start()
        let games = try (0..<2).map { _ in
            try rig.newGame(width: 40, height: 40, mines: 480, seed: random.next() & 0xFFFF_FFFF)
        }
        let started = Date()
        var allAnswered: [CommittedMove] = []
        var rounds = 0
        for round in 0..<4 {
            // Bounded in time as well as count: later rounds only if there is time.
            if round > 0 && Date().timeIntervalSince(started) > 120 { break }
            rounds += 1
            let boards = games.map { rig.board($0.id) }
            // Each client's cells: still covered, in a seeded random order.
            var work: [[(game: String, x: Int, y: Int, mine: Bool)]] = []
            for (g, game) in games.enumerated() {
                for half in 0..<2 {
                    var cells: [(game: String, x: Int, y: Int, mine: Bool)] = []
                    for y in 0..<40 {
                        for x in 0..<40 where (x + y) % 2 == half && boards[g].count == 40 && boards[g][y][x] == "#" {
                            cells.append((game.id, x, y, game.mines[y][x]))
                        }
                    }
                    cells.shuffle(using: &random)
                    work.append(cells)
                }
            }
            let killAfterMoves = 30 + Int(random.next() % 150)
            // Up to 0.1 s more: the clients answer a move every millisecond or so, so the kill comes mid-work.
            let killDelay = Double(random.next() % 100) / 1000
            let tally = Tally()
            let socket = rig.socket
            let group = DispatchGroup()
            for cells in work {
                DispatchQueue.global().async(group: group) {
                    guard let client = try? ControlLineClient(path: socket) else { return }
                    for (i, c) in cells.enumerated() {
                        guard let answer = client.request(moveRequest(game: c.game, x: c.x, y: c.y, mine: c.mine, id: i)) else { return }
                        if let move = answered(answer, game: c.game, x: c.x, y: c.y) {
                            tally.answered(move)
                        } else if let error = answer["error"] as? [String: Any], error["code"] as? String != "game-over" {
                            tally.unexpected("\(error)")
                        }
                    }
                }
            }
            // The kill: once enough moves are answered, after a random delay (bounded wait).
            let waitDeadline = Date().addingTimeInterval(60)
            while tally.count < killAfterMoves && Date() < waitDeadline && rig.isRunning { usleep(2_000) }
            usleep(UInt32(killDelay * 1_000_000))
            let beforeKill = tally.count
            let status = rig.stop(signal: SIGKILL)
            #expect(status == 128 + SIGKILL, "round \(round): the daemon was not killed by the signal (status \(status.map(String.init) ?? "none"))")
            #expect(group.wait(timeout: .now() + 60) == .success, "clients did not finish after the kill")
            let moves = tally.moves
            #expect(tally.errors.isEmpty, "round \(round): \(tally.errors.prefix(5))")
            #expect(moves.count >= killAfterMoves, "round \(round): only \(moves.count) moves before the kill")
            #expect(beforeKill < work.reduce(0) { $0 + $1.count }, "round \(round): the kill came after all moves were done")

            // The files exactly as the kill left them.
            let check = try Store.integrityCheck(path: rig.database)
            #expect(check == ["ok"], "round \(round): \(check.prefix(5))")

            try rig.start()
            allAnswered += moves
            let after = Dictionary(uniqueKeysWithValues: games.map { ($0.id, rig.board($0.id)) })
            let (cells, lost) = missing(allAnswered, boards: after)
            print(
                "StorageFaultTests.sigkill round \(round): killed after \(moves.count) answered moves (\(killAfterMoves)+\(Int(killDelay * 1000)) ms); all rounds: \(allAnswered.count) answered, \(cells - lost.count) of \(cells) answered cells found"
            )
            #expect(lost.isEmpty, "round \(round), seed \(seed): \(lost.count) answered cells lost: \(lost.prefix(10))")
        }
        #expect(rounds >= 2)
        // A last graceful stop leaves a healthy file too.
        #expect(rig.stop() == 0)
        #expect(try Store.integrityCheck(path: rig.database) == ["ok"])
    }

    /// The state directory on a small tmpfs, filled up: moves fail with a
    /// `storage-full` answer and change nothing, the daemon keeps answering
    /// reads; once space returns moves succeed again without a restart, and
    /// after a restart every answered move is there.
    @Test(.enabled(if: Capabilities.tmpfs, "needs root and tmpfs mounts"), .timeLimit(.minutes(3)))
    func aFullDiskFailsMovesClearlyAndRecoversWhenSpaceReturns() throws {
        let rig = try FaultRig()
        defer { rig.cleanup() }
        try rig.mountTmpfs(size: "6m")
        try rig.start()
        let game = try rig.newGame(width: 30, height: 16, mines: 99, seed: 11)
        var cells: [(x: Int, y: Int, mine: Bool)] = []
        let board0 = rig.board(game.id)
        for y in 0..<16 { for x in 0..<30 where board0.count == 16 && board0[y][x] == "#" { cells.append((x, y, game.mines[y][x])) } }
        var next = 0
        var answeredMoves: [CommittedMove] = []
        func play(_ c: (x: Int, y: Int, mine: Bool)) -> [String: Any] {
            rig.ask(moveRequest(game: game.id, x: c.x, y: c.y, mine: c.mine, id: next))
        }
        for _ in 0..<10 {
            let c = cells[next]
            next += 1
            let answer = play(c)
            if let m = answered(answer, game: game.id, x: c.x, y: c.y) { answeredMoves.append(m) } else { Issue.record("\(answer)") }
        }

        // Fill the file system: big blocks, then page by page.
        let filler = rig.state + "/filler"
        try sh("dd", ["if=/dev/zero", "of=\(filler)-1", "bs=1M", "count=64"], allowFailure: true)
        try sh("dd", ["if=/dev/zero", "of=\(filler)-2", "bs=4k", "count=4096"], allowFailure: true)
        var fs = statvfs()
        statvfs(rig.state, &fs)
        #expect(fs.f_bavail == 0, "the tmpfs is not full: \(fs.f_bavail) blocks free")

        // Moves now: every answer is a success (a WAL page can still have room) or a clear storage-full error.
        var failures = 0
        var failed: [(x: Int, y: Int, mine: Bool)] = []
        for _ in 0..<200 where failures < 5 && next < cells.count {
            let c = cells[next]
            next += 1
            let before = rig.board(game.id)
            let answer = play(c)
            if let m = answered(answer, game: game.id, x: c.x, y: c.y) {
                answeredMoves.append(m)
                continue
            }
            failures += 1
            failed.append(c)
            let error = answer["error"] as? [String: Any] ?? [:]
            #expect(error["code"] as? String == "storage-full", "\(answer)")
            let message = error["message"] as? String ?? ""
            if failures == 1 { print("StorageFaultTests.fullDisk answer: \(error)") }
            #expect(message.hasPrefix("storage full:") && message.contains(rig.database) && message.contains("nothing was saved"), "\(message)")
            // The failed move did not happen, in memory either.
            #expect(rig.board(game.id) == before, "a failed move changed the board")
            #expect(rig.isRunning, "the daemon died on a full disk; log:\n\(rig.log().suffix(2000))")
        }
        #expect(failures > 0, "no move failed on a full disk")
        print("StorageFaultTests.fullDisk: \(failures) moves refused while full, \(answeredMoves.count) answered")
        // Reads keep working.
        #expect(rig.ask(["id": 9, "command": "games"])["ok"] as? Bool == true)
        #expect(rig.ask(["id": 9, "command": "status"])["ok"] as? Bool == true)
        #expect(rig.log().contains("storage full"), "the log does not say why")

        // Space returns: the same moves succeed, no restart.
        try FileManager.default.removeItem(atPath: filler + "-1")
        try FileManager.default.removeItem(atPath: filler + "-2")
        for c in failed + cells[next..<min(cells.count, next + 10)] {
            let answer = play(c)
            if let m = answered(answer, game: game.id, x: c.x, y: c.y) { answeredMoves.append(m) } else { Issue.record("after space returned: \(answer)") }
        }
        let inMemory = rig.board(game.id)
        let (_, lostBefore) = missing(answeredMoves, boards: [game.id: inMemory])
        #expect(lostBefore.isEmpty, "\(lostBefore.prefix(5))")

        // Memory matched disk: a restart shows the same board and every answered move.
        #expect(rig.stop() == 0)
        #expect(try Store.integrityCheck(path: rig.database) == ["ok"])
        try rig.start()
        #expect(rig.board(game.id) == inMemory)
        let (cells2, lost) = missing(answeredMoves, boards: [game.id: rig.board(game.id)])
        #expect(lost.isEmpty && cells2 > 0, "\(lost.prefix(5))")
    }

    /// The file system under a running daemon goes read-only (ext4 after an
    /// error, remounted read-only by the kernel): moves fail with a
    /// `storage-read-only` answer, reads go on, nothing answered is lost. The
    /// kernel keeps such a file system read-only until it is unmounted, so
    /// recovery is a restart: on the file system mounted read-only the daemon
    /// refuses to start with a clear message; mounted read-write again it
    /// starts with every answered move.
    @Test(.enabled(if: Capabilities.loopExt4, "needs root, loop devices and ext4"), .timeLimit(.minutes(3)))
    func aReadOnlyFileSystemFailsMovesClearlyAndKeepsReads() throws {
        let rig = try FaultRig()
        defer { rig.cleanup() }
        let device = try rig.mountExt4(megabytes: 32)
        try rig.start()
        let game = try rig.newGame(width: 30, height: 16, mines: 99, seed: 12)
        var cells: [(x: Int, y: Int, mine: Bool)] = []
        let board0 = rig.board(game.id)
        for y in 0..<16 { for x in 0..<30 where board0.count == 16 && board0[y][x] == "#" { cells.append((x, y, game.mines[y][x])) } }
        var answeredMoves: [CommittedMove] = []
        for (i, c) in cells.prefix(10).enumerated() {
            let answer = rig.ask(moveRequest(game: game.id, x: c.x, y: c.y, mine: c.mine, id: i))
            if let m = answered(answer, game: game.id, x: c.x, y: c.y) { answeredMoves.append(m) } else { Issue.record("\(answer)") }
        }

        // The kernel turns the file system read-only, as after a disk error.
        let name = (device as NSString).lastPathComponent
        try "1".write(toFile: "/sys/fs/ext4/\(name)/trigger_fs_error", atomically: false, encoding: .utf8)
        for (i, c) in cells.dropFirst(10).prefix(5).enumerated() {
            let before = rig.board(game.id)
            let answer = rig.ask(moveRequest(game: game.id, x: c.x, y: c.y, mine: c.mine, id: 100 + i))
            let error = answer["error"] as? [String: Any] ?? [:]
            #expect(answer["ok"] as? Bool == false && error["code"] as? String == "storage-read-only", "\(answer)")
            let message = error["message"] as? String ?? ""
            if i == 0 { print("StorageFaultTests.readOnly answer: \(error)") }
            #expect(message.hasPrefix("storage read-only:") && message.contains(rig.database), "\(message)")
            #expect(rig.board(game.id) == before, "a failed move changed the board")
        }
        #expect(rig.isRunning, "the daemon died; log:\n\(rig.log().suffix(2000))")
        #expect(rig.ask(["id": 9, "command": "games"])["ok"] as? Bool == true)
        let (_, lostInMemory) = missing(answeredMoves, boards: [game.id: rig.board(game.id)])
        #expect(lostInMemory.isEmpty, "\(lostInMemory.prefix(5))")

        // A graceful stop on a read-only file system still exits.
        #expect(rig.stop() != nil)
        rig.unmountAll()

        // Mounted read-only: refused at start, with the reason.
        try rig.mountExt4(megabytes: 32, readOnly: true, image: rig.harness.root + "/ext4.img")
        let refused = StartedProcessOutcome.run(rig.arguments, environment: rig.harness.environment())
        print("StorageFaultTests.readOnly start: \(refused.stderr.split(separator: "\n").last ?? "")")
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("the state directory \(rig.state) is on a read-only file system"), "\(refused.stderr)")
        rig.unmountAll()

        // Read-write again: everything answered is there, and moves work.
        try rig.mountExt4(megabytes: 32, image: rig.harness.root + "/ext4.img")
        #expect(try Store.integrityCheck(path: rig.database) == ["ok"])
        try rig.start()
        let (cells2, lost) = missing(answeredMoves, boards: [game.id: rig.board(game.id)])
        #expect(lost.isEmpty && cells2 > 0, "\(lost.prefix(5))")
        let c = cells[10]
        #expect(rig.ask(moveRequest(game: game.id, x: c.x, y: c.y, mine: c.mine, id: 200))["ok"] as? Bool == true)
    }

    /// Pages in the middle of the database, or its header, overwritten while
    /// the daemon is stopped: the daemon refuses to start, naming the file and
    /// saying it was left alone, and the file is byte-for-byte as it was.
    @Test(.timeLimit(.minutes(3)), arguments: ["pages", "header"])
    func aDamagedDatabaseIsRefusedAndLeftByteIdentical(_ damage: String) throws {
        let rig = try FaultRig()
        defer { rig.cleanup() }
        try rig.start()
        let game = try rig.newGame(width: 30, height: 16, mines: 99, seed: 13)
        var i = 0
        outer: for y in 0..<16 {
            for x in 0..<30 where game.mines[y][x] {
                rig.ask(moveRequest(game: game.id, x: x, y: y, mine: true, id: i))
                i += 1
                if i == 60 { break outer }
            }
        }
        #expect(rig.stop() == 0)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: rig.database))
        let pageSize = 4096
        // A clean stop checkpoints the WAL: the file holds the game by itself.
        try #require(bytes.count >= pageSize * 6, "a small database: \(bytes.count) bytes")
        switch damage {
        case "pages":
            // Every page from the third to the middle: b-tree pages of the ops and games tables.
            for i in (pageSize * 2)..<max(pageSize * 3, bytes.count / 2) { bytes[i] = UInt8(truncatingIfNeeded: (i &* 2_654_435_761) >> 7) }
        default:
            for i in 0..<100 { bytes[i] = UInt8(truncatingIfNeeded: i &* 37 &+ 1) }
        }
        try bytes.write(to: URL(fileURLWithPath: rig.database))
        let others = try FileManager.default.contentsOfDirectory(atPath: rig.state).sorted()

        let o = StartedProcessOutcome.run(rig.arguments, environment: rig.harness.environment())
        print("StorageFaultTests.damaged(\(damage)) start: \(o.stderr.split(separator: "\n").last ?? "")")
        #expect(o.status == 1, "\(o)")
        #expect(o.stderr.contains(rig.database) && o.stderr.contains("damaged") && o.stderr.contains("left untouched"), "\(o.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: rig.database)) == bytes, "the damaged file was changed")
        let afterwards = try FileManager.default.contentsOfDirectory(atPath: rig.state).sorted()
        #expect(Set(others).isSubset(of: Set(afterwards)), "files went missing: \(others) → \(afterwards)")
        #expect(!FileManager.default.fileExists(atPath: rig.socket), "a refused daemon left its socket")
    }
}
