import NIOPosix
import SweeperGame
import Synchronization

/// Makes the boards of new games off the event loop, on threads of their
/// own: at most ``concurrencyLimit`` at once, each within ``timeLimit`` of
/// the daemon's clock. A dense no-guess board of 500×500 may take hours of
/// attempts, and the loop carries every link, viewer and web page: made
/// there, one request (a phone's, even) would stall them all; made on the
/// threads that check peers' big messages and records, it would hold
/// those up until links drop.
final class BoardMaker: Sendable {
    /// How long one board may take, in seconds.
    static let timeLimit: Double = 60
    /// The most boards made at once (the machine's cores are the family's too).
    static let concurrencyLimit = 2

    private let clock: any DaemonClock
    private let making = Mutex(0)
    private let threads = NIOThreadPool(numberOfThreads: concurrencyLimit)

    init(clock: any DaemonClock) {
        self.clock = clock
        threads.start()
    }

    deinit {
        threads.shutdownGracefully { _ in }
    }

    /// How many boards are being made now.
    var underWay: Int { making.withLock { $0 } }

    /// The board of `parameters` and `seed`, made on another thread.
    func board(_ parameters: GameParameters, seed: UInt64) async throws(GameServiceError) -> GeneratedBoard {
        let admitted = making.withLock { count in
            guard count < Self.concurrencyLimit else { return false }
            count += 1
            return true
        }
        guard admitted else {
            throw .generationFailed("\(Self.concurrencyLimit) boards are being made already: try again when they are done")
        }
        defer { making.withLock { $0 -= 1 } }
        let clock = self.clock
        let deadline = clock.seconds + Self.timeLimit
        let made: Result<GeneratedBoard, GenerationError>
        do {
            made = try await threads.runIfActive {
                Result { () throws(GenerationError) in try Generator.generate(parameters, seed: seed) { clock.seconds > deadline } }
            }
        } catch {
            throw .generationFailed("the daemon is stopping")
        }
        switch made {
        case .success(let board): return board
        case .failure(let error): throw .generationFailed("\(error)")
        }
    }
}
