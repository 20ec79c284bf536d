import ArgumentParser

/// `sweeper board`: offline board tools that need no daemon.
struct BoardCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "board",
        abstract: "Generate and check boards offline (no daemon needed).",
        subcommands: []
    )
}
