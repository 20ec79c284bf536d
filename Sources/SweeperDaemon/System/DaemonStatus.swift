import ServiceLifecycle
import Synchronization

/// The daemon's one-line status for systemd (`STATUS=serving; 2 peers, 5
/// games; mdns running`): the game service tells it the game count as
/// games are added, ``StatusService`` the peers and mDNS every few
/// seconds, and a changed line is sent at once.
final class DaemonStatus: Sendable {
    private struct Figures: Equatable {
        var peers = 0
        var games = 0
        var mdns = "disabled"
        var sent: String?
    }

    private let notifier: SystemdNotifier
    private let figures = Mutex(Figures())

    /// A status line sent through `notifier` (nothing is sent without a notify socket).
    init(notifier: SystemdNotifier) {
        self.notifier = notifier
    }

    /// The status line now.
    var line: String {
        figures.withLock { Self.line($0) }
    }

    private static func line(_ f: Figures) -> String {
        "STATUS=serving; \(f.peers) peers, \(f.games) games; mdns \(f.mdns)"
    }

    /// Notes the number of games held.
    func gamesChanged(to count: Int) {
        update { $0.games = count }
    }

    /// Notes the peers linked and the state of mDNS.
    func peersChanged(to count: Int, mdns: String) {
        update {
            $0.peers = count
            $0.mdns = mdns
        }
    }

    private func update(_ change: (inout Figures) -> Void) {
        let toSend: String? = figures.withLock { f in
            change(&f)
            let line = Self.line(f)
            guard line != f.sent else { return nil }
            f.sent = line
            return line
        }
        if let toSend { notifier.notify(toSend) }
    }
}

/// Sends `WATCHDOG=1` at half of `$WATCHDOG_USEC` until graceful shutdown.
struct WatchdogService: Service {
    let notifier: SystemdNotifier
    let interval: Duration

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                notifier.notify("WATCHDOG=1")
                try await Task.sleep(for: interval)
            }
        }
    }
}

/// Keeps the status line's peer count and mDNS state current, as
/// `peers` reads them (the number of links up, and mDNS's state).
struct StatusService: Service {
    let status: DaemonStatus
    let peers: @Sendable () async -> (linked: Int, mdns: String)

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let now = await peers()
                status.peersChanged(to: now.linked, mdns: now.mdns)
                try await Task.sleep(for: .seconds(5))
            }
        }
    }
}
