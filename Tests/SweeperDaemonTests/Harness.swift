import Foundation
import Testing
import SweeperTestSupport

enum HarnessError: Error, CustomStringConvertible {
    case missingBinary(String)
    case notReady(String)
    case socket(String)
    var description: String {
        switch self {
        case .missingBinary(let p): "no binary at \(p); run `swift build --scratch-path … --product sweeperd --product sweeper` first"
        case .notReady(let s): "the daemon did not become ready: \(s)"
        case .socket(let s): "socket: \(s)"
        }
    }
}

/// A datagram socket standing in for systemd's `$NOTIFY_SOCKET`.
final class NotifyListener {
    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError.socket("socket: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else { throw HarnessError.socket("bind \(path): \(errno)") }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// The next datagram, or nil after 30 s without one.
    func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buffer, buffer.count, 0)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n], as: UTF8.self)
    }

    /// Waits (at most 10 datagrams, each within 30 s) for one containing `line`.
    func waitFor(_ line: String) -> [String] {
        var seen: [String] = []
        for _ in 0..<10 {
            guard let d = receive() else { break }
            seen.append(d)
            if d.split(separator: "\n").contains(Substring(line)) { break }
        }
        return seen
    }

    deinit {
        close(fd)
        unlink(path)
    }
}

/// A `sweeperd` on a temporary state directory and socket, driven by the
/// real binaries. Every process it starts is stopped by pid in `cleanup()`.
final class DaemonHarness {
    let root: String
    let stateDirectory: String
    let socketPath: String
    private(set) var daemon: Process?
    private(set) var notify: NotifyListener?
    private(set) var lastNotifications: [String] = []
    private var logPath: String { root + "/sweeperd.log" }

    static var sweeperd: String { productsDirectory + "/sweeperd" }
    static var sweeper: String { productsDirectory + "/sweeper" }

    init() throws {
        root = "/tmp/swd-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        stateDirectory = root + "/state"
        socketPath = root + "/run/control.sock"
        for binary in [Self.sweeperd, Self.sweeper] where !FileManager.default.isExecutableFile(atPath: binary) {
            throw HarnessError.missingBinary(binary)
        }
    }

    /// The environment for child processes: no stray systemd or XDG settings.
    func environment(extra: [String: String] = [:]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        for key in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM", "SWEEPER_SOCKET"] { env[key] = nil }
        env["XDG_CONFIG_HOME"] = root + "/config"
        env["XDG_STATE_HOME"] = root + "/xdg-state"
        env["XDG_RUNTIME_DIR"] = root + "/xdg-run"
        env["USER"] = "tester"
        for (k, v) in extra { env[k] = v }
        return env
    }

    /// Starts the daemon and waits for `READY=1` on a notify socket of our own.
    func start(name: String = "tester", environment extra: [String: String] = [:], journal: Bool = false) throws {
        let listener = try NotifyListener(path: root + "/notify-\(UUID().uuidString.prefix(6)).sock")
        notify = listener
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.sweeperd)
        p.arguments = ["--state-dir", stateDirectory, "--socket", socketPath, "--no-mdns", "--name", name, "--log-level", "debug"]
        if !FileManager.default.fileExists(atPath: logPath) {
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        }
        var env = extra
        env["NOTIFY_SOCKET"] = listener.path
        if journal {
            // Pretend the log file is the journal: $JOURNAL_STREAM names stderr's device and inode.
            var st = stat()
            stat(logPath, &st)
            env["JOURNAL_STREAM"] = "\(st.st_dev):\(st.st_ino)"
        }
        p.environment = environment(extra: env)
        let logHandle = FileHandle(forWritingAtPath: logPath)
        logHandle?.seekToEndOfFile()
        p.standardError = logHandle
        p.standardOutput = logHandle
        try p.run()
        daemon = p
        lastNotifications = listener.waitFor("READY=1")
        guard lastNotifications.contains(where: { $0.split(separator: "\n").contains("READY=1") }) else {
            throw HarnessError.notReady("notifications \(lastNotifications); log:\n\(self.log())")
        }
    }

    /// The daemon's log so far.
    func log() -> String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// Sends `signal` to the daemon and waits for it to exit; returns its status.
    @discardableResult
    func stop(signal: Int32 = SIGTERM) -> Int32? {
        guard let p = daemon else { return nil }
        daemon = nil
        if p.isRunning { kill(p.processIdentifier, signal) }
        p.waitUntilExit()
        return p.terminationStatus
    }

    /// Runs `sweeper` with `arguments` against this daemon's socket.
    func cli(_ arguments: [String], socket: String? = nil) throws -> Outcome {
        try run(Self.sweeper, ["--socket", socket ?? socketPath] + arguments)
    }

    /// Runs a program to completion and collects its output.
    func run(_ path: String, _ arguments: [String], environment extra: [String: String] = [:]) throws -> Outcome {
        try runProcess([path] + arguments, environment: environment(extra: extra))
    }

    /// Runs `sweeper --json …` and decodes its output as a JSON object.
    func json(_ arguments: [String]) throws -> [String: Any] {
        let o = try cli(["--json"] + arguments)
        guard o.status == 0 else { throw HarnessError.socket("sweeper \(arguments) exited \(o.status): \(o.stderr)") }
        return try (JSONSerialization.jsonObject(with: Data(o.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    func cleanup() {
        stop(signal: SIGKILL)
        notify = nil
        try? FileManager.default.removeItem(atPath: root)
    }
}
