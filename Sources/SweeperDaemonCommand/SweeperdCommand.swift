import ArgumentParser
import FoundationEssentials
import SweeperControl
import SweeperConventions
import SweeperDaemon
import SweeperMessages

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `sweeperd`: the Sweeper daemon's command line. Parses its arguments and
/// runs `SweeperDaemon`. The one installed program runs it when called by
/// the name `sweeperd` (``isCalledAsDaemon``); a development build also has
/// a `sweeperd` executable of its own that runs only this.
public struct SweeperdCommand: AsyncParsableCommand {
    /// The name that makes the program the daemon.
    public static let programName = "sweeperd"

    /// Whether the program was called by the daemon's name (its first
    /// argument's last path component): `/usr/bin/sweeperd`, a link to the
    /// one program, is the daemon.
    public static var isCalledAsDaemon: Bool {
        CommandLine.arguments.first.map { $0.split(separator: "/").last.map(String.init) == programName } ?? false
    }

    public static let configuration = CommandConfiguration(
        commandName: programName,
        abstract: "The Sweeper daemon: keeps games, serves the sweeper CLI, syncs with the family's daemons.",
        discussion:
            "Settings also come from $XDG_CONFIG_HOME/sweeper/config.toml (keys: state_dir, socket, listen, peers, name, mdns, log_level, web_port, …); flags win.",
        version: versionText)

    /// What `--version` prints, for both programs: the release, the
    /// versions of the two protocols it speaks (a peer speaks with other
    /// daemons, a client with this one) and the commit it was built from.
    public static let versionText =
        "\(SweeperVersion.current) (peer protocol \(PeerCapabilities.currentVersion), control protocol \(ControlProtocol.version), commit \(BuildCommit.id))"

    @Option(name: .customLong("state-dir"), help: "Where games are kept (default $XDG_STATE_HOME/sweeper).")
    var stateDirectory: String?

    @Option(name: .customLong("socket"), help: "The control socket (default $XDG_RUNTIME_DIR/sweeper/control.sock).")
    var socket: String?

    @Option(name: .customLong("listen"), help: "HOST:PORT to accept peers on (repeatable).")
    var listen: [String] = []

    @Option(name: .customLong("peer"), help: "HOST:PORT of a peer to dial (repeatable).")
    var peer: [String] = []

    @Option(help: "The player's name (default: the login name).")
    var name: String?

    @Flag(name: .customLong("no-mdns"), help: "Neither publish nor browse with mDNS.")
    var noMDNS = false

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String?

    @Option(name: .customLong("config"), help: "A config file instead of $XDG_CONFIG_HOME/sweeper/config.toml.")
    var configFile: String?

    @Option(
        name: .customLong("web-port"),
        help: "The loopback port of the web board, 0 for any free port (default 8391).")
    var webPort: Int?

    @Option(
        name: .customLong("web-lan-port"),
        help: "The port of the web board on the home network, when served there (sweeper web --lan; default 8392).")
    var webLANPort: Int?

    /// The exit status of a configuration that cannot be used (EX_CONFIG):
    /// the unit's `RestartPreventExitStatus=` names it, since starting
    /// again would fail again.
    public static let configurationExitStatus: Int32 = 78

    /// An empty command, as ArgumentParser makes it before parsing.
    public init() {}

    /// Runs the daemon until it is told to stop.
    public func run() async throws {
        var overrides = DaemonOverrides()
        overrides.stateDirectory = stateDirectory
        overrides.socketPath = socket
        overrides.listen = listen
        overrides.peers = peer
        overrides.name = name
        overrides.noMDNS = noMDNS
        overrides.logLevel = logLevel
        overrides.configFile = configFile
        overrides.webPort = webPort
        overrides.webLANPort = webLANPort
        let settings: DaemonSettings
        do {
            settings = try DaemonSettings.resolve(overrides: overrides)
        } catch {
            // A value given on the command line: a usage error, with the usage.
            guard error.file != nil else { throw ValidationError("\(error)") }
            // The file and line say what to fix; the usage would only bury it.
            FileDescriptorWriter.writeAll(Array("sweeperd: \(error)\n".utf8), to: STDERR_FILENO)
            throw ExitCode(Self.configurationExitStatus)
        }
        Daemon.bootstrapLogging(level: settings.logLevel)
        let status = await Daemon.run(settings: settings)
        if status != 0 { throw ExitCode(status) }
    }
}
