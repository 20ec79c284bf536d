import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The daemon's time, one source for every part that counts or waits:
/// played time, presence, the sync sessions' anti-entropy and head
/// signatures. The daemon runs on ``SystemClock``; tests give a clock they
/// move by hand, so what happens over minutes is tested in milliseconds
/// (as swift-nio's `EmbeddedEventLoop.advanceTime` does for a channel).
protocol DaemonClock: Sendable {
    /// Seconds on a steady clock since a fixed moment: what intervals are measured with.
    var seconds: Double { get }
    /// Milliseconds since 1970 on the wall clock: what is signed and shown.
    var wallMillis: UInt64 { get }
    /// Waits until `duration` of this clock's time has passed (or the task is cancelled).
    func sleep(for duration: Duration) async throws
}

/// The computer's clocks: `ContinuousClock` for intervals, `Date` for the wall.
struct SystemClock: DaemonClock {
    private let start = ContinuousClock.now

    init() {}

    var seconds: Double { (ContinuousClock.now - start).seconds }

    var wallMillis: UInt64 { Date().millis }

    func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }

    /// How far this machine's local time zone is ahead of UTC now, in
    /// seconds, from the C library's zone rules (`TZ`, else `/etc/localtime`).
    static func localUTCOffsetSeconds() -> Int {
        var now = time(nil)
        var parts = tm()
        guard localtime_r(&now, &parts) != nil else { return 0 }
        return parts.tm_gmtoff
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
