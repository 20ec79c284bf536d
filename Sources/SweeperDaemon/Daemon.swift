import Foundation
import Logging
import NIOPosix
import ServiceLifecycle
import SweeperControl
import SweeperStore

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

/// Keeps systemd's STATUS line current: peers linked and games held.
struct StatusService: Service {
    let notifier: SystemdNotifier
    let host: GameHost
    let network: PeerNetwork

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            var last = ""
            while !Task.isCancelled {
                let line = "STATUS=serving; \(await network.connectedCount()) peers, \(await host.gameCount) games; mdns \(network.mdnsStatus)"
                if line != last {
                    notifier.notify(line)
                    last = line
                }
                try await Task.sleep(for: .seconds(5))
            }
        }
    }
}

/// `sweeperd` put together: locks, store, engine, control server, systemd
/// notification, all services under one `ServiceGroup`.
public enum Daemon {
    /// Sets up logging to stderr (journald prefixes when stderr is the journal).
    public static func bootstrapLogging(level: Logger.Level) {
        let journal = StderrLogHandler.stderrIsJournal()
        LoggingSystem.bootstrap { label in StderrLogHandler(label: label, level: level, journal: journal) }
    }

    /// Runs the daemon until SIGTERM or SIGINT; returns the exit status.
    /// Startup failures are logged and printed with their reason.
    public static func run(settings: DaemonSettings) async -> Int32 {
        umask(0o077)
        let logger = {
            var l = Logger(label: "sweeperd")
            l.logLevel = settings.logLevel
            return l
        }()
        func refuse(_ message: String) -> Int32 {
            logger.critical("\(message)")
            return 1
        }

        // One daemon per state directory and per socket.
        let stateLock: InstanceLock
        let socketLock: InstanceLock
        do {
            try FileManager.default.createDirectory(
                atPath: settings.stateDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let socketDirectory = (settings.socketPath as NSString).deletingLastPathComponent
            if !FileManager.default.fileExists(atPath: socketDirectory) {
                try FileManager.default.createDirectory(
                    atPath: socketDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
        } catch {
            return refuse("cannot make directories: \(error.localizedDescription)")
        }
        // Said plainly rather than as a lock failure: everything else needs writes too.
        if access(settings.stateDirectory, W_OK) != 0 && errno == EROFS {
            return refuse(
                "the state directory \(settings.stateDirectory) is on a read-only file system; sweeperd keeps its games there and must write them — make it writable again (nothing was changed)")
        }
        do {
            stateLock = try InstanceLock(
                path: settings.stateDirectory + "/sweeperd.lock", resource: "the state directory \(settings.stateDirectory)")
            socketLock = try InstanceLock(path: settings.socketPath + ".lock", resource: "the socket \(settings.socketPath)")
        } catch {
            return refuse("\(error)")
        }
        defer {
            socketLock.release()
            stateLock.release()
        }

        let store: Store
        do {
            store = try Store(directory: settings.stateDirectory)
        } catch {
            return refuse("\(error)")
        }
        defer { store.close() }

        // The daemon's one event loop: the control socket, the peer links,
        // the peer node and the game host all run on its thread, so a move
        // crosses the daemon without waking another thread. Only the store's
        // fsync of a local move blocks it, and the move waits for that anyway.
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { loops.shutdownGracefully { _ in } }
        let loop = loops.next()

        let notifier = SystemdNotifier()
        let events = EventHub()
        let host: GameHost
        do {
            host = try GameHost(store: store, settings: settings, events: events, logger: logger, eventLoop: loop) { games in
                notifier.notify("STATUS=serving; 0 peers, \(games) games")
            }
        } catch {
            return refuse("cannot load the state: \(error)")
        }
        let games = await host.gameCount
        do {
            try ControlServer.prepare(socketPath: settings.socketPath)
        } catch {
            return refuse("\(error)")
        }
        let network: PeerNetwork
        do {
            network = try await PeerNetwork.start(settings: settings, host: host, logger: logger)
        } catch {
            return refuse("cannot listen for peers: \(error)")
        }
        await host.attach(network)
        let server = ControlServer(
            socketPath: settings.socketPath, responder: host, logger: logger, eventLoop: loop,
            onListening: {
                notifier.notify("READY=1\nSTATUS=serving; 0 peers, \(games) games\nMAINPID=\(getpid())")
                logger.notice("serving", metadata: ["socket": "\(settings.socketPath)", "state": "\(settings.stateDirectory)"])
            },
            onShutdown: {
                notifier.notify("STOPPING=1\nSTATUS=stopping")
                logger.notice("stopping")
                events.finish()
            })
        var services: [any Service] = [server] + network.services
        if notifier.isEnabled { services.append(StatusService(notifier: notifier, host: host, network: network)) }
        if notifier.isEnabled, let interval = notifier.watchdogInterval {
            services.append(WatchdogService(notifier: notifier, interval: interval))
        }
        var configuration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // A client that stops reading must not hold the daemon up forever:
        // after this, what is left is cancelled (the store still closes).
        configuration.maximumGracefulShutdownDuration = .seconds(15)
        let group = ServiceGroup(configuration: configuration)
        var failure: (any Error)?
        do {
            try await group.run()
        } catch {
            failure = error
        }
        // Peers' ops applied but not yet written go to the store before it closes.
        await host.writeRemoteOps()
        if let failure {
            logger.error("stopped on an error", metadata: ["error": "\(failure)"])
            unlink(settings.socketPath)
            return 1
        }
        logger.notice("stopped")
        return 0
    }
}
