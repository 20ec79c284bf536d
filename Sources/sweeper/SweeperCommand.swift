import ArgumentParser
import FoundationEssentials
import SweeperConventions
import SweeperDaemonCommand

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `sweeper`: the Sweeper client. Each subcommand parses its arguments and
/// calls into the libraries.
@main
struct SweeperCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweeper",
        abstract: "Co-operative Minesweeper for a family on one network.",
        version: SweeperdCommand.versionText,
        subcommands: [BoardCommand.self] + daemonCommands + [RestoreCommand.self, PlayCommand.self, DailyCommand.self, ReplayCommand.self]
    )

    @OptionGroup var options: ClientOptions  // `sweeper --socket PATH --json COMMAND`; daemon commands read the same group

    /// Runs the command line, with usage errors exiting 2 (not
    /// ArgumentParser's 64) after saying what is allowed.
    static func main() async {
        // One program under two names: called `sweeperd`, it is the daemon.
        if SweeperdCommand.isCalledAsDaemon {
            await SweeperdCommand.main()
            return
        }
        if let refusal = CellTarget.negativeCoordinate(in: Array(CommandLine.arguments.dropFirst())) {
            Output.write("Error: \(refusal)\n".utf8, to: STDERR_FILENO)
            Self.terminate(2)
        }
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exitWithUsageCode(error)
        }
    }

    /// Ends the program with `status` (the C library's `exit`, which the
    /// command's own `exit(withError:)` hides by name).
    private static func terminate(_ status: Int32) -> Never {
        #if canImport(Glibc)
        Glibc.exit(status)
        #else
        Darwin.exit(status)
        #endif
    }

    private static func exitWithUsageCode(_ error: any Error) -> Never {
        if exitCode(for: error) == .validationFailure {
            Output.write((fullMessage(for: error) + "\n").utf8, to: STDERR_FILENO)
            Self.terminate(2)
        }
        exit(withError: error)
    }
}
