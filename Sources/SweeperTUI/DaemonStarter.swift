import Dispatch
import FoundationEssentials
import SweeperControl
import SweeperConventions
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts `sweeperd` in the background when no daemon answers, so one
/// command starts a game.
public struct DaemonStarter: Sendable {
    /// The control socket to reach the daemon on.
    public var socketPath: String
    /// The environment (for `PATH`, `XDG_STATE_HOME`, `HOME`).
    public var environment: [String: String]
    /// How many times to look for the socket after starting (every 100 ms).
    public var attempts = 100

    /// What happened.
    public enum Outcome: Equatable, Sendable {
        /// A daemon was already answering.
        case running
        /// A daemon was started: its pid and log file.
        case started(pid: Int32, log: String)
    }

    /// Why the daemon could not be started.
    public struct Failure: Error, CustomStringConvertible {
        /// A sentence for people.
        public var description: String
    }

    /// Creates a starter.
    public init(socketPath: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.socketPath = socketPath
        self.environment = environment
    }

    /// The state directory: `$XDG_STATE_HOME/sweeper`, else `~/.local/state/sweeper`.
    public var stateDirectory: String {
        SweeperPaths(environment: environment).stateDirectory
    }

    /// The `sweeperd` to start: beside this program, else on `PATH`.
    public func daemonExecutable() -> String? {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let folder = SweeperPaths.folder(of: exe)
        let beside = (folder == "/" ? "" : folder) + "/sweeperd"
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        return SweeperPaths.executable("sweeperd", onPath: environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin")
    }

    /// Whether a daemon answers `status` on the socket.
    public func answers() async -> Bool {
        do {
            _ = try await ControlClient.withConnection(socketPath: socketPath, waitingForStart: .zero) { try await $0.call(Commands.Status.self, Empty()) }
            return true
        } catch {
            return false
        }
    }

    /// Makes sure a daemon answers: starts one (detached, in its own session,
    /// its output appended to `sweeperd.log` in the state directory) and waits
    /// a bounded time for its socket.
    public func ensureRunning() async throws -> Outcome {
        Self.reapStarted()
        if await answers() { return .running }
        guard let executable = daemonExecutable() else {
            throw Failure(description: "no daemon answers on \(socketPath) and no sweeperd was found beside sweeper or on PATH")
        }
        try PrivateDirectory.make(stateDirectory)
        let log = stateDirectory + "/sweeperd.log"
        let pid = try spawn(executable, ["--socket", socketPath], log: log)
        Self.started.withLock { _ = $0.insert(pid) }
        for _ in 0..<attempts {
            if await answers() { return .started(pid: pid, log: log) }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                Self.started.withLock { _ = $0.remove(pid) }
                throw Failure(description: "sweeperd stopped right after starting; see \(log)")
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        throw Failure(description: "started sweeperd (pid \(pid)) but its socket \(socketPath) did not answer; see \(log)")
    }

    /// The daemons this process started: its children until it reaps them.
    private static let started = Mutex<Set<pid_t>>([])

    /// Reaps the daemons this process started that have ended (one killed
    /// while the viewer ran stays a zombie until then): the next start, or
    /// the viewer's next try to reach one, collects them. Never waits.
    public static func reapStarted() {
        started.withLock { pids in
            for pid in pids {
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid { pids.remove(pid) }
            }
        }
    }

    /// glibc's `POSIX_SPAWN_SETSID` (hidden behind `_GNU_SOURCE`, so not imported): the child gets a
    /// session of its own and outlives the terminal.
    private static let spawnSetSID: Int32 = 0x80

    private func spawn(_ executable: String, _ arguments: [String], log: String) throws -> Int32 {
        let logFD = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard logFD >= 0 else { throw Failure(description: "cannot open \(log): \(String(cString: strerror(errno)))") }
        defer { close(logFD) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, logFD, 1)
        posix_spawn_file_actions_adddup2(&actions, logFD, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(Self.spawnSetSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var env = environment
        env["SWEEPER_SOCKET"] = nil
        let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for e in envp { free(e) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard rc == 0 else { throw Failure(description: "cannot start \(executable): \(String(cString: strerror(rc)))") }
        return pid
    }
}
