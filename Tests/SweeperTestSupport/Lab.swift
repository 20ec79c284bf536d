import Foundation

/// The repository root, for Scripts/netns-lab.sh.
public let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Why a lab cannot be made here, or nil when it can: it needs root, ip,
/// dbus-daemon and avahi-daemon (with avahi-utils).
public let labUnavailableReason: String? = {
    if getuid() != 0 { return "needs root (network namespaces)" }
    let fm = FileManager.default
    for tool in ["/usr/sbin/avahi-daemon", "/usr/bin/dbus-daemon", "/usr/bin/avahi-publish"] where !fm.fileExists(atPath: tool) {
        return "needs \(tool) (apt-get install avahi-daemon avahi-utils dbus)"
    }
    if !["/usr/sbin/ip", "/usr/bin/ip", "/sbin/ip"].contains(where: fm.fileExists(atPath:)) {
        return "needs ip (apt-get install iproute2)"
    }
    return nil
}()

/// Whether this machine can make a lab.
public let labAvailable = labUnavailableReason == nil

/// Hosts in network namespaces on a bridge, each with its own D-Bus and
/// avahi-daemon, made by Scripts/netns-lab.sh; `down()` stops (by pid) what
/// it and the script started and removes the namespaces.
public final class Lab {
    public let directory: String
    private var background: [pid_t] = []
    private var isDown = false
    /// The first host of the second house, or nil for one house.
    public let secondHouse: Int?

    /// Makes hosts h1…hN (198.18.0.1…N/24); with `secondHouse` B, hosts
    /// hB…hN are another house (198.18.1.B…N/24) behind a router that mDNS
    /// does not cross. Cleans up after itself if that fails.
    public init(hosts: Int, secondHouse: Int? = nil) throws {
        directory = "/tmp/sweeper-lab-\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
        self.secondHouse = secondHouse
        do {
            try Self.script(["up", directory, "\(hosts)"] + (secondHouse.map { ["\($0)"] } ?? []))
        } catch {
            _ = try? Self.script(["down", directory])
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// The bus address of host `i`.
    public func bus(_ i: Int) -> String { "unix:path=\(directory)/h\(i)/bus.sock" }

    /// The address of host `i` on its house's bridge.
    public func address(_ i: Int) -> String { secondHouse.map { i >= $0 } == true ? "198.18.1.\(i)" : "198.18.0.\(i)" }

    public static var scriptPath: String { repositoryRoot.appendingPathComponent("Scripts/netns-lab.sh").path }

    @discardableResult
    public static func script(_ arguments: [String]) throws -> String {
        let o = try runProcess(["/bin/bash", scriptPath] + arguments)
        guard o.status == 0 else { throw ProcessError("netns-lab.sh \(arguments.joined(separator: " ")) exited \(o.status): \(o.stderr)") }
        return o.stdout
    }

    /// The command line that runs `command` inside host `i`, with its bus.
    public func inHost(_ i: Int, _ command: [String]) -> [String] {
        ["/bin/bash", Self.scriptPath, "exec", directory, "\(i)"] + command
    }

    /// Runs a command in host `i` in the background until `down()` (or until
    /// stopped by its pid); returns the pid.
    @discardableResult
    public func spawn(_ i: Int, _ command: [String], environment: [String: String]? = nil, output: String? = nil) throws -> pid_t {
        let pid = try spawnDetached(inHost(i, command), environment: environment, output: output)
        background.append(pid)
        return pid
    }

    /// Runs `netns-lab.sh COMMAND DIR ARGS…`, e.g. `run(["cut", "3"])`.
    /// Stops one process started with `spawn` (TERM, then KILL) and forgets it.
    @discardableResult
    public func stop(_ pid: pid_t, signal: Int32 = SIGTERM) -> Int32? {
        guard let index = background.firstIndex(of: pid) else { return nil }
        background.remove(at: index)
        return stopProcess(pid, signal: signal, graceSeconds: 5)
    }

    public func run(_ arguments: [String]) throws {
        try Self.script(arguments.first.map { [$0, directory] + arguments.dropFirst() } ?? [])
    }

    /// The bytes host `i`'s interface on the lab's bridge has received so far.
    public func receivedBytes(_ i: Int) throws -> Int {
        let text = try Self.script(["rx-bytes", directory, "\(i)"])
        guard let n = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw ProcessError("netns-lab.sh rx-bytes printed \(text)")
        }
        return n
    }

    public func cut(_ i: Int) throws { try run(["cut", "\(i)"]) }
    public func heal(_ i: Int) throws { try run(["heal", "\(i)"]) }

    /// Stops everything started here by pid, then the lab. Safe to call twice.
    public func down() {
        guard !isDown else { return }
        isDown = true
        for pid in background { stopProcess(pid, graceSeconds: 5) }
        background = []
        _ = try? Self.script(["down", directory])
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { down() }
}
