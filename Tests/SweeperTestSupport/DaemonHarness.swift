import Foundation

public enum HarnessError: Error, CustomStringConvertible {
    case missingBinary(String)
    case notReady(String)
    case socket(String)
    public var description: String {
        switch self {
        case .missingBinary(let p): "no binary at \(p); run `swift build --scratch-path … --product sweeperd --product sweeper` first"
        case .notReady(let s): "the daemon did not become ready: \(s)"
        case .socket(let s): "socket: \(s)"
        }
    }
}

/// A datagram socket standing in for systemd's `$NOTIFY_SOCKET`.
public final class NotifyListener {
    public let path: String
    private let fd: Int32

    public init(path: String) throws {
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
    public func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buffer, buffer.count, 0)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n], as: UTF8.self)
    }

    /// The datagrams already waiting, without blocking.
    public func drain() -> [String] {
        var out: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard n > 0 else { return out }
            out.append(String(decoding: buffer[0..<n], as: UTF8.self))
        }
    }

    /// Waits (at most 10 datagrams, each within 30 s) for one containing `line`.
    public func waitFor(_ line: String) -> [String] {
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

/// The daemons tests start: the one way a test launches `sweeperd` (in the
/// root namespace or in a lab host), waits until it is ready, and stops it
/// by its pid.
public enum TestDaemons {
    /// The `sweeperd` under test, beside the test runner.
    public static var sweeperd: String { productsDirectory + "/sweeperd" }
    /// The `sweeper` under test.
    public static var sweeper: String { productsDirectory + "/sweeper" }

    /// Throws when the binaries under test are not built.
    public static func checkBinaries() throws {
        for binary in [sweeperd, sweeper] where !FileManager.default.isExecutableFile(atPath: binary) {
            throw HarnessError.missingBinary(binary)
        }
    }

    /// The environment for a daemon or CLI of a test rooted at `root`: this
    /// process's, without stray systemd, socket or bus settings, with the
    /// XDG directories under `root` and `USER` set to `user`.
    public static func environment(root: String, user: String? = nil) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        for key in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM", "SWEEPER_SOCKET", "DBUS_SYSTEM_BUS_ADDRESS"] {
            env[key] = nil
        }
        env["XDG_CONFIG_HOME"] = root + "/config"
        env["XDG_STATE_HOME"] = root + "/xdg-state"
        env["XDG_RUNTIME_DIR"] = root + "/xdg-run"
        if let user { env["USER"] = user }
        return env
    }

    /// Starts `sweeperd ARGUMENTS` (stdout and stderr appended to `log`) with
    /// `spawn`, then polls `ready` until it holds, for at most `seconds`.
    /// Throws, with the log's tail, when the daemon exits first or is not
    /// ready in time (it is then killed). Returns its pid.
    public static func launch(
        _ arguments: [String], environment: [String: String], log: String, seconds: Double = 60,
        spawn: (_ argv: [String], _ environment: [String: String], _ output: String) throws -> pid_t = { try spawnDetached($0, environment: $1, output: $2) },
        ready: () -> Bool
    ) throws -> pid_t {
        try checkBinaries()
        let pid = try spawn([sweeperd] + arguments, environment, log)
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if hasExited(pid) { throw HarnessError.notReady("sweeperd exited at start; log:\n\(tail(of: log))") }
            if ready() { return pid }
            usleep(50_000)
        }
        stopProcess(pid, signal: SIGKILL)
        throw HarnessError.notReady("sweeperd did not get ready within \(Int(seconds)) s; log:\n\(tail(of: log))")
    }

    /// Whether a daemon answers `status` on `socketPath`.
    public static func answers(_ socketPath: String) -> Bool {
        guard let client = try? ControlLineClient(path: socketPath) else { return false }
        return client.request(["id": 0, "command": "status"])?["ok"] as? Bool == true
    }

    /// The last 3,000 characters of a log file.
    public static func tail(of log: String) -> String {
        String(((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").suffix(3000))
    }
}

/// A `sweeperd` on a temporary state directory and socket, driven by the
/// real binaries, with a notify socket of its own standing in for
/// systemd's. Every process it starts is stopped by pid in `cleanup()`.
public final class DaemonHarness {
    public let root: String
    public let stateDirectory: String
    public let socketPath: String
    /// The daemon's pid while it runs.
    public private(set) var pid: pid_t?
    public private(set) var notify: NotifyListener?
    /// The notifications seen up to `READY=1`.
    public private(set) var lastNotifications: [String] = []
    public var logPath: String { root + "/sweeperd.log" }
    /// The web board's port `start` asks for (0: any free port).
    public var webPort = 0
    /// `--listen`, when set: `127.0.0.1:0` keeps the daemon off every other
    /// address, so its address notes name nothing another daemon can dial.
    public var listen: String?

    public static var sweeperd: String { TestDaemons.sweeperd }
    public static var sweeper: String { TestDaemons.sweeper }

    public init() throws {
        root = "/tmp/swd-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        stateDirectory = root + "/state"
        socketPath = root + "/run/control.sock"
        try TestDaemons.checkBinaries()
    }

    /// The environment for child processes: no stray systemd or XDG settings.
    public func environment(extra: [String: String] = [:]) -> [String: String] {
        var env = TestDaemons.environment(root: root, user: "tester")
        for (k, v) in extra { env[k] = v }
        return env
    }

    /// The arguments `start` gives `sweeperd`.
    public func arguments(name: String = "tester", logLevel: String = "debug", mdns: Bool = false) -> [String] {
        ["--state-dir", stateDirectory, "--socket", socketPath] + (mdns ? [] : ["--no-mdns"])
            + ["--name", name, "--log-level", logLevel, "--web-port", "\(webPort)", "--web-lan-port", "0"] + (listen.map { ["--listen", $0] } ?? [])
    }

    /// Starts the daemon and waits for `READY=1` on a notify socket of our own.
    /// With `mdns`, the daemon looks for avahi as a user's does.
    public func start(name: String = "tester", environment extra: [String: String] = [:], journal: Bool = false, mdns: Bool = false) throws {
        let listener = try NotifyListener(path: root + "/notify-\(UUID().uuidString.prefix(6)).sock")
        notify = listener
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
        var seen: [String] = []
        pid = try TestDaemons.launch(arguments(name: name, mdns: mdns), environment: environment(extra: env), log: logPath) {
            seen += listener.drain()
            return seen.contains { $0.split(separator: "\n").contains("READY=1") }
        }
        lastNotifications = seen
    }

    /// The daemon's log so far.
    public func log() -> String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// Sends `signal` to the daemon and waits for it to exit (SIGKILL after
    /// a grace period); returns its status.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM) -> Int32? {
        guard let p = pid else { return nil }
        pid = nil
        return stopProcess(p, signal: signal, graceSeconds: 30)
    }

    /// Runs `sweeper` with `arguments` against this daemon's socket.
    public func cli(_ arguments: [String], socket: String? = nil) throws -> Outcome {
        try run(Self.sweeper, ["--socket", socket ?? socketPath] + arguments)
    }

    /// Runs a program to completion and collects its output.
    public func run(_ path: String, _ arguments: [String], environment extra: [String: String] = [:]) throws -> Outcome {
        try runProcess([path] + arguments, environment: environment(extra: extra))
    }

    /// Runs `sweeper --json …` and decodes its output as a JSON object.
    /// The `127.0.0.1:PORT` its peers reach it at.
    public func peerAddress() throws -> String {
        let listening = (try json(["status"])["listening"] as? [String]) ?? []
        guard let port = listening.first?.split(separator: ":").last else { throw HarnessError.socket("no listening address in \(listening)") }
        return "127.0.0.1:\(port)"
    }

    /// Joins `member`'s circle as a person does without mDNS: `sweeper
    /// invite` there, `sweeper join CODE --address …` here (which links
    /// this daemon to the member). Returns the outcome of the join.
    /// `options` go to `sweeper join` (such as `--old-games forget`).
    @discardableResult
    public func join(_ member: DaemonHarness, _ options: [String] = []) throws -> Outcome {
        guard let code = try member.json(["invite"])["code"] as? String else { throw HarnessError.socket("invite printed no code") }
        let address = try member.peerAddress()
        return try cli(["join", code, "--address", address] + options)
    }

    public func json(_ arguments: [String]) throws -> [String: Any] {
        let o = try cli(["--json"] + arguments)
        guard o.status == 0 else { throw HarnessError.socket("sweeper \(arguments) exited \(o.status): \(o.stderr)") }
        return try (JSONSerialization.jsonObject(with: Data(o.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    public func cleanup() {
        stop(signal: SIGKILL)
        notify = nil
        if ProcessInfo.processInfo.environment["SWEEPER_KEEP_TEST_DIRS"] == nil {
            try? FileManager.default.removeItem(atPath: root)
        }
    }
}
