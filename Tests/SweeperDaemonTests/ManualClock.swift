import Synchronization

@testable import SweeperDaemon

/// A clock the test moves by hand: time stands still until ``advance(by:)``,
/// which wakes every sleeper whose moment has come, in order.
final class ManualClock: DaemonClock {
    private struct Sleeper {
        let id: Int
        let deadline: Double
        let wake: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var seconds = 0.0
        var wallMillis: UInt64 = 1_795_000_000_000
        var sleepers: [Sleeper] = []
        var nextID = 0
    }

    private let state = Mutex(State())

    var seconds: Double { state.withLock { $0.seconds } }
    var wallMillis: UInt64 { state.withLock { $0.wallMillis } }

    func sleep(for duration: Duration) async throws {
        let id = state.withLock { s in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (wake: CheckedContinuation<Void, any Error>) in
                state.withLock { s in s.sleepers.append(Sleeper(id: id, deadline: s.seconds + duration.seconds, wake: wake)) }
            }
        } onCancel: {
            let sleeper = state.withLock { s -> Sleeper? in
                guard let i = s.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return s.sleepers.remove(at: i)
            }
            sleeper?.wake.resume(throwing: CancellationError())
        }
    }

    /// Moves both clocks on by `duration` and wakes the sleepers due.
    func advance(by duration: Duration) {
        let due = state.withLock { s -> [Sleeper] in
            s.seconds += duration.seconds
            s.wallMillis += UInt64(duration.seconds * 1000)
            let due = s.sleepers.filter { $0.deadline <= s.seconds }.sorted { $0.deadline < $1.deadline }
            s.sleepers.removeAll { $0.deadline <= s.seconds }
            return due
        }
        for sleeper in due { sleeper.wake.resume() }
    }
}
