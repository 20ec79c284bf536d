import Foundation
import SweeperTestSupport

/// The repository's root directory (this file is Tests/SweeperPackagingTests/Support.swift).
let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

/// A built program beside the test bundle.
func builtProgram(_ name: String) -> String { productsDirectory + "/" + name }

/// The first executable called `name` in the usual system directories, if any.
func systemTool(_ name: String) -> String? {
    for dir in ["/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"] {
        let path = dir + "/" + name
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
}

/// A fresh directory under the temporary directory, removed by the caller.
func makeTemporaryDirectory(_ label: String) throws -> String {
    let path = NSTemporaryDirectory() + "sweeper-\(label)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

// MARK: What the programs say they accept

/// The part of swift-argument-parser's `--experimental-dump-help` JSON that
/// names commands and their arguments.
struct DumpedTool: Decodable {
    var command: DumpedCommand
}

struct DumpedCommand: Decodable {
    var commandName: String
    var arguments: [DumpedArgument]?
    var subcommands: [DumpedCommand]?
}

struct DumpedArgument: Decodable {
    struct Name: Decodable {
        var kind: String
        var name: String
    }
    var kind: String
    var names: [Name]?
    var valueName: String?
    var shouldDisplay: Bool

    /// How each name is spelled on the command line: `--long`, `-s`, `-long`.
    var spellings: [String] {
        (names ?? []).map { $0.kind == "long" ? "--" + $0.name : "-" + $0.name }
    }
}

/// One command of a program, with the words that select it (empty for the root).
struct ProgramCommand {
    var path: [String]
    var command: DumpedCommand
    var hasSubcommands: Bool { !(command.subcommands ?? []).isEmpty }
    /// The spellings of the options and flags shown in its help.
    var optionSpellings: Set<String> {
        Set((command.arguments ?? []).filter { $0.kind != "positional" && $0.shouldDisplay }.flatMap(\.spellings))
    }
    var positionals: [String] {
        (command.arguments ?? []).filter { $0.kind == "positional" && $0.shouldDisplay }.compactMap(\.valueName)
    }
}

/// Runs `program --experimental-dump-help` and lists every command in it.
func dumpCommands(_ program: String) throws -> [ProgramCommand] {
    let outcome = try runProcess([program, "--experimental-dump-help"])
    guard outcome.status == 0 else { throw ProcessError("\(program) --experimental-dump-help exited \(outcome.status): \(outcome.stderr)") }
    let tool = try JSONDecoder().decode(DumpedTool.self, from: Data(outcome.stdout.utf8))
    var all: [ProgramCommand] = []
    func walk(_ command: DumpedCommand, _ path: [String]) {
        all.append(ProgramCommand(path: path, command: command))
        for sub in command.subcommands ?? [] { walk(sub, path + [sub.commandName]) }
    }
    walk(tool.command, [])
    return all
}

// MARK: What a page says

/// An mdoc page split the way the tests need it: the entries of its
/// COMMANDS list (`.It Cm name …` at the list's top level, with everything
/// up to the next such entry), and the rest.
struct ManPage {
    struct Part {
        /// Options written with `Fl`, spelled as on the command line.
        var options: Set<String> = []
        /// Words written with `Ar`.
        var arguments: Set<String> = []
    }

    var source: String
    /// Entries of the COMMANDS section, by command words (`board generate`).
    var commands: [String: Part] = [:]
    /// Everything outside the COMMANDS section's entries.
    var rest = Part()
    /// The names given with `Cm` on `.It` lines anywhere, for command lists.
    var itemCommands: Set<String> = []

    init(path: String) throws {
        source = try String(contentsOfFile: path, encoding: .utf8)
        var section = ""
        var depth = 0
        var current: String?
        for raw in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw)
            guard line.hasPrefix(".") else {
                record(line, into: current)
                continue
            }
            let tokens = line.dropFirst().split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard let macro = tokens.first else { continue }
            switch macro {
            case "Sh":
                section = tokens.dropFirst().joined(separator: " ")
                current = nil
                depth = 0
            case "Bl" where section == "COMMANDS":
                depth += 1
            case "El" where section == "COMMANDS":
                depth -= 1
                if depth == 0 { current = nil }
            case "It":
                for (i, token) in tokens.enumerated() where token == "Cm" && i + 1 < tokens.count {
                    itemCommands.insert(tokens[i + 1])
                }
                if tokens.count > 1, tokens[1] == "Cm" {
                    let words = tokens.dropFirst(2).prefix { $0.first?.isLowercase == true }
                    if section == "COMMANDS" && depth == 1 {
                        current = words.joined(separator: " ")
                        commands[current!, default: Part()] = Part()
                    }
                }
            default: break
            }
            record(line, into: current)
        }
    }

    private mutating func record(_ line: String, into command: String?) {
        let tokens = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map {
            $0.hasPrefix(".") ? String($0.dropFirst()) : String($0)
        }
        var part = command.flatMap { commands[$0] } ?? rest
        for (i, token) in tokens.enumerated() where i + 1 < tokens.count {
            let next = tokens[i + 1]
            if token == "Fl", let first = next.first, first.isLetter || first == "-" {
                part.options.insert("-" + next)
            } else if token == "Ar" {
                // `Ar game x y` names three arguments; a macro or punctuation ends the list.
                for word in tokens[(i + 1)...] {
                    guard let first = word.first, first.isLowercase else { break }
                    part.arguments.insert(word)
                }
            }
        }
        if let command { commands[command] = part } else { rest = part }
    }

    /// Every option the page writes anywhere.
    var allOptions: Set<String> { commands.values.reduce(rest.options) { $0.union($1.options) } }
}
