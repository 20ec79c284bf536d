import Logging

/// Says how a start that replays games goes (a game replays when no
/// snapshot serves it: the first start of a release that keeps them, a
/// start after a player was hosted here, a snapshot that cannot be read):
/// to systemd, which would otherwise stop a start that is not ready within
/// its start timeout (90 s by default) and start it again from the top,
/// and in the log. Each report to systemd asks for ``grace`` more
/// (`EXTEND_TIMEOUT_USEC`) and says how far it is (`STATUS=`).
final class StartReplayReport {
    /// How long systemd waits for the next report, at most.
    static let grace: Duration = .seconds(120)
    /// How often the replay is reported, at most (the first and last reports always go).
    static let interval = 2.0

    private let notifier: SystemdNotifier
    private let clock: any DaemonClock
    private let logger: Logger
    private var last: Double?

    init(notifier: SystemdNotifier, clock: any DaemonClock, logger: Logger) {
        self.notifier = notifier
        self.clock = clock
        self.logger = logger
    }

    /// What systemd is told when `done` of `total` games are replayed.
    static func message(done: Int, total: Int) -> String {
        let micros = Self.grace.components.seconds * 1_000_000
        return "EXTEND_TIMEOUT_USEC=\(micros)\nSTATUS=reading back \(total) game\(total == 1 ? "" : "s") from their moves once: \(done) done"
    }

    /// Reports that `done` of `total` games are replayed.
    func report(done: Int, total: Int) {
        let now = clock.seconds
        if done == 0 { logger.notice("reading back games from their moves once (no snapshot serves them)", metadata: ["games": "\(total)"]) }
        guard done == 0 || done == total || last.map({ now - $0 >= Self.interval }) ?? true else { return }
        last = now
        notifier.notify(Self.message(done: done, total: total))
    }
}
