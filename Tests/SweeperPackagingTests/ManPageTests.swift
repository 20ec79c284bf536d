import Foundation
import SweeperControl
import SweeperDaemon
import SweeperTestSupport
import Testing

/// The manual pages against the programs: every option and command the
/// built `sweeper` and `sweeperd` accept (as their own
/// `--experimental-dump-help` says) is in the page, in the right entry, and
/// the page names no option the programs do not accept.
@Suite struct ManPageTests {
    static let programs = ["sweeper", "sweeperd"]

    @Test(arguments: programs)
    func everyOptionAndCommandIsDocumented(_ program: String) throws {
        let commands = try dumpCommands(builtProgram(program))
        let page = try ManPage(path: "\(repositoryRoot)/Man/\(program).1")
        let root = try #require(commands.first { $0.path.isEmpty })
        #expect(!root.optionSpellings.isEmpty, "the dump lists no options for \(program)")

        for option in root.optionSpellings.sorted() {
            #expect(page.rest.options.contains(option), "\(program)(1) does not document \(option) in SYNOPSIS or OPTIONS")
        }
        // swift-argument-parser adds a `help` command to every program; where it is
        // the only one (sweeperd), it is --help by another name, documented there.
        let onlyHelp = commands.allSatisfy { $0.path.isEmpty || $0.path == ["help"] }
        for command in commands where !command.path.isEmpty && !command.hasSubcommands {
            if onlyHelp {
                #expect(page.source.contains("Cm help"), "\(program)(1) does not mention `\(program) help`")
                continue
            }
            let name = command.path.joined(separator: " ")
            guard let entry = page.commands[name] else {
                Issue.record("\(program)(1) has no COMMANDS entry `.It Cm \(name)`")
                continue
            }
            // Options the root also has (--socket, --json, --help, …) are documented once, under OPTIONS.
            for option in command.optionSpellings.subtracting(root.optionSpellings).sorted() {
                #expect(entry.options.contains(option), "\(program) \(name): \(option) is not in its entry")
            }
            for argument in command.positionals {
                #expect(entry.arguments.contains(argument), "\(program) \(name): argument \(argument) is not in its entry")
            }
        }
    }

    @Test(arguments: programs)
    func pageNamesNoOptionTheProgramRefuses(_ program: String) throws {
        let commands = try dumpCommands(builtProgram(program))
        let page = try ManPage(path: "\(repositoryRoot)/Man/\(program).1")
        let root = try #require(commands.first { $0.path.isEmpty })
        let accepted = commands.reduce(into: Set<String>()) { $0.formUnion($1.optionSpellings) }
        for option in page.rest.options.sorted() {
            #expect(accepted.contains(option), "\(program)(1) names \(option), which no \(program) command accepts")
        }
        let known = Set(commands.map { $0.path.joined(separator: " ") })
        for (name, entry) in page.commands {
            guard let command = commands.first(where: { $0.path.joined(separator: " ") == name }) else {
                Issue.record("\(program)(1) documents a command `\(name)` that \(program) does not have (it has: \(known.sorted()))")
                continue
            }
            for option in entry.options.subtracting(command.optionSpellings.union(root.optionSpellings)).sorted() {
                Issue.record("\(program)(1): the entry of `\(name)` names \(option), which `\(program) \(name)` refuses")
            }
        }
    }

    /// The parser is what the two tests above rely on: a page that lost an
    /// option, or gained one, must show up.
    @Test func theParserSeesEntriesOptionsAndArguments() throws {
        let dir = try makeTemporaryDirectory("manparse")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let text = """
            .Sh SYNOPSIS
            .Nm
            .Op Fl -socket Ar path
            .Sh COMMANDS
            .Bl -tag -width Ds
            .It Cm flag Ar game x y Op Fl -mark Ar mark
            .Bl -tag -width Ds
            .It Fl -mark Ar mark
            .El
            .It Cm board generate Op Fl -count Ar n
            .El
            .Sh ENVIRONMENT
            .It Ev SWEEPER_SOCKET
            As
            .Fl -socket .
            """
        try text.write(toFile: dir + "/t.1", atomically: true, encoding: .utf8)
        let page = try ManPage(path: dir + "/t.1")
        #expect(Set(page.commands.keys) == ["flag", "board generate"])
        #expect(page.commands["flag"]?.options == ["--mark"])
        #expect(page.commands["flag"]?.arguments.isSuperset(of: ["game", "x", "y", "mark"]) == true)
        #expect(page.commands["board generate"]?.options == ["--count"])
        #expect(page.rest.options == ["--socket"])
    }

    /// sweeperd(1) describes every key config.toml may hold: the daemon
    /// refuses any other, so an undocumented one is a key nobody can learn.
    @Test func daemonPageListsEveryConfigKey() throws {
        let page = try String(contentsOfFile: "\(repositoryRoot)/Man/sweeperd.1", encoding: .utf8)
        let items = page.split(separator: "\n").filter { $0.hasPrefix(".It Cm ") }.flatMap {
            $0.dropFirst(7).split(separator: " ").filter { $0 != "Cm" && $0 != "," }.map(String.init)
        }
        #expect(DaemonSettings.configKeys.count >= 17)
        for key in DaemonSettings.configKeys {
            #expect(items.contains(key), "sweeperd(1) has no `.It Cm \(key)` among the config keys")
        }
    }

    /// sweeper-protocol(7) describes every command of the control protocol.
    @Test func protocolPageListsEveryControlCommand() throws {
        let page = try ManPage(path: "\(repositoryRoot)/Man/sweeper-protocol.7")
        for command in Commands.all {
            #expect(page.itemCommands.contains(command), "sweeper-protocol(7) has no `.It Cm \(command)`")
        }
        for fact in ["_sweeper._tcp", "X25519", "secretstream", "membership proof", "SO_PEERCRED", "65536"] {
            #expect(page.source.contains(fact), "sweeper-protocol(7) does not mention \(fact)")
        }
    }

    /// Words of prose are never rendered as options: every option here has
    /// two dashes, so a word shown with one (`-or -every -member`, from an
    /// `Fl` that ran on into the sentence) is a slip of the markup.
    @Test(
        .enabled(if: systemTool("mandoc") != nil, "mandoc is not installed"),
        arguments: ["sweeper.1", "sweeperd.1", "sweeper-protocol.7"])
    func pageRendersNoWordAsAnOption(_ name: String) throws {
        let mandoc = try #require(systemTool("mandoc"))
        let outcome = try runProcess([mandoc, "-Tutf8", "-O", "width=200", "\(repositoryRoot)/Man/\(name)"])
        #expect(outcome.status == 0)
        // Bold and underline come as overstrikes: the letters alone are read.
        let text = String(
            String.UnicodeScalarView(
                outcome.stdout.unicodeScalars.reduce(into: [Unicode.Scalar]()) { out, c in
                    if c == "\u{8}" { _ = out.popLast() } else { out.append(c) }
                }))
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "(" || $0 == "[" })
        // A one-letter option (`-h`) is one; a longer word after one dash is a slip.
        let slips = words.map { $0.trimmingCharacters(in: .punctuationCharacters.subtracting(CharacterSet(charactersIn: "-"))) }.filter { w in
            w.count > 2 && w.first == "-" && w.dropFirst().first.map { $0.isLetter } == true
        }
        #expect(slips.isEmpty, "\(name) renders words as options: \(slips.prefix(10))")
    }

    /// The pages agree with the README on what an invite code holds: a
    /// one-time secret; only a code of an earlier release carries the
    /// circle key, and a page that says so says which.
    @Test func onlyAnOldInviteCodeCarriesTheCircleKey() throws {
        for name in ["sweeper.1", "sweeperd.1", "sweeper-protocol.7"] {
            let source = try ManPage(path: "\(repositoryRoot)/Man/\(name)").source
            let pieces = source.components(separatedBy: "carries the circle key").dropLast()
            for piece in pieces {
                let before = String(piece.suffix(120))
                #expect(before.contains("release"), "\(name) says a code carries the circle key: …\(before)carries the circle key")
            }
        }
    }

    /// `sweeper new --help` says what a chosen seed makes of a game.
    @Test func seedHelpSaysItMakesPractice() throws {
        let help = try runProcess([builtProgram("sweeper"), "new", "--help"])
        #expect(help.stdout.contains("practice"), "\(help.stdout)")
    }

    /// Every page is clean under `mandoc -Tlint` at level warning (style
    /// notes such as "referenced manual not found" depend on the machine).
    @Test(
        .enabled(if: systemTool("mandoc") != nil, "mandoc is not installed"),
        arguments: ["sweeper.1", "sweeperd.1", "sweeper-protocol.7"])
    func pagePassesMandocLint(_ name: String) throws {
        let mandoc = try #require(systemTool("mandoc"))
        let outcome = try runProcess([mandoc, "-Tlint", "-W", "warning", "\(repositoryRoot)/Man/\(name)"])
        #expect(outcome.status == 0, "mandoc -Tlint exited \(outcome.status)")
        #expect(outcome.stdout.isEmpty && outcome.stderr.isEmpty, "mandoc -Tlint on \(name):\n\(outcome.stdout)\(outcome.stderr)")
    }
}
