import Foundation
import SweeperTestSupport
import Testing

/// What the system around the daemon meets: a journal that a machine
/// without avahi-daemon does not flood, and a bad configuration that stops
/// the daemon with a status systemd is told not to restart on.
@Suite(.serialized) struct ServiceFacingTests {
    /// With no avahi to reach (no system bus at all here), the log says so
    /// once, with the remedy, and tries again quietly (how seldom is
    /// ReconnectBackoffTests): not a line at info every three seconds.
    @Test func withoutAvahiTheLogSaysSoOnceWithTheRemedy() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start(name: "ann", environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(h.root)/no-bus"], mdns: true)
        func lines() -> [Substring] { h.log().split(separator: "\n").filter { $0.contains("mdns") } }
        // The attempt happened: discovery ran, found no avahi, and tried again (3 s after the first look).
        #expect(eventually(15) { lines().contains { $0.contains("trying avahi again") } }, "discovery never tried again:\n\(lines().joined(separator: "\n"))")
        // Each try is quiet: one line at warning in all, with the remedy (the old daemon added one at info every 3 s).
        let loud = lines().filter { !$0.contains("debug") }
        #expect(
            loud.count == 1 && loud[0].contains("cannot reach avahi-daemon") && loud[0].contains("mdns = false"),
            "\(loud.joined(separator: "\n"))")
        // Still a working daemon.
        #expect(try h.cli(["status"]).status == 0)
    }

    /// A bad value in config.toml: the message names the file, the line and
    /// the key, without the command-line usage, and the exit status is 78
    /// (EX_CONFIG), which the unit's RestartPreventExitStatus= names.
    @Test func aBadConfigurationExits78NamingTheLineAndTheUnitDoesNotRestartOnIt() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        let config = h.root + "/bad.toml"
        try "name = \"ann\"\nsync = \"sometimes\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let out = try h.run(TestDaemons.sweeperd, ["--config", config, "--state-dir", h.stateDirectory, "--socket", h.socketPath, "--no-mdns"])
        #expect(out.status == 78, "\(out.status): \(out.stderr)")
        #expect(out.stderr.contains("bad.toml:2:") && out.stderr.contains("'sync' must be one of"), "\(out.stderr)")
        #expect(!out.stderr.contains("USAGE"), "\(out.stderr)")
        let unit = try String(contentsOf: repositoryRoot.appendingPathComponent("Packaging/systemd/sweeperd.service"), encoding: .utf8)
        #expect(unit.split(separator: "\n").contains("RestartPreventExitStatus=78"))
        // A unit that stops (or fails beside a daemon `sweeper play` started) keeps the socket's directory.
        #expect(unit.split(separator: "\n").contains("RuntimeDirectoryPreserve=yes"))
    }
}
