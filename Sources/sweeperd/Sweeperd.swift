import SweeperDaemonCommand

/// The daemon alone, for development builds and tests; the installed
/// program is `sweeper`, which is the daemon when called `sweeperd`.
@main
enum Sweeperd {
    static func main() async {
        await SweeperdCommand.main()
    }
}
