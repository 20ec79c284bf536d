import Foundation
import SweeperDaemon
import Testing

/// Packaging/systemd/sweeperd.service against what sweeperd does.
@Suite struct UnitFileTests {
    /// `[Service]` settings of the unit, key → values in order.
    static func serviceSettings() throws -> [String: [String]] {
        let text = try String(contentsOfFile: "\(repositoryRoot)/Packaging/systemd/sweeperd.service", encoding: .utf8)
        var section = ""
        var settings: [String: [String]] = [:]
        for raw in text.split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                section = line
                continue
            }
            guard section == "[Service]", let eq = line.firstIndex(of: "=") else { continue }
            settings[String(line[..<eq]), default: []].append(String(line[line.index(after: eq)...]))
        }
        return settings
    }

    @Test func unitIsANotifyServiceWithAWatchdogThatRestarts() throws {
        let s = try Self.serviceSettings()
        #expect(s["Type"] == ["notify"])
        #expect(s["ExecStart"] == ["/usr/bin/sweeperd"])
        #expect(s["Restart"] == ["on-failure"])
        let watchdog = try #require(s["WatchdogSec"]?.first.flatMap { Int($0) })
        #expect(watchdog > 0)
        // sweeperd's graceful shutdown gives up after 15 s; systemd must wait longer than that.
        let stop = try #require(s["TimeoutStopSec"]?.first.flatMap { Int($0) })
        #expect(stop > 15)
        for hardening in ["NoNewPrivileges", "LockPersonality", "RestrictRealtime", "MemoryDenyWriteExecute"] {
            #expect(s[hardening] == ["yes"], "\(hardening)=yes is missing")
        }
        #expect(s["SystemCallArchitectures"] == ["native"])
        // A last line against floods: memory and tasks are capped.
        #expect(s["MemoryMax"]?.first?.hasSuffix("M") == true, "MemoryMax= is missing")
        #expect(s["TasksMax"]?.first.flatMap { Int($0) }.map { $0 >= 16 } == true, "TasksMax= is missing")
    }

    /// RuntimeDirectory= is `$XDG_RUNTIME_DIR/<name>` in a user unit; sweeperd's
    /// default socket must be inside it, or systemd makes (and cleans) a
    /// directory nobody uses. StateDirectory= would be under `$XDG_CONFIG_HOME`
    /// on systemd 252, not where sweeperd keeps its state, so it is not set.
    @Test func sweeperdDefaultsLandInTheUnitsDirectories() throws {
        let s = try Self.serviceSettings()
        let runtime = try #require(s["RuntimeDirectory"]?.first)
        #expect(s["RuntimeDirectoryMode"] == ["0700"])
        #expect(s["StateDirectory"] == nil)
        // The environment a systemd user manager gives its services.
        let environment = ["HOME": "/home/ann", "XDG_RUNTIME_DIR": "/run/user/1000", "USER": "ann"]
        let settings = try DaemonSettings.resolve(
            overrides: DaemonOverrides(), environment: environment)
        #expect((settings.socketPath as NSString).deletingLastPathComponent == "/run/user/1000/" + runtime)
        #expect(settings.stateDirectory == "/home/ann/.local/state/sweeper")
    }
}
