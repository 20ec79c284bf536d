import Foundation

/// Process helpers for tests that run real binaries. They use posix_spawn
/// rather than Foundation's `Process`, which can miss the exit of a child
/// whose own children daemonise (and hangs here). Every child gets default
/// signal handlers and an empty signal mask: the test runner's threads block
/// signals, and a child that inherited that would never see SIGTERM.

/// What a finished process left.
public struct Outcome: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }
}

/// Why a helper failed.
public struct ProcessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Runs a command to its end; returns its status and standard output
/// (standard error is discarded).
public func spawnAndWait(_ argv: [String], environment: [String: String]? = nil) throws -> (Int32, String) {
    let o = try runProcess(argv, environment: environment, keepStderr: false)
    return (o.status, o.stdout)
}

/// Runs a command to its end and collects its output. Standard error goes
/// through a temporary file, so neither stream can block the other.
public func runProcess(_ argv: [String], environment: [String: String]? = nil, keepStderr: Bool = true) throws -> Outcome {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { throw ProcessError("pipe: \(errno)") }
    let errPath = NSTemporaryDirectory() + "sweeper-stderr-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    defer { unlink(errPath) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
    posix_spawn_file_actions_addopen(&actions, 2, keepStderr ? errPath : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    // Close both pipe ends beyond fd 1, or daemons the command starts keep
    // the write end open and the read below never ends.
    posix_spawn_file_actions_addclose(&actions, fds[0])
    posix_spawn_file_actions_addclose(&actions, fds[1])
    let pid: pid_t
    do {
        pid = try spawn(argv, actions: &actions, environment: environment)
    } catch {
        close(fds[0])
        close(fds[1])
        throw error
    }
    close(fds[1])
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = read(fds[0], &buffer, buffer.count)
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { break }
        output += buffer[0..<n]
    }
    close(fds[0])
    let status = waitForExit(pid)
    let stderr = keepStderr ? ((try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "") : ""
    return Outcome(status: status, stdout: String(decoding: output, as: UTF8.self), stderr: stderr)
}

/// Starts a command in the background; its standard output and error are
/// appended to `output` (discarded when nil). Returns its pid; stop it with
/// ``stopProcess(_:signal:graceSeconds:)``.
public func spawnDetached(_ argv: [String], environment: [String: String]? = nil, output: String? = nil) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    if let output {
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
    } else {
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    }
    return try spawn(argv, actions: &actions, environment: environment)
}

/// Sends `signal` to `pid`, waits up to `graceSeconds` for it to exit, then
/// SIGKILLs it; reaps it. Returns the exit status (128+N for a signal), or
/// nil when `pid` was not our child.
@discardableResult
public func stopProcess(_ pid: pid_t, signal: Int32 = SIGTERM, graceSeconds: Double = 5) -> Int32? {
    guard pid > 0 else { return nil }
    kill(pid, signal)
    let steps = max(1, Int(graceSeconds / 0.05))
    for _ in 0..<steps {
        var status: Int32 = 0
        let r = waitpid(pid, &status, WNOHANG)
        if r == pid { return decode(status) }
        if r < 0 { return nil }
        usleep(50_000)
    }
    kill(pid, SIGKILL)
    return waitForExit(pid)
}

/// Whether `pid` (a child of ours) has exited; reaps it if so.
public func hasExited(_ pid: pid_t) -> Bool {
    var status: Int32 = 0
    let r = waitpid(pid, &status, WNOHANG)
    return r == pid || r < 0
}

private func waitForExit(_ pid: pid_t) -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
        if errno != EINTR { return -1 }
    }
    return decode(status)
}

private func decode(_ status: Int32) -> Int32 {
    (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
}

private func spawn(_ argv: [String], actions: inout posix_spawn_file_actions_t, environment: [String: String]?) throws -> pid_t {
    var pid: pid_t = 0
    let cArgs = argv.map { strdup($0) } + [nil]
    defer { for p in cArgs { free(p) } }
    let cEnv: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
    defer { for p in cEnv ?? [] { free(p) } }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    var all = sigset_t()
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    let rc: Int32
    if let cEnv {
        rc = cEnv.withUnsafeBufferPointer { posix_spawn(&pid, argv[0], &actions, &attributes, cArgs, $0.baseAddress) }
    } else {
        rc = posix_spawn(&pid, argv[0], &actions, &attributes, cArgs, environ)
    }
    guard rc == 0 else { throw ProcessError("spawn \(argv[0]): \(String(cString: strerror(rc)))") }
    return pid
}

/// The directory holding the built products (`sweeperd`, `sweeper`): the
/// test bundle's own directory.
public let productsDirectory: String = {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var dir = (exe as NSString).deletingLastPathComponent
    // On Linux the test runner is `<products>/<Package>PackageTests.xctest`.
    if dir.hasSuffix(".xctest") { dir = (dir as NSString).deletingLastPathComponent }
    return dir
}()

/// A command started in the background with its output in files, to be
/// collected with `wait()`: for starting several commands at once.
public struct StartedProcess {
    public let pid: pid_t
    private let outPath: String
    private let errPath: String

    public init(_ argv: [String], environment: [String: String]? = nil) throws {
        let base = NSTemporaryDirectory() + "sweeper-proc-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        outPath = base + ".out"
        errPath = base + ".err"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        pid = try spawn(argv, actions: &actions, environment: environment)
    }

    /// What it wrote to its standard error so far, while it runs.
    public var stderrSoFar: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }

    /// Waits (at most `seconds`, then SIGKILL) for the end; returns what it left.
    public func wait(seconds: Double = 60) -> Outcome {
        var status: Int32 = -1
        var done = false
        for _ in 0..<max(1, Int(seconds / 0.02)) where !done {
            var raw: Int32 = 0
            let r = waitpid(pid, &raw, WNOHANG)
            if r == pid {
                status = decode(raw)
                done = true
            } else if r < 0 {
                done = true
            } else {
                usleep(20_000)
            }
        }
        if !done { status = stopProcess(pid, signal: SIGKILL) ?? -1 }
        let out = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        unlink(outPath)
        unlink(errPath)
        return Outcome(status: status, stdout: out, stderr: err)
    }
}

/// Whether a test can run a program as another user (`nobody`): it needs
/// root and util-linux's setpriv.
public let canActAsAnotherUser = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
