import Foundation
import SweeperTestSupport
import Testing

/// What the system around the daemon meets: a journal that a machine
/// without avahi-daemon does not flood, and a bad configuration that stops
/// the daemon with a status systemd is told not to restart on.
@Suite(.serialized) struct ServiceFacingTests {
    /// With no avahi to reach (no system bus at all here), the log says so
    /// once, with the remedy, and tries again quietly: not a line every
    /// three seconds.
    @Test func withoutAvahiTheLogSaysSoOnceWithTheRemedy() throws {
        let h = try DaemonHarness()
        defer { h.cleanup() }
        try h.start(name: "ann", environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(h.root)/no-bus"], mdns: true)
        // Long enough for the old every-3-seconds line to come four times.
        Thread.sleep(forTimeInterval: 13)
        let log = h.log()
        let mdns = log.split(separator: "\n").filter { $0.contains("mdns") }
        let loud = mdns.filter { !$0.contains("debug") }
        let tries = mdns.filter { $0.contains("trying avahi again") }
        // The attempt happened: discovery ran, found no avahi, and tried again.
        #expect(tries.count >= 1, "discovery never tried again:\n\(mdns.joined(separator: "\n"))")
        #expect(loud.count == 1 && loud[0].contains("cannot reach avahi-daemon") && loud[0].contains("mdns = false"),
                "\(loud.joined(separator: "\n"))")
        #expect(tries.count <= 3, "tries every few seconds: \(tries.count)")
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
