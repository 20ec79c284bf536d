import Foundation
import Logging
import SweeperTestSupport
import Testing

@testable import SweeperDiscovery

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
@Suite(.enabled(if: labAvailable, Comment(rawValue: labUnavailableReason ?? "")))
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
        #expect(await waitFor(log, seconds: 30) { if case .status(.unavailable) = $0 { return true } else { return false } })
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
        _ = try lab.spawn(2, ["avahi-publish", "-s", "bob on h2", "_sweeper._tcp", "7456", "id=BOB", "name=bob"])
        #expect(
            await waitFor(log) { event in
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

        // Taking a name already held (by another program on the same
        // avahi-daemon, so the conflict is certain rather than a race of
        // probes between hosts): Avahi's alternative name is used.
        _ = try lab.spawn(1, ["avahi-publish", "-s", "carol on kitchen", "_sweeper._tcp", "7000"])
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
