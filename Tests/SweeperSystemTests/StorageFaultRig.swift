import Foundation
import SweeperStore
import SweeperTestSupport
import Synchronization
import Testing

// The storage-fault tests' tools: the system commands they need, a daemon
// by pid with the mounts and loop devices a test made, and the bookkeeping of
// answered moves.

// MARK: - Tools

/// The full path of a system tool (posix_spawn does not search `$PATH`).
func tool(_ name: String) -> String? {
    for dir in ["/usr/sbin", "/usr/bin", "/sbin", "/bin"] where FileManager.default.isExecutableFile(atPath: "\(dir)/\(name)") {
        return "\(dir)/\(name)"
    }
    return nil
}

/// Runs a system tool; throws with its output when it fails.
@discardableResult
func sh(_ name: String, _ arguments: [String], allowFailure: Bool = false) throws -> Outcome {
    guard let path = tool(name) else { throw ProcessError("no \(name) on this machine") }
    let o = try runProcess([path] + arguments, environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"])
    if o.status != 0 && !allowFailure {
        throw ProcessError("\(name) \(arguments.joined(separator: " ")) exited \(o.status): \(o.stderr)\(o.stdout)")
    }
    return o
}

/// What the machine allows, probed once: tmpfs mounts (full disk) and
/// loop-mounted ext4 with a way to force it read-only (read-only file system).
enum Capabilities {
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
final class FaultRig {
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

    /// Makes a game and returns its id and mine layout (`show --peek`).
    func newGame(width: Int, height: Int, mines: Int, seed: UInt64) throws -> (id: String, mines: [[Bool]]) {
        let made = result(["id": 1, "command": "new", "width": width, "height": height, "mines": mines, "seed": seed])
        let id = try #require(made["game"] as? String)
        let shown = result(["id": 2, "command": "show", "game": id, "peek": true])
        let layout = try #require(shown["mineLayout"] as? [String])
        return (id, layout.map { $0.map { $0 == "*" } })
    }

    /// The board rows of a game as the daemon shows them.
    func board(_ game: String, sourceLocation: SourceLocation = #_sourceLocation) -> [[Character]] {
        ((result(["id": 3, "command": "show", "game": game], sourceLocation: sourceLocation)["board"] as? [String]) ?? []).map(Array.init)
    }
}

/// What the clients of one kill round saw, shared between their threads.
final class Tally: Sendable {
    private struct Seen {
        var moves: [CommittedMove] = []
        var errors: [String] = []
    }
    private let seen = Mutex(Seen())

    func answered(_ move: CommittedMove) { seen.withLock { $0.moves.append(move) } }
    func unexpected(_ error: String) { seen.withLock { $0.errors.append(error) } }
    var count: Int { seen.withLock { $0.moves.count } }
    var moves: [CommittedMove] { seen.withLock { $0.moves } }
    var errors: [String] { seen.withLock { $0.errors } }
}

/// A move that got a success answer, with the cells it changed.
struct CommittedMove: Sendable {
    var game: String
    var x: Int
    var y: Int
    var changed: [(x: Int, y: Int, value: Character)]
}

/// The request for the safe move on a cell: reveal a safe one, flag a mine.
func moveRequest(game: String, x: Int, y: Int, mine: Bool, id: Int) -> [String: Any] {
    mine
        ? ["id": id, "command": "flag", "game": game, "x": x, "y": y, "mark": "flag"]
        : ["id": id, "command": "reveal", "game": game, "x": x, "y": y]
}

func answered(_ answer: [String: Any], game: String, x: Int, y: Int) -> CommittedMove? {
    guard answer["ok"] as? Bool == true, let result = answer["result"] as? [String: Any] else { return nil }
    let changed = (result["changed"] as? [[String: Any]] ?? []).compactMap { c -> (x: Int, y: Int, value: Character)? in
        guard let cx = c["x"] as? Int, let cy = c["y"] as? Int, let v = (c["value"] as? String)?.first else { return nil }
        return (cx, cy, v)
    }
    return CommittedMove(game: game, x: x, y: y, changed: changed)
}

/// Moves whose changed cells do not show as answered on `boards`; returns (checked cells, missing descriptions).
func missing(_ moves: [CommittedMove], boards: [String: [[Character]]]) -> (cells: Int, missing: [String]) {
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

/// Runs a program that should exit by itself (at most 60 s, then SIGKILL).
enum StartedProcessOutcome {
    static func run(_ argv: [String], environment: [String: String]) -> Outcome {
        do {
            return try StartedProcess(argv, environment: environment).wait(seconds: 60)
        } catch {
            return Outcome(status: -1, stdout: "", stderr: "\(error)")
        }
    }
}
