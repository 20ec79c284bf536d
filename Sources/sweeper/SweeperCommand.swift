import ArgumentParser

/// `sweeper`: the Sweeper client. Each subcommand parses its arguments and
/// calls into the libraries.
@main
struct SweeperCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweeper",
        abstract: "Co-operative Minesweeper for a family on one network.",
        version: "0.1.0",
        subcommands: [BoardCommand.self]
    )
}
