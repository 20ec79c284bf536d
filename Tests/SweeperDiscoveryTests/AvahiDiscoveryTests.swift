import Foundation
import Logging
import Testing
@testable import SweeperDiscovery

/// The repository root, for Scripts/netns-lab.sh.
private let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Whether this machine can make a lab: root, with ip, dbus-daemon and avahi-daemon.
private let labAvailable: Bool = {
    guard getuid() == 0 else { return false }
    return ["/usr/sbin/avahi-daemon", "/usr/bin/dbus-daemon", "/usr/bin/avahi-publish"].allSatisfy { FileManager.default.fileExists(atPath: $0) }
        && (FileManager.default.fileExists(atPath: "/usr/sbin/ip") || FileManager.default.fileExists(atPath: "/usr/bin/ip") || FileManager.default.fileExists(atPath: "/sbin/ip"))
}()

/// Hosts in network namespaces with their own D-Bus and avahi-daemon,
/// made by Scripts/netns-lab.sh and removed (by pid) in `down()`.
final class Lab {
    let directory: String
    private var background: [pid_t] = []

    init(hosts: Int) throws {
        directory = NSTemporaryDirectory() + "sweeper-lab-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try Self.script(["up", directory, "\(hosts)"])
    }

    /// The bus address of host `i`.
    func bus(_ i: Int) -> String { "unix:path=\(directory)/h\(i)/bus.sock" }

    @discardableResult
    static func script(_ arguments: [String]) throws -> String {
        let (status, output) = try spawnAndWait(["/bin/bash", repositoryRoot.appendingPathComponent("Scripts/netns-lab.sh").path] + arguments)
        guard status == 0 else { throw LabError.failed(arguments.joined(separator: " ")) }
        return output
    }

    /// Runs a command in host `i` in the background until `down()`.
    func spawn(_ i: Int, _ command: [String]) throws {
        let pid = try spawnDetached(["/bin/bash", repositoryRoot.appendingPathComponent("Scripts/netns-lab.sh").path, "exec", directory, "\(i)"] + command)
        background.append(pid)
    }

    func run(_ arguments: [String]) throws { try Self.script(arguments.first.map { [$0, directory] + arguments.dropFirst() } ?? []) }

    func down() {
        for pid in background {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            var reaped = false
            for _ in 0..<50 where !reaped {
                reaped = waitpid(pid, &status, WNOHANG) == pid
                if !reaped { usleep(50_000) }
            }
            if !reaped {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
            }
        }
        _ = try? Self.script(["down", directory])
        try? FileManager.default.removeItem(atPath: directory)
    }

    enum LabError: Error { case failed(String) }
}

/// Runs a command to its end with posix_spawn (Foundation's Process can miss
/// the exit of a child whose own children daemonise); returns its status and output.
func spawnAndWait(_ argv: [String]) throws -> (Int32, String) {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { throw Lab.LabError.failed("pipe") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
    // Close both pipe ends beyond fd 1, or daemons the command starts keep
    // the write end open and the read below never ends.
    posix_spawn_file_actions_addclose(&actions, fds[0])
    posix_spawn_file_actions_addclose(&actions, fds[1])
    let pid = try spawn(argv, actions: &actions)
    close(fds[1])
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = read(fds[0], &buffer, buffer.count)
        if n <= 0 { break }
        output += buffer[0..<n]
    }
    close(fds[0])
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    let exited = (status & 0x7F) == 0
    return (exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F), String(decoding: output, as: UTF8.self))
}

/// Starts a command with its output discarded; returns its pid.
func spawnDetached(_ argv: [String]) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    return try spawn(argv, actions: &actions)
}

private func spawn(_ argv: [String], actions: inout posix_spawn_file_actions_t) throws -> pid_t {
    var pid: pid_t = 0
    let cArgs = argv.map { strdup($0) } + [nil]
    defer { for p in cArgs { free(p) } }
    // The test runner's threads block signals; the child must not inherit
    // that, or it (and the daemons it starts) would never see SIGTERM.
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
    let rc = posix_spawn(&pid, argv[0], &actions, &attributes, cArgs, environ)
    guard rc == 0 else { throw Lab.LabError.failed("spawn \(argv[0]): \(rc)") }
    return pid
}

/// Collects discovery events; waits for one that matches (bounded).
actor EventLog {
    private(set) var events: [DiscoveryEvent] = []
    func add(_ e: DiscoveryEvent) { events.append(e) }
}

func waitFor(_ log: EventLog, seconds: Double = 15, _ match: @Sendable (DiscoveryEvent) -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if await log.events.contains(where: match) { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return false
}

/// One test, one lab: libdbus reads `DBUS_SYSTEM_BUS_ADDRESS` once per
/// process, so every step here talks to host 1's bus.
@Suite(.enabled(if: labAvailable, "needs root, iproute2, dbus-daemon and avahi-daemon"))
struct AvahiDiscoveryTests {
    @Test func publishesBrowsesResolvesRecoversAndRenamesOnCollision() async throws {
        let lab = try Lab(hosts: 2)
        defer { lab.down() }
        setenv("DBUS_SYSTEM_BUS_ADDRESS", lab.bus(1), 1)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        // Start with host 1's avahi-daemon stopped: discovery says so and waits.
        try lab.run(["avahi-stop", "1"])
        let discovery = AvahiDiscovery(
            serviceType: "_sweeper._tcp",
            announcement: ServiceAnnouncement(instanceName: "alice on h1", port: 7455, txt: ["v": "1", "id": "ALICE", "name": "alice"]),
            logger: logger)
        let log = EventLog()
        let pump = Task { for await e in discovery.events { await log.add(e) } }
        let runner = Task { await discovery.run() }
        defer {
            runner.cancel()
            pump.cancel()
        }
        #expect(await waitFor(log) { if case .status(.unavailable) = $0 { return true } else { return false } })
        if case .running = discovery.status { Issue.record("running without avahi-daemon") }

        // avahi-daemon appears: we publish by ourselves.
        try lab.run(["avahi-start", "1"])
        #expect(await waitFor(log, seconds: 20) { $0 == .status(.running(publishedAs: "alice on h1")) })

        // Host 2 sees our record, TXT included, at host 1's address.
        let seen = try Lab.script(["exec", lab.directory, "2", "timeout", "10", "avahi-browse", "-rpt", "_sweeper._tcp"])
        #expect(seen.contains("alice\\032on\\032h1") || seen.contains("alice on h1"))
        #expect(seen.contains("198.18.0.1"))
        #expect(seen.contains("\"id=ALICE\""))

        // A daemon published on host 2 is found and resolved here.
        try lab.spawn(2, ["avahi-publish", "-s", "bob on h2", "_sweeper._tcp", "7456", "id=BOB", "name=bob"])
        #expect(await waitFor(log) { event in
            if case .found(let r) = event {
                return r.instanceName == "bob on h2" && r.port == 7456 && r.txt["id"] == "BOB" && r.addresses.contains { $0.ip == "198.18.0.2" }
            }
            return false
        })

        // avahi-daemon goes away and comes back: unavailable, then running again, bob found again.
        try lab.run(["avahi-stop", "1"])
        #expect(await waitFor(log) { if case .status(.unavailable) = $0 { return true } else { return false } })
        #expect(await waitFor(log) { $0 == .lost(instanceName: "bob on h2") })
        await log.clear()
        try lab.run(["avahi-start", "1"])
        #expect(await waitFor(log, seconds: 20) { $0 == .status(.running(publishedAs: "alice on h1")) })
        #expect(await waitFor(log, seconds: 20) { if case .found(let r) = $0 { return r.instanceName == "bob on h2" } else { return false } })

        // Taking a name host 2 already holds: Avahi's alternative name is used.
        try lab.spawn(2, ["avahi-publish", "-s", "carol on kitchen", "_sweeper._tcp", "7000"])
        #expect(await waitFor(log) { if case .found(let r) = $0 { return r.instanceName == "carol on kitchen" } else { return false } })
        discovery.update(ServiceAnnouncement(instanceName: "carol on kitchen", port: 7455, txt: ["v": "1"]))
        let renamed = await waitFor(log, seconds: 20) { event in
            if case .status(.running(let name)) = event { return name != "carol on kitchen" && name.hasPrefix("carol on kitchen") }
            return false
        }
        let events = await log.events
        #expect(renamed, "events: \(events)")
    }
}

extension EventLog {
    func clear() { events = [] }
}
