import Foundation
import Logging
import SweeperControl
import Testing

@testable import SweeperDaemon

@Suite struct ConfigurationTests {
    private func tempFile(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "sweeper-config-\(UUID().uuidString).toml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func parsesTheSubset() throws {
        let entries = try ConfigFileParser.parse(
            """
            # comment
            name = "Ada \\"A\\" L"   # trailing comment
            mdns = false
            listen = ["0.0.0.0:7070", '[::]:7070']

            state_dir = '/var/x'
            port = 12
            """)
        #expect(entries.map(\.key) == ["name", "mdns", "listen", "state_dir", "port"])
        #expect(entries[0].value == .string("Ada \"A\" L"))
        #expect(entries[1].value == .bool(false))
        #expect(entries[2].value == .array(["0.0.0.0:7070", "[::]:7070"]))
        #expect(entries[4].value == .integer(12))
        #expect(entries[3].line == 6)
    }

    @Test func errorsNameTheLine() {
        let cases: [(String, Int, String)] = [
            ("name = ada", 1, "quotes"),
            ("\n\nname \"x\"", 3, "'='"),
            ("[daemon]", 1, "tables"),
            ("name = \"x", 1, "unterminated"),
            ("a = 1\na = 2", 2, "twice"),
            ("listen = [\"a\" \"b\"]", 1, "','"),
            ("name = \"x\" y", 1, "unexpected"),
        ]
        for (text, line, fragment) in cases {
            #expect {
                _ = try ConfigFileParser.parse(text, file: "c.toml")
            } throws: { error in
                guard let e = error as? ConfigurationError else { return false }
                return e.line == line && e.description.hasPrefix("c.toml:\(line): ") && e.message.contains(fragment)
            }
        }
    }

    @Test func flagsWinOverTheFileWhichWinsOverXDG() throws {
        let file = try tempFile("name = \"file\"\nsocket = \"/file.sock\"\nlog_level = \"debug\"\nmdns = false\npeers = [\"h:1\"]\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        var o = DaemonOverrides()
        o.configFile = file
        o.name = "flag"
        let env = ["HOME": "/home/u", "XDG_STATE_HOME": "/xs", "XDG_RUNTIME_DIR": "/run/user/5", "USER": "login"]
        let s = try DaemonSettings.resolve(overrides: o, environment: env)
        #expect(s.name == "flag")
        #expect(s.socketPath == "/file.sock")
        #expect(s.stateDirectory == "/xs/sweeper")
        #expect(s.logLevel == .debug)
        #expect(s.mdns == false)
        #expect(s.peers == ["h:1"])

        let defaults = try DaemonSettings.resolve(
            overrides: DaemonOverrides(),
            environment: ["HOME": "/home/u", "USER": "login", "XDG_RUNTIME_DIR": "/run/user/5", "XDG_CONFIG_HOME": "/nonexistent"])
        #expect(defaults.name == "login")
        #expect(defaults.stateDirectory == "/home/u/.local/state/sweeper")
        #expect(defaults.socketPath == "/run/user/5/sweeper/control.sock")
        #expect(defaults.mdns)
    }

    @Test func theWebBoardsPortComesFromTheFileOrTheFlagAndIsChecked() throws {
        let env = ["HOME": "/home/u", "USER": "login", "XDG_RUNTIME_DIR": "/run/user/5", "XDG_CONFIG_HOME": "/nonexistent"]
        #expect(try DaemonSettings.resolve(overrides: DaemonOverrides(), environment: env).webPort == nil)
        let file = try tempFile("web_port = 9000\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        var o = DaemonOverrides()
        o.configFile = file
        #expect(try DaemonSettings.resolve(overrides: o, environment: env).webPort == 9000)
        o.webPort = 0
        #expect(try DaemonSettings.resolve(overrides: o, environment: env).webPort == 0)
        o.webPort = 70000
        #expect(throws: ConfigurationError.self) { try DaemonSettings.resolve(overrides: o, environment: env) }
        let wrong = try tempFile("web_port = \"8391\"\n")
        defer { try? FileManager.default.removeItem(atPath: wrong) }
        var w = DaemonOverrides()
        w.configFile = wrong
        #expect(throws: ConfigurationError.self) { try DaemonSettings.resolve(overrides: w, environment: env) }
    }

    @Test func badValuesAreRefused() throws {
        let file = try tempFile("colour = \"red\"\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        var o = DaemonOverrides()
        o.configFile = file
        #expect(throws: ConfigurationError.self) { try DaemonSettings.resolve(overrides: o, environment: [:]) }
        // An empty config (/dev/null reads as one) is fine; the flags are what is wrong.
        var empty = DaemonOverrides()
        empty.configFile = "/dev/null"
        #expect(try DaemonSettings.resolve(overrides: empty, environment: ["HOME": "/home/u", "USER": "u"]).name == "u")
        /// The settings of these flags over an empty config file.
        func flags(_ set: (inout DaemonOverrides) -> Void) throws -> DaemonSettings {
            var o = DaemonOverrides()
            o.configFile = "/dev/null"
            set(&o)
            return try DaemonSettings.resolve(overrides: o, environment: [:])
        }
        #expect { try flags { $0.peers = ["no-port"] } } throws: { error in
            (error as? ConfigurationError)?.message.contains("no-port") == true
        }
        #expect { try flags { $0.logLevel = "loud" } } throws: { error in
            (error as? ConfigurationError)?.message.contains("loud") == true
        }
        // A file that is not UTF-8 says so.
        let binary = try tempFile("")
        defer { try? FileManager.default.removeItem(atPath: binary) }
        try Data([0x6E, 0x61, 0xFF, 0xFE]).write(to: URL(fileURLWithPath: binary))
        var b = DaemonOverrides()
        b.configFile = binary
        #expect { try DaemonSettings.resolve(overrides: b, environment: [:]) } throws: { error in
            (error as? ConfigurationError)?.message == "is not UTF-8 text"
        }
        #expect(HostPort("[::1]:70") == HostPort("[::1]:70"))
        // A name with a control character is refused, saying so; a joiner (an emoji's, a Persian name's) is a name's own.
        for bad in ["Mum\n", "\u{1B}[2J", "Dad\u{07}"] {
            #expect { try flags { $0.name = bad } } throws: { error in
                (error as? ConfigurationError)?.message.contains("without control characters") == true
            }
        }
        #expect(try flags { $0.name = "Mum 👩\u{200D}👧" }.name == "Mum 👩\u{200D}👧")
    }

    /// A bad value read from the file names its file, line and key (what
    /// sweeperd prints, alone, before it exits 78); the same value given
    /// on the command line names no file (a usage error).
    @Test func aBadValueFromTheFileNamesItsLineAndKey() throws {
        let file = try tempFile("name = \"ann\"\nlog_level = \"loud\"\npeers = [\"10.0.0.2:7455\", \"no-port\"]\nweb_port = 70000\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        var o = DaemonOverrides()
        o.configFile = file
        func failure(_ o: DaemonOverrides) -> ConfigurationError? {
            do {
                _ = try DaemonSettings.resolve(overrides: o, environment: ["HOME": "/home/u", "USER": "u"])
                return nil
            } catch {
                return error
            }
        }
        #expect(
            failure(o).map { "\($0.file ?? ""):\($0.line ?? 0)" } == "\(file):2" && failure(o)?.message.contains("loud") == true,
            "\(String(describing: failure(o)))")
        o.logLevel = "debug"
        #expect(
            failure(o).map { "\($0.file ?? ""):\($0.line ?? 0)" } == "\(file):3" && failure(o)?.description.contains("'peers': 'no-port'") == true,
            "\(String(describing: failure(o)))")
        o.peers = ["10.0.0.3:7455"]
        #expect(
            failure(o).map { "\($0.file ?? ""):\($0.line ?? 0)" } == "\(file):4" && failure(o)?.message.contains("web_port") == true,
            "\(String(describing: failure(o)))")
        o.webPort = 70000
        #expect(failure(o)?.file == nil, "a value given on the command line is named as the file's")
    }

    @Test func newGameDefaultsOfThisDeviceComeFromTheFileAndFillWhatARequestLeavesOut() throws {
        let file = try tempFile("new_preset = \"expert\"\nnew_no_guess = true\nnew_question_marks = true\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        var o = DaemonOverrides()
        o.configFile = file
        let defaults = try DaemonSettings.resolve(overrides: o, environment: ["USER": "u"]).newGame
        #expect(defaults == Commands.New.Arguments(preset: "expert", noGuess: true, questionMarks: true))
        // A request with nothing gets them; a size, or an explicit choice, wins.
        let (plain, _, marks) = try Commands.New.Arguments().game(defaults: defaults)
        #expect(plain.width == 30 && plain.mines == 99 && plain.noGuess && marks)
        let (sized, _, _) = try Commands.New.Arguments(width: 10, height: 10, mines: 5, noGuess: false).game(defaults: defaults)
        #expect(sized.width == 10 && sized.mines == 5 && !sized.noGuess)
        // Without defaults, a beginner board, guessing allowed.
        let (beginner, _, noMarks) = try Commands.New.Arguments().game(defaults: .init())
        #expect(beginner.width == 9 && !beginner.noGuess && !noMarks)

        // Wrong defaults are refused at start, saying what is allowed.
        for (text, says) in [
            ("new_preset = \"huge\"\n", "expert"), ("new_width = 10\n", "together"), ("new_width = 600\nnew_height = 9\nnew_mines = 1\n", "500"),
            ("new_no_guess = \"yes\"\n", "true or false"), ("new_mines = \"9\"\n", "whole number"),
        ] {
            let bad = try tempFile(text)
            defer { try? FileManager.default.removeItem(atPath: bad) }
            var b = DaemonOverrides()
            b.configFile = bad
            #expect { try DaemonSettings.resolve(overrides: b, environment: ["USER": "u"]) } throws: { error in
                (error as? ConfigurationError)?.message.contains(says) == true
            }
        }
        #expect(HostPort("[::1]:70")?.host == "::1")
        #expect(HostPort("example:99999") == nil)
    }
}

@Suite struct SystemdNotifierTests {
    @Test func sendsToAnAbstractSocket() throws {
        let name = "sweeper-test-\(UUID().uuidString.prefix(8))"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = [UInt8(0)] + Array(name.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
        let rc = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        try #require(rc == 0)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": "@" + name, "WATCHDOG_USEC": "2000000"])
        #expect(notifier.watchdogInterval == .seconds(1))
        #expect(notifier.notify("READY=1\nSTATUS=ok"))
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        #expect(n > 0 && String(decoding: buffer[0..<max(0, n)], as: UTF8.self) == "READY=1\nSTATUS=ok")
        #expect(SystemdNotifier(environment: [:]).notify("READY=1") == false)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "/x", "WATCHDOG_USEC": "10", "WATCHDOG_PID": "1"]).watchdogInterval == nil)

        // A start that replays games asks systemd for more time as it goes, at most every 2 s of its clock.
        let clock = ManualClock()
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let report = StartReplayReport(notifier: notifier, clock: clock, logger: logger)
        func received() -> [String] {
            var out: [String] = []
            while true {
                let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                guard n > 0 else { return out }
                out.append(String(decoding: buffer[0..<n], as: UTF8.self))
            }
        }
        report.report(done: 0, total: 3)
        report.report(done: 1, total: 3)
        clock.advance(by: .seconds(2))
        report.report(done: 2, total: 3)
        report.report(done: 3, total: 3)
        #expect(
            received() == [0, 2, 3].map { StartReplayReport.message(done: $0, total: 3) },
            "the first, one 2 s later and the last; not the one in between")
        #expect(StartReplayReport.message(done: 2, total: 3) == "EXTEND_TIMEOUT_USEC=120000000\nSTATUS=reading back 3 games from their moves once: 2 done")
    }

    @Test func journalPriorities() {
        #expect(StderrLogHandler.priority(.error) == 3)
        #expect(StderrLogHandler.priority(.info) == 6)
        #expect(StderrLogHandler.stderrIsJournal(environment: [:]) == false)
        #expect(StderrLogHandler.stderrIsJournal(environment: ["JOURNAL_STREAM": "1:2"]) == false)
        var st = stat()
        fstat(2, &st)
        #expect(StderrLogHandler.stderrIsJournal(environment: ["JOURNAL_STREAM": "\(st.st_dev):\(st.st_ino)"]))
    }

    /// A name from the network with a newline and a priority forges no log
    /// line, and an escape sequence or a bidirectional override moves no terminal.
    @Test func whatOthersSentIsLoggedWithItsControlsEscaped() {
        #expect(StderrLogHandler.escaped("instance=Mum's laptop") == "instance=Mum's laptop")
        #expect(StderrLogHandler.escaped("x\n<0>sweeperd: forged") == "x\\u{a}<0>sweeperd: forged")
        #expect(StderrLogHandler.escaped("\u{1B}]52;c;AAAA\u{07}\u{9B}2J") == "\\u{1b}]52;c;AAAA\\u{7}\\u{9b}2J")
        #expect(StderrLogHandler.escaped("evil\u{202E}txt.exe\u{200B}") == "evil\\u{202e}txt.exe\\u{200b}")
        #expect(StderrLogHandler.escaped("Zoë 🎉") == "Zoë 🎉")
    }
}

@Suite struct InstanceLockTests {
    @Test func aSecondLockIsRefusedNamingThePid() throws {
        let path = NSTemporaryDirectory() + "sweeper-lock-\(UUID().uuidString)"
        defer { unlink(path) }
        let first = try InstanceLock(path: path, resource: "thing")
        // flock locks belong to open files: a second open in this process conflicts too.
        #expect {
            _ = try InstanceLock(path: path, resource: "thing")
        } throws: { error in
            guard let e = error as? InstanceLockError else { return false }
            return e.holder == getpid() && e.description.contains("pid \(getpid())")
        }
        first.release()
        _ = try InstanceLock(path: path, resource: "thing")
    }

    /// A lock file that is a symbolic link (planted to make the daemon
    /// truncate a file of its user's) is refused, and the file it points
    /// at keeps its bytes.
    @Test func aSymlinkedLockFileIsRefusedAndItsTargetUntouched() throws {
        let base = NSTemporaryDirectory() + "sweeper-lock-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let victim = base + "/precious"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: victim))
        #expect(symlink(victim, base + "/control.sock.lock") == 0)
        #expect {
            _ = try InstanceLock(path: base + "/control.sock.lock", resource: "the socket")
        } throws: { "\($0)".contains("symbolic link") }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep me")
    }
}
