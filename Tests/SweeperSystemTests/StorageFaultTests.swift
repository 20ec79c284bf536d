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

// MARK: - Tools

/// The full path of a system tool (posix_spawn does not search `$PATH`).
private func tool(_ name: String) -> String? {
    for dir in ["/usr/sbin", "/usr/bin", "/sbin", "/bin"] where FileManager.default.isExecutableFile(atPath: "\(dir)/\(name)") {
        return "\(dir)/\(name)"
    }
    return nil
}

/// Runs a system tool; throws with its output when it fails.
@discardableResult
private func sh(_ name: String, _ arguments: [String], allowFailure: Bool = false) throws -> Outcome {
    guard let path = tool(name) else { throw ProcessError("no \(name) on this machine") }
    let o = try runProcess([path] + arguments, environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"])
    if o.status != 0 && !allowFailure {
        throw ProcessError("\(name) \(arguments.joined(separator: " ")) exited \(o.status): \(o.stderr)\(o.stdout)")
    }
    return o
}

/// What the machine allows, probed once: tmpfs mounts (full disk) and
/// loop-mounted ext4 with a way to force it read-only (read-only file system).
private enum Capabilities {
    static let tmpfs: Bool = {
        guard getuid() == 0, tool("mount") != nil, tool("umount") != nil else { return false }
        let dir = NSTemporaryDirectory() + "sweeper-probe-\(UUID().uuidString.prefix(8))"
        guard (try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)) != nil else { return false }
        defer { rmdir(dir) }
        guard (try? sh("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", dir]))?.status == 0 else { return false }
        _ = try? sh("umount", [dir], allowFailure: true)
        return true
    }()

    static let loopExt4: Bool = {
        tmpfs && tool("losetup") != nil && tool("mkfs.ext4") != nil
            && FileManager.default.fileExists(atPath: "/dev/loop-control")
            && FileManager.default.fileExists(atPath: "/sys/fs/ext4")
    }()
}


// MARK: - The rig: a daemon by pid, mounts, cleanup

/// A `sweeperd` started with posix_spawn on the harness's state directory,
/// plus the mounts and loop devices a test made. `cleanup()` stops the
/// daemon by pid, then unmounts and detaches, then removes the directory.
private final class FaultRig {
    let harness: DaemonHarness
    private(set) var pid: pid_t = 0
    private var mounts: [String] = []
    private var loops: [String] = []
    let logPath: String

    var state: String { harness.stateDirectory }
    var socket: String { harness.socketPath }
    var database: String { state + "/" + Store.fileName }

    init() throws {
        harness = try DaemonHarness()
        logPath = harness.root + "/sweeperd-faults.log"
        try FileManager.default.createDirectory(atPath: harness.stateDirectory, withIntermediateDirectories: true)
    }

    /// The daemon's command line.
    var arguments: [String] { [TestDaemons.sweeperd] + harness.arguments(logLevel: "info") }

    /// Starts the daemon and waits (at most `seconds`) until it answers `status`.
    func start(seconds: Double = 60) throws {
        guard pid == 0 else { throw ProcessError("the daemon is running already") }
        pid = try TestDaemons.launch(
            harness.arguments(logLevel: "info"), environment: harness.environment(), log: logPath, seconds: seconds,
            ready: { [socket] in TestDaemons.answers(socket) })
    }

    /// Sends `signal`, waits for the exit (SIGKILL after `grace` seconds); returns the status.
    @discardableResult
    func stop(signal: Int32 = SIGTERM, grace: Double = 30) -> Int32? {
        guard pid > 0 else { return nil }
        defer { pid = 0 }
        return stopProcess(pid, signal: signal, graceSeconds: grace)
    }

    /// Whether the daemon is still running.
    var isRunning: Bool {
        guard pid > 0 else { return false }
        if hasExited(pid) {
            pid = 0
            return false
        }
        return true
    }

    func log() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Mounts a tmpfs of `size` over the (empty) state directory.
    func mountTmpfs(size: String) throws {
        try sh("mount", ["-t", "tmpfs", "-o", "size=\(size),mode=0700", "tmpfs", state])
        mounts.append(state)
    }

    /// Makes an ext4 image of `megabytes`, attaches it to a loop device and
    /// mounts it over the state directory with `errors=remount-ro`. Returns the device.
    @discardableResult
    func mountExt4(megabytes: Int, readOnly: Bool = false, image existing: String? = nil) throws -> String {
        let image = existing ?? harness.root + "/ext4.img"
        if existing == nil {
            try sh("truncate", ["-s", "\(megabytes)M", image])
            try sh("mkfs.ext4", ["-q", "-F", "-m", "0", image])
        }
        let device = try sh("losetup", ["-f", "--show", image]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        loops.append(device)
        try sh("mount", ["-o", (readOnly ? "ro," : "") + "errors=remount-ro", device, state])
        mounts.append(state)
        return device
    }

    /// Unmounts what was mounted and detaches loop devices (latest first).
    func unmountAll() {
        for point in mounts.reversed() where (try? sh("umount", [point], allowFailure: true))?.status != 0 {
            _ = try? sh("umount", ["-l", point], allowFailure: true)
        }
        mounts.removeAll()
        for device in loops.reversed() { _ = try? sh("losetup", ["-d", device], allowFailure: true) }
        loops.removeAll()
    }

    func cleanup() {
        stop(signal: SIGKILL, grace: 10)
        unmountAll()
        harness.cleanup()
    }

    // MARK: Requests

    /// One request on a fresh connection; records an issue and returns [:] on failure.
    @discardableResult
    func ask(_ object: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) -> [String: Any] {
        guard let client = try? ControlLineClient(path: socket), let answer = client.request(object) else {
            Issue.record("no answer to \(object); log:\n\(log().suffix(2000))", sourceLocation: sourceLocation)
            return [:]
        }
        return answer
    }

    /// A successful answer's result; records an issue otherwise.
    func result(_ object: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) -> [String: Any] {
        let answer = ask(object, sourceLocation: sourceLocation)
        guard answer["ok"] as? Bool == true, let result = answer["result"] as? [String: Any] else {
            Issue.record("\(object["command"] ?? "?") failed: \(answer)", sourceLocation: sourceLocation)
            return [:]
        }
        return result
    }

    /// Makes a game and returns its id and mine layout (`show --cheat`).
    func newGame(width: Int, height: Int, mines: Int, seed: UInt64) throws -> (id: String, mines: [[Bool]]) {
        let made = result(["id": 1, "command": "new", "width": width, "height": height, "mines": mines, "seed": seed])
        let id = try #require(made["id"] as? String)
        let shown = result(["id": 2, "command": "show", "game": id, "cheat": true])
        let layout = try #require(shown["mineLayout"] as? [String])
        return (id, layout.map { $0.map { $0 == "*" } })
    }

    /// The board rows of a game as the daemon shows them.
    func board(_ game: String, sourceLocation: SourceLocation = #_sourceLocation) -> [[Character]] {
        ((result(["id": 3, "command": "show", "game": game], sourceLocation: sourceLocation)["board"] as? [String]) ?? []).map(Array.init)
    }
}

/// What the clients of one kill round saw, shared between their threads.
private final class Tally: Sendable {
    private struct Seen {
        var moves: [AnsweredMove] = []
        var errors: [String] = []
    }
    private let seen = Mutex(Seen())

    func answered(_ move: AnsweredMove) { seen.withLock { $0.moves.append(move) } }
    func unexpected(_ error: String) { seen.withLock { $0.errors.append(error) } }
    var count: Int { seen.withLock { $0.moves.count } }
    var moves: [AnsweredMove] { seen.withLock { $0.moves } }
    var errors: [String] { seen.withLock { $0.errors } }
}

/// A move that got a success answer, with the cells it changed.
private struct AnsweredMove: Sendable {
    var game: String
    var x: Int
    var y: Int
    var changed: [(x: Int, y: Int, value: Character)]
}

/// The request for the safe move on a cell: reveal a safe one, flag a mine.
private func moveRequest(game: String, x: Int, y: Int, mine: Bool, id: Int) -> [String: Any] {
    mine
        ? ["id": id, "command": "flag", "game": game, "x": x, "y": y, "mark": "flag"]
        : ["id": id, "command": "reveal", "game": game, "x": x, "y": y]
}

private func answered(_ answer: [String: Any], game: String, x: Int, y: Int) -> AnsweredMove? {
    guard answer["ok"] as? Bool == true, let result = answer["result"] as? [String: Any] else { return nil }
    let changed = (result["changed"] as? [[String: Any]] ?? []).compactMap { c -> (x: Int, y: Int, value: Character)? in
        guard let cx = c["x"] as? Int, let cy = c["y"] as? Int, let v = (c["value"] as? String)?.first else { return nil }
        return (cx, cy, v)
    }
    return AnsweredMove(game: game, x: x, y: y, changed: changed)
}

/// Moves whose changed cells do not show as answered on `boards`; returns (checked cells, missing descriptions).
private func missing(_ moves: [AnsweredMove], boards: [String: [[Character]]]) -> (cells: Int, missing: [String]) {
    var cells = 0
    var lost: [String] = []
    for m in moves {
        for c in m.changed {
            cells += 1
            let rows = boards[m.game] ?? []
            let now: Character? = c.y < rows.count && c.x < rows[c.y].count ? rows[c.y][c.x] : nil
            if now != c.value {
                lost.append("\(m.game.prefix(8)) move \(m.x),\(m.y): cell \(c.x),\(c.y) answered '\(c.value)', now '\(now.map(String.init) ?? "none")'")
            }
        }
    }
    return (cells, lost)
}

// MARK: - The tests

@Suite(.serialized) struct StorageFaultTests {
    /// Four clients (two per game, on alternate cells) reveal safe cells and
    /// flag mines as fast as the daemon answers; the daemon is SIGKILLed at a
    /// seeded random moment. Then: SQLite's integrity check passes on the files
    /// as the kill left them, and after a restart every answered move's cells
    /// look as answered. Several rounds on the same state directory.
    @Test(.timeLimit(.minutes(5))) func sigkillDuringHeavyWritesKeepsEveryAnsweredMove() throws {
        let seed = ProcessInfo.processInfo.environment["SWEEPER_FAULT_SEED"].flatMap { UInt64($0) }
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
        var allAnswered: [AnsweredMove] = []
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
            print("StorageFaultTests.sigkill round \(round): killed after \(moves.count) answered moves (\(killAfterMoves)+\(Int(killDelay * 1000)) ms); all rounds: \(allAnswered.count) answered, \(cells - lost.count) of \(cells) answered cells found")
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
        var answeredMoves: [AnsweredMove] = []
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
        var answeredMoves: [AnsweredMove] = []
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

/// Runs a program that should exit by itself (at most 60 s, then SIGKILL).
private enum StartedProcessOutcome {
    static func run(_ argv: [String], environment: [String: String]) -> Outcome {
        do {
            return try StartedProcess(argv, environment: environment).wait(seconds: 60)
        } catch {
            return Outcome(status: -1, stdout: "", stderr: "\(error)")
        }
    }
}
