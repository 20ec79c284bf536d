import ArgumentParser
import Foundation
import SweeperConventions
import SweeperDaemonCommand

/// `sweeper`: the Sweeper client. Each subcommand parses its arguments and
/// calls into the libraries.
@main
struct SweeperCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweeper",
        abstract: "Co-operative Minesweeper for a family on one network.",
        version: SweeperVersion.current,
        subcommands: [BoardCommand.self] + daemonCommands + [PlayCommand.self, DailyCommand.self, ReplayCommand.self]
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
            Foundation.exit(2)
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

    private static func exitWithUsageCode(_ error: any Error) -> Never {
        if exitCode(for: error) == .validationFailure {
            Output.write((fullMessage(for: error) + "\n").utf8, to: STDERR_FILENO)
            Foundation.exit(2)
        }
        exit(withError: error)
    }
}
