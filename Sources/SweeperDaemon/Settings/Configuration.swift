import FoundationEssentials
import Logging
import SweeperControl
import SweeperConventions
import SweeperNet

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Everything `sweeperd` is told: by flags, by the config file, by XDG defaults.
public struct DaemonSettings: Equatable, Sendable {
    /// Where the database lives.
    public var stateDirectory: String
    /// The control socket's path.
    public var socketPath: String
    /// Addresses to listen on for peers (`host:port`).
    public var listen: [String]
    /// Static peers to dial (`host:port`).
    public var peers: [String]
    /// The player's name.
    public var name: String
    /// Whether to publish and browse with mDNS.
    public var mdns: Bool
    /// The log level.
    public var logLevel: Logger.Level
    /// This device's defaults for new games (`new_*` in the config file):
    /// what a `new` request leaves out is taken from here. Not synced.
    public var newGame: Commands.New.Arguments
    /// Which games this device syncs (`sync` in the config file), until
    /// `sweeper sync` chooses at run time.
    public var sync: SyncMode
    /// The loopback port of the web board (`web_port`; 0: any free port;
    /// nil: the default port).
    public var webPort: Int?
    /// Whether the web board is served to the home network from the start
    /// (`web_lan`), until `sweeper web --lan` or `--no-lan` chooses.
    public var webLAN: Bool = false
    /// The home network's port of the web board (`web_lan_port`; nil: the default).
    public var webLANPort: Int?

    /// Creates settings.
    public init(
        stateDirectory: String, socketPath: String, listen: [String], peers: [String], name: String, mdns: Bool,
        logLevel: Logger.Level, newGame: Commands.New.Arguments = .init(), sync: SyncMode = .all, webPort: Int? = nil
    ) {
        self.webPort = webPort
        self.newGame = newGame
        self.sync = sync
        self.stateDirectory = stateDirectory
        self.socketPath = socketPath
        self.listen = listen
        self.peers = peers
        self.name = name
        self.mdns = mdns
        self.logLevel = logLevel
    }
}

/// Settings given on the command line; `nil` or empty means "not given".
public struct DaemonOverrides: Equatable, Sendable {
    /// `--state-dir`.
    public var stateDirectory: String?
    /// `--socket`.
    public var socketPath: String?
    /// `--listen`, repeatable.
    public var listen: [String] = []
    /// `--peer`, repeatable.
    public var peers: [String] = []
    /// `--name`.
    public var name: String?
    /// `--no-mdns`.
    public var noMDNS = false
    /// `--log-level`.
    public var logLevel: String?
    /// `--config`: a config file instead of the XDG one.
    public var configFile: String?
    /// `--web-port`.
    public var webPort: Int?
    /// `--web-lan-port`.
    public var webLANPort: Int?

    /// Creates overrides.
    public init() {}
}

/// A configuration problem, with the file and line when it comes from a file.
public struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file, if any.
    public var file: String?
    /// The 1-based line, if any.
    public var line: Int?
    /// What is wrong.
    public var message: String

    /// Creates an error.
    public init(file: String? = nil, line: Int? = nil, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String {
        switch (file, line) {
        case let (file?, line?): "\(file):\(line): \(message)"
        case let (file?, nil): "\(file): \(message)"
        default: message
        }
    }
}

/// A value of the TOML subset the config file uses.
public enum ConfigValue: Equatable, Sendable {
    /// `"text"` or `'text'`.
    case string(String)
    /// `true` / `false`.
    case bool(Bool)
    /// An integer.
    case integer(Int)
    /// `["a", "b"]` (strings only).
    case array([String])
}

/// A parser for the TOML subset of `config.toml`: `key = value` lines, `#`
/// comments, blank lines; values are basic or literal strings, integers,
/// booleans and one-line arrays of strings. Tables are not used.
public enum ConfigFileParser {
    /// Parses `text`; errors name the line.
    public static func parse(_ text: String, file: String? = nil) throws(ConfigurationError) -> [(key: String, value: ConfigValue, line: Int)] {
        var out: [(key: String, value: ConfigValue, line: Int)] = []
        var seen: Set<String> = []
        for (offset, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let lineNumber = offset + 1
            func fail(_ message: String) -> ConfigurationError {
                ConfigurationError(file: file, line: lineNumber, message: message)
            }
            var scanner = Scanner(Array(raw.unicodeScalars))
            scanner.skipSpaces()
            if scanner.atEnd || scanner.peek == "#" { continue }
            if scanner.peek == "[" { throw fail("tables ([section]) are not used in this file; write key = value lines") }
            let key = scanner.readKey()
            guard !key.isEmpty else { throw fail("expected a key (letters, digits, _ or -)") }
            scanner.skipSpaces()
            guard scanner.peek == "=" else { throw fail("expected '=' after '\(key)'") }
            scanner.advance()
            scanner.skipSpaces()
            let value: ConfigValue
            do throws(ScanError) {
                value = try scanner.readValue()
            } catch {
                throw fail(error.message)
            }
            scanner.skipSpaces()
            if !scanner.atEnd && scanner.peek != "#" { throw fail("unexpected text after the value of '\(key)'") }
            guard seen.insert(key).inserted else { throw fail("'\(key)' is set twice") }
            out.append((key, value, lineNumber))
        }
        return out
    }

    struct ScanError: Error {
        var message: String
    }

    struct Scanner {
        var chars: [Unicode.Scalar]
        var i = 0
        init(_ chars: [Unicode.Scalar]) {
            self.chars = chars
            if chars.last == "\r" { self.chars.removeLast() }
        }
        var atEnd: Bool { i >= chars.count }
        var peek: Unicode.Scalar? { atEnd ? nil : chars[i] }
        mutating func advance() { i += 1 }
        mutating func skipSpaces() { while let c = peek, c == " " || c == "\t" { i += 1 } }
        mutating func readKey() -> String {
            var s = ""
            while let c = peek, c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "_" || c == "-" {
                s.unicodeScalars.append(c)
                i += 1
            }
            return s
        }
        mutating func readString() throws(ScanError) -> String {
            guard let quote = peek, quote == "\"" || quote == "'" else { throw ScanError(message: "expected a string") }
            i += 1
            var s = ""
            while let c = peek {
                i += 1
                if c == quote { return s }
                if c == "\\" && quote == "\"" {
                    guard let e = peek else { break }
                    i += 1
                    switch e {
                    case "\"": s += "\""
                    case "\\": s += "\\"
                    case "n": s += "\n"
                    case "t": s += "\t"
                    default: throw ScanError(message: "unknown escape '\\\(e)' in a string")
                    }
                } else {
                    s.unicodeScalars.append(c)
                }
            }
            throw ScanError(message: "unterminated string")
        }
        mutating func readValue() throws(ScanError) -> ConfigValue {
            guard let c = peek else { throw ScanError(message: "missing value") }
            if c == "\"" || c == "'" { return .string(try readString()) }
            if c == "[" {
                i += 1
                var items: [String] = []
                while true {
                    skipSpaces()
                    if peek == "]" {
                        i += 1
                        return .array(items)
                    }
                    items.append(try readString())
                    skipSpaces()
                    if peek == "," {
                        i += 1
                    } else if peek != "]" {
                        throw ScanError(message: "expected ',' or ']' in an array (arrays hold strings, on one line)")
                    }
                }
            }
            var word = ""
            while let c = peek, c != " " && c != "\t" && c != "#" {
                word.unicodeScalars.append(c)
                i += 1
            }
            if word == "true" { return .bool(true) }
            if word == "false" { return .bool(false) }
            if let n = Int(word) { return .integer(n) }
            throw ScanError(message: "cannot read the value '\(word)' (strings need quotes)")
        }
    }
}

extension DaemonSettings {
    /// The config file's keys.
    public static let configKeys = [
        "state_dir", "socket", "listen", "peers", "name", "mdns", "log_level",
        "new_preset", "new_width", "new_height", "new_mines", "new_no_guess", "new_question_marks", "sync",
        "web_port", "web_lan", "web_lan_port",
    ]

    /// Resolves settings: flags win over the config file, which wins over XDG defaults.
    public static func resolve(
        overrides: DaemonOverrides, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) -> DaemonSettings {
        let paths = SweeperPaths(environment: environment)
        let configPath = overrides.configFile ?? paths.configFile
        var file: [String: (ConfigValue, Int)] = [:]
        if FileManager.default.fileExists(atPath: configPath) {
            // Read to its end rather than by its size, so that `/dev/null`
            // and pipes read as what they hold.
            let bytes: [UInt8]
            do {
                bytes = try FileDescriptorReader.readAll(path: configPath, limit: 1 << 20)
            } catch {
                throw ConfigurationError(file: configPath, message: error.description)
            }
            guard bytes.count <= 1 << 20 else {
                throw ConfigurationError(file: configPath, message: "is over 1 MiB: not a configuration file")
            }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw ConfigurationError(file: configPath, message: "is not UTF-8 text")
            }
            for entry in try ConfigFileParser.parse(text, file: configPath) {
                guard configKeys.contains(entry.key) else {
                    throw ConfigurationError(
                        file: configPath, line: entry.line,
                        message: "unknown key '\(entry.key)' (known: \(configKeys.joined(separator: ", ")))")
                }
                file[entry.key] = (entry.value, entry.line)
            }
        } else if overrides.configFile != nil {
            throw ConfigurationError(file: configPath, message: "no such file")
        }
        func string(_ key: String) throws(ConfigurationError) -> String? {
            guard let (value, line) = file[key] else { return nil }
            guard case let .string(s) = value else {
                throw ConfigurationError(file: configPath, line: line, message: "'\(key)' must be a string")
            }
            return s
        }
        func list(_ key: String) throws(ConfigurationError) -> [String] {
            guard let (value, line) = file[key] else { return [] }
            switch value {
            case let .array(a): return a
            case let .string(s): return [s]
            default: throw ConfigurationError(file: configPath, line: line, message: "'\(key)' must be an array of strings")
            }
        }
        func bool(_ key: String) throws(ConfigurationError) -> Bool? {
            guard let (value, line) = file[key] else { return nil }
            guard case let .bool(b) = value else {
                throw ConfigurationError(file: configPath, line: line, message: "'\(key)' must be true or false")
            }
            return b
        }
        func integer(_ key: String) throws(ConfigurationError) -> Int? {
            guard let (value, line) = file[key] else { return nil }
            guard case let .integer(n) = value else {
                throw ConfigurationError(file: configPath, line: line, message: "'\(key)' must be a whole number")
            }
            return n
        }
        var mdns = try bool("mdns") ?? true
        if overrides.noMDNS { mdns = false }

        let fileLevel = try string("log_level")
        let fileName = try string("name")
        let fileState = try string("state_dir")
        let fileSocket = try string("socket")
        // A value from the file is named by its file and line; one from the command line is not.
        func origin(_ key: String, given: Bool) -> (file: String?, line: Int?) {
            given ? (nil, nil) : (configPath, file[key]?.1)
        }
        let levelText = overrides.logLevel ?? fileLevel ?? "info"
        guard let level = Logger.Level(rawValue: levelText.lowercased()) else {
            let at = origin("log_level", given: overrides.logLevel != nil)
            throw ConfigurationError(
                file: at.file, line: at.line,
                message: "unknown log level '\(levelText)' (one of: \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        let listen = overrides.listen.isEmpty ? try list("listen") : overrides.listen
        let peers = overrides.peers.isEmpty ? try list("peers") : overrides.peers
        for (key, addresses, given) in [("listen", listen, !overrides.listen.isEmpty), ("peers", peers, !overrides.peers.isEmpty)] {
            for address in addresses where HostPort(address) == nil {
                let at = origin(key, given: given)
                throw ConfigurationError(file: at.file, line: at.line, message: "'\(key)': '\(address)' is not HOST:PORT (IPv6 as [addr]:port)")
            }
        }
        let name = overrides.name ?? fileName ?? Self.loginName(environment)
        // Control characters never; format characters (a joiner in an emoji or a Persian name) are left out where names show.
        guard !name.isEmpty, name.utf8.count <= PlayerName.byteLimit, !PlayerName.hasControlCharacters(name) else {
            let at = origin("name", given: overrides.name != nil || fileName == nil)
            throw ConfigurationError(
                file: at.file, line: at.line,
                message: "the player name must be 1 to \(PlayerName.byteLimit) bytes of UTF-8, without control characters")
        }
        let newGame = Commands.New.Arguments(
            preset: try string("new_preset"), width: try integer("new_width"), height: try integer("new_height"),
            mines: try integer("new_mines"), noGuess: try bool("new_no_guess"), questionMarks: try bool("new_question_marks"))
        do {
            _ = try newGame.game(defaults: .init())
        } catch {
            throw ConfigurationError(file: configPath, message: "the new-game defaults (new_*) are wrong: \((error as? ControlError)?.message ?? "\(error)")")
        }
        let syncText = try string("sync") ?? SyncMode.all.rawValue
        guard let sync = SyncMode(rawValue: syncText) else {
            throw ConfigurationError(
                file: configPath, line: file["sync"]?.1,
                message: "'sync' must be one of: \(SyncMode.allCases.map(\.rawValue).joined(separator: ", ")) (not '\(syncText)')")
        }
        let fileWebPort = try integer("web_port")
        let webPort = overrides.webPort ?? fileWebPort
        let fileLANPort = try integer("web_lan_port")
        let lanPort = overrides.webLANPort ?? fileLANPort
        for (key, port) in [("web_port", webPort), ("web_lan_port", lanPort)] {
            if let port, !(0...65535).contains(port) {
                let at = origin(key, given: (key == "web_port" ? overrides.webPort : overrides.webLANPort) != nil)
                throw ConfigurationError(file: at.file, line: at.line, message: "'\(key)' must be 0 (any free port) to 65535, not \(port)")
            }
        }
        var settings = DaemonSettings(
            stateDirectory: overrides.stateDirectory ?? fileState ?? paths.stateDirectory,
            socketPath: overrides.socketPath ?? fileSocket ?? paths.socket,
            listen: listen, peers: peers, name: name, mdns: mdns, logLevel: level, newGame: newGame, sync: sync, webPort: webPort)
        settings.webLAN = try bool("web_lan") ?? false
        settings.webLANPort = lanPort
        return settings
    }

    /// The user's login name: `$USER`, `$LOGNAME`, the password database, or "player".
    static func loginName(_ environment: [String: String]) -> String {
        if let u = environment["USER"], !u.isEmpty { return u }
        if let u = environment["LOGNAME"], !u.isEmpty { return u }
        if let pw = getpwuid(getuid()), let n = pw.pointee.pw_name { return String(cString: n) }
        return "player"
    }
}

/// A parsed `host:port` (IPv6 hosts in brackets).
public struct HostPort: Equatable, Sendable, CustomStringConvertible {
    /// The host name or address.
    public var host: String
    /// The port.
    public var port: Int

    /// Parses `host:port` or `[v6]:port`; nil when malformed.
    public init?(_ text: String) {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":"), let p = Int(rest.dropFirst()) else { return nil }
            port = p
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = String(text[..<colon])
            guard let p = Int(text[text.index(after: colon)...]) else { return nil }
            port = p
        }
        guard !host.isEmpty, (0...65535).contains(port) else { return nil }
    }

    public var description: String { hostPortText(host: host, port: port) }
}
