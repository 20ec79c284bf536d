import Foundation
import SweeperTestSupport
import Testing

/// The installed layout, checked in a throwaway root.
///
/// `make install BUILT_BIN=…` installs the binaries this test run built (no
/// release build: it takes minutes), through the same Makefile target the
/// package uses. The `.deb` itself is built and checked only with
/// `SWEEPER_PACKAGING_TESTS=1`, because that needs a release build with the
/// Swift runtime linked statically.
@Suite(.serialized) struct InstallTests {
    /// Files every install holds, relative to PREFIX.
    static let layout = [
        "bin/sweeper", "bin/sweeperd",
        "share/man/man1/sweeper.1.gz", "share/man/man1/sweeperd.1.gz", "share/man/man7/sweeper-protocol.7.gz",
        "lib/systemd/user/sweeperd.service",
        "share/bash-completion/completions/sweeper", "share/bash-completion/completions/sweeperd",
        "share/zsh/vendor-completions/_sweeper", "share/zsh/vendor-completions/_sweeperd",
        "share/fish/vendor_completions.d/sweeper.fish", "share/fish/vendor_completions.d/sweeperd.fish",
    ]

    static func makeInstall(prefix: String, destdir: String) throws {
        let make = try #require(systemTool("make"), "make is not installed")
        let outcome = try runProcess([
            make, "-C", repositoryRoot, "install", "BUILT_BIN=\(productsDirectory)", "DESTDIR=\(destdir)", "PREFIX=\(prefix)",
        ])
        #expect(outcome.status == 0, "make install failed:\n\(outcome.stdout)\(outcome.stderr)")
    }

    @Test func makeInstallLaysOutAWorkingInstallation() throws {
        let root = try makeTemporaryDirectory("install")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try Self.makeInstall(prefix: "/usr", destdir: root)
        let usr = root + "/usr"
        for file in Self.layout {
            #expect(FileManager.default.fileExists(atPath: "\(usr)/\(file)"), "\(file) was not installed")
        }
        try checkInstalledPrograms(bin: usr + "/bin")
        try checkSupportFiles(usr: usr, bindir: "/usr/bin")
        try verifyUnit(root: root, usr: usr)
    }

    /// Another prefix moves everything, and the unit starts the sweeperd installed there.
    @Test func prefixAndDestdirAreHonoured() throws {
        let root = try makeTemporaryDirectory("install-local")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try Self.makeInstall(prefix: "/usr/local", destdir: root)
        for file in Self.layout {
            #expect(FileManager.default.fileExists(atPath: "\(root)/usr/local/\(file)"), "\(file) is not under PREFIX")
        }
        #expect(!FileManager.default.fileExists(atPath: root + "/usr/bin"))
        let unit = try String(contentsOfFile: root + "/usr/local/lib/systemd/user/sweeperd.service", encoding: .utf8)
        #expect(unit.contains("\nExecStart=/usr/local/bin/sweeperd\n"))
    }

    /// The whole package: `Packaging/build-deb.sh`, unpacked with `dpkg -x`.
    @Test(
        .enabled(if: ProcessInfo.processInfo.environment["SWEEPER_PACKAGING_TESTS"] == "1", "set SWEEPER_PACKAGING_TESTS=1"),
        .timeLimit(.minutes(30)))
    func debianPackageInstallsAndRuns() throws {
        let out = try makeTemporaryDirectory("deb")
        defer { try? FileManager.default.removeItem(atPath: out) }
        var environment = ProcessInfo.processInfo.environment
        environment["SWEEPER_DEB_OUT"] = out
        let build = try runProcess(["/bin/bash", repositoryRoot + "/Packaging/build-deb.sh"], environment: environment)
        try #require(build.status == 0, "build-deb.sh failed:\n\(build.stderr.suffix(4000))")
        let deb = try #require(build.stdout.split(separator: "\n").last.map(String.init))
        #expect(deb.hasPrefix(out + "/sweeper_") && deb.hasSuffix(".deb"))

        let root = out + "/root"
        let unpack = try runProcess(["/usr/bin/dpkg-deb", "-x", deb, root])
        try #require(unpack.status == 0, "dpkg-deb -x: \(unpack.stderr)")
        for file in Self.layout {
            #expect(FileManager.default.fileExists(atPath: "\(root)/usr/\(file)"), "\(file) is not in the package")
        }
        for file in ["copyright", "changelog.Debian.gz"] {
            #expect(FileManager.default.fileExists(atPath: "\(root)/usr/share/doc/sweeper/\(file)"))
        }
        try checkInstalledPrograms(bin: root + "/usr/bin")
        try checkSupportFiles(usr: root + "/usr", bindir: "/usr/bin")
        try verifyUnit(root: root, usr: root + "/usr")

        // Depends: Debian libraries only; the Swift runtime is inside the binaries.
        let depends = try runProcess(["/usr/bin/dpkg-deb", "-f", deb, "Depends"]).stdout
        for library in ["libavahi-client3", "libsodium23", "libsqlite3-0", "libc6"] {
            #expect(depends.contains(library), "Depends lacks \(library): \(depends)")
        }
        // Packed relative relocations need the loader of glibc 2.36.
        #expect(depends.contains("libc6 (>= 2.36)"), "Depends: \(depends)")
        try checkHotFunctionsPlacedTogether(program: repositoryRoot + "/.build-pkg/release/sweeper")
        for binary in ["sweeper"] {
            let dynamic = try runProcess(["/usr/bin/objdump", "-p", "\(root)/usr/bin/\(binary)"]).stdout
            #expect(!dynamic.contains("libswift"), "\(binary) links a shared Swift runtime")
            #expect(!dynamic.contains("libFoundation"), "\(binary) links a shared Foundation")
            #expect(!dynamic.contains("RUNPATH") && !dynamic.contains("RPATH"), "\(binary) has a run path")
            // FoundationEssentials only: ICU's data (about 30 MB, named `icudtNNl`
            // inside) comes with full Foundation, which nothing in the program needs.
            let program = try Data(contentsOf: URL(fileURLWithPath: "\(root)/usr/bin/\(binary)"))
            #expect(program.count > 1_000_000 && program.range(of: Data("icudt".utf8)) == nil, "\(binary) carries ICU's data")
        }
        if let lintian = systemTool("lintian") {
            let report = try runProcess([lintian, deb])
            let errors = report.stdout.split(separator: "\n").filter { $0.hasPrefix("E:") }
            #expect(errors.isEmpty, "lintian errors:\n\(errors.joined(separator: "\n"))")
        }
    }

    /// The functions of `Packaging/hot-functions.txt` sit together at the
    /// start of the program's code (the Makefile's link order), and the list
    /// still names the program's functions.
    private func checkHotFunctionsPlacedTogether(program: String) throws {
        let listed = try String(contentsOfFile: repositoryRoot + "/Packaging/hot-functions.txt", encoding: .utf8)
            .split(separator: "\n").map(String.init)
        let symbols = try runProcess(["/usr/bin/nm", "--defined-only", program])
        try #require(symbols.status == 0, "nm: \(symbols.stderr)")
        var address: [String: UInt64] = [:]
        for line in symbols.stdout.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 3, let a = UInt64(parts[0], radix: 16) { address[String(parts[2])] = address[String(parts[2])] ?? a }
        }
        let placed = listed.compactMap { address[$0] }
        #expect(placed.count * 10 > listed.count * 8, "\(placed.count) of \(listed.count) listed functions are in the program")
        let sections = try runProcess(["/usr/bin/readelf", "-SW", program]).stdout
        let text = try #require(sections.split(separator: "\n").first { $0.contains(" .text ") }?.split(separator: " ").map(String.init))
        let i = try #require(text.firstIndex(of: ".text"))
        let start = try #require(UInt64(text[i + 2], radix: 16)), size = try #require(UInt64(text[i + 4], radix: 16))
        let end = try #require(placed.max())
        // Spread over the code as compiled, they would reach its end.
        #expect(end - start < size * 7 / 10, "the listed functions reach \(end - start) bytes into \(size) of code")
    }

    // MARK: Checks shared by the routes

    /// The installed programs run from where they were put.
    private func checkInstalledPrograms(bin: String) throws {
        // One program under two names: sweeperd is a link to sweeper, which is the daemon when called so.
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: bin + "/sweeperd")) == "sweeper", "sweeperd is not a link to sweeper")
        let version = try runProcess([bin + "/sweeper", "--version"])
        #expect(version.status == 0)
        let expected = try runProcess([builtProgram("sweeper"), "--version"]).stdout
        #expect(version.stdout == expected && !expected.isEmpty, "installed sweeper says \(version.stdout)")
        // The release, both protocols and the commit built from: what a bug report needs to say.
        #expect(
            expected.range(
                of: #"^\d+\.\d+\.\d+ \(peer protocol \d+, control protocol \d+, commit ([0-9a-f]{12}(\+changes)?|unknown)\)\n$"#,
                options: .regularExpression) != nil, "\(expected)")
        // This tree is a git checkout: the commit is its HEAD's.
        let head = try runProcess(["/usr/bin/git", "-C", repositoryRoot, "rev-parse", "--short=12", "HEAD"]).stdout
        #expect(expected.contains("commit " + head.trimmingCharacters(in: .whitespacesAndNewlines)), "\(expected) is not of \(head)")
        let help = try runProcess([bin + "/sweeper", "--help"])
        #expect(help.status == 0 && help.stdout.contains("USAGE: sweeper") && help.stdout.contains("play"))
        let daemonHelp = try runProcess([bin + "/sweeperd", "--help"])
        #expect(daemonHelp.status == 0 && daemonHelp.stdout.contains("USAGE: sweeperd") && daemonHelp.stdout.contains("--state-dir"))
        let daemonVersion = try runProcess([bin + "/sweeperd", "--version"])
        #expect(daemonVersion.status == 0 && daemonVersion.stdout == expected)
        // And it does real work: an offline board, no daemon needed.
        let board = try runProcess([bin + "/sweeper", "board", "generate", "--preset", "beginner", "--seed", "7"])
        #expect(board.status == 0 && board.stdout.hasPrefix("9 9 "))
    }

    /// Man pages are the sources, gzipped; completions come from the programs; the unit runs the installed daemon.
    private func checkSupportFiles(usr: String, bindir: String) throws {
        for (page, section) in [("sweeper", 1), ("sweeperd", 1), ("sweeper-protocol", 7)] {
            let unpacked = try runProcess(["/bin/gzip", "-dc", "\(usr)/share/man/man\(section)/\(page).\(section).gz"])
            let source = try String(contentsOfFile: "\(repositoryRoot)/Man/\(page).\(section)", encoding: .utf8)
            #expect(unpacked.status == 0 && unpacked.stdout == source, "\(page).\(section).gz is not Man/\(page).\(section)")
        }
        for program in ["sweeper", "sweeperd"] {
            let bash = try String(contentsOfFile: "\(usr)/share/bash-completion/completions/\(program)", encoding: .utf8)
            #expect(!bash.hasPrefix("#!"), "a bash completion is sourced, not run")
            #expect(bash.contains("complete ") && bash.contains(program))
            let syntax = try runProcess(["/bin/bash", "-n", "\(usr)/share/bash-completion/completions/\(program)"])
            #expect(syntax.status == 0, "bash -n: \(syntax.stderr)")
            let zsh = try String(contentsOfFile: "\(usr)/share/zsh/vendor-completions/_\(program)", encoding: .utf8)
            #expect(zsh.hasPrefix("#compdef \(program)"))
            let fish = try String(contentsOfFile: "\(usr)/share/fish/vendor_completions.d/\(program).fish", encoding: .utf8)
            #expect(fish.contains("complete -c '\(program)'"))
        }
        let sweeperBash = try String(contentsOfFile: "\(usr)/share/bash-completion/completions/sweeper", encoding: .utf8)
        for word in ["play", "invite", "--no-guess", "--socket"] {
            #expect(sweeperBash.contains(word), "the bash completion does not know \(word)")
        }
        let unit = try String(contentsOfFile: "\(usr)/lib/systemd/user/sweeperd.service", encoding: .utf8)
        #expect(unit.contains("\nExecStart=\(bindir)/sweeperd\n"))
    }

    /// `systemd-analyze verify --user` on the installed unit, pointed at the
    /// installed binary and pages (it checks both exist), when systemd is here.
    private func verifyUnit(root: String, usr: String) throws {
        guard let analyze = systemTool("systemd-analyze") else { return }
        let dir = try makeTemporaryDirectory("unit")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let runtime = dir + "/runtime"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let unit = try String(contentsOfFile: "\(usr)/lib/systemd/user/sweeperd.service", encoding: .utf8)
            .replacingOccurrences(of: "\nExecStart=/usr/bin/sweeperd\n", with: "\nExecStart=\(usr)/bin/sweeperd\n")
        try unit.write(toFile: dir + "/sweeperd.service", atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = runtime
        environment["MANPATH"] = usr + "/share/man"
        let outcome = try runProcess([analyze, "verify", "--user", dir + "/sweeperd.service"], environment: environment)
        #expect(outcome.status == 0 && outcome.stderr.isEmpty, "systemd-analyze verify:\n\(outcome.stdout)\(outcome.stderr)")
    }
}
