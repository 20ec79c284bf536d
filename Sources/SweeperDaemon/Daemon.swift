import FoundationEssentials
import Logging
import NIOPosix
import ServiceLifecycle
import SweeperControl
import SweeperConventions
import SweeperStore
import SweeperWeb

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `sweeperd` put together: locks, store, game service, peer network,
/// control server, systemd notification, all services under one `ServiceGroup`.
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
            try PrivateDirectory.make(settings.stateDirectory)
            let socketDirectory = SweeperPaths.folder(of: settings.socketPath)
            if socketDirectory == SweeperPaths.sharedRuntimeDirectory {
                try PrivateDirectory.makeOwned(socketDirectory)
            } else {
                try PrivateDirectory.make(socketDirectory)
            }
        } catch {
            return refuse("\(error)")
        }
        // Said plainly rather than as a lock failure: everything else needs writes too.
        if access(settings.stateDirectory, W_OK) != 0 && errno == EROFS {
            return refuse(
                "the state directory \(settings.stateDirectory) is on a read-only file system; sweeperd keeps its games there and must write them — make it writable again (nothing was changed)"
            )
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
        logger.info("store opened", metadata: ["path": "\(store.path)", "checkedEveryPage": "\(store.checkedEveryPage)"])

        // The daemon's one event loop: the control socket, the peer links,
        // the peer node and the game service all run on its thread, so a move
        // crosses the daemon without waking another thread. Only the store's
        // fsync of a local move blocks it, and the move waits for that anyway.
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { loops.shutdownGracefully { _ in } }
        let loop = loops.next()

        let notifier = SystemdNotifier()
        do {
            try ControlServer.prepare(socketPath: settings.socketPath)
        } catch {
            return refuse("\(error)")
        }
        let core: DaemonCore
        do {
            core = try await DaemonCore.assemble(settings: settings, store: store, notifier: notifier, eventLoop: loop, logger: logger)
        } catch {
            return refuse("\(error)")
        }
        let (events, status, network) = (core.events, core.status, core.network)
        let server = ControlServer(
            socketPath: settings.socketPath, responder: core.router, logger: logger, eventLoop: loop,
            onListening: {
                notifier.notify("READY=1\n\(status.line)\nMAINPID=\(getpid())")
                logger.notice("serving", metadata: ["socket": "\(settings.socketPath)", "state": "\(settings.stateDirectory)"])
            },
            onShutdown: {
                notifier.notify("STOPPING=1\nSTATUS=stopping")
                logger.notice("stopping")
                events.finish()
            })
        let web = WebServer(board: core.web, lan: core.router.webDevices.lan(default: settings.webLAN))
        var services: [any Service] = [server, web] + network.services
        if notifier.isEnabled {
            services.append(
                StatusService(status: status) { [network] in (await network.connectedCount(), network.mdnsStatus) })
        }
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
        await core.service.writeRemoteOps()
        // The games still awake are written down: the next start reads them at once.
        await core.service.keepSnapshots()
        // This player's open period of play closes now, not at its last renewal.
        core.play.stop()
        if let failure {
            logger.error("stopped on an error", metadata: ["error": "\(failure)"])
            unlink(settings.socketPath)
            return 1
        }
        logger.notice("stopped")
        return 0
    }
}
