import FoundationEssentials
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Logs a recurring complaint at most once per interval per key (a remote
/// address, a peer and a reason…), so a peer that misbehaves a thousand
/// times a second costs one log line a minute. The next line after a quiet
/// spell says how many were left out (`suppressed=N`).
///
/// A value type: its owner (an actor) serialises the calls.
public struct RateLimitedLog: Sendable {
    /// How long a key stays quiet after it was logged.
    public let interval: TimeInterval
    /// The most keys remembered; the oldest are forgotten beyond it, so
    /// a flood of distinct keys cannot grow memory without bound.
    public let keyLimit: Int
    private var last: [String: Date] = [:]
    private var suppressed: [String: Int] = [:]

    /// Creates a limiter.
    public init(interval: TimeInterval = 60, keyLimit: Int = 4096) {
        self.interval = interval
        self.keyLimit = keyLimit
    }

    /// Logs `message` at `level` unless `key` was logged within the interval;
    /// returns whether it logged.
    @discardableResult
    public mutating func log(
        _ logger: Logger, level: Logger.Level = .warning, key: String, _ message: @autoclosure () -> Logger.Message,
        metadata: @autoclosure () -> Logger.Metadata = [:], now: Date = Date()
    ) -> Bool {
        if let previous = last[key], now.timeIntervalSince(previous) < interval {
            suppressed[key, default: 0] += 1
            return false
        }
        if last.count >= keyLimit { forgetOldest(now: now) }
        let left = suppressed.removeValue(forKey: key) ?? 0
        last[key] = now
        var fields = metadata()
        if left > 0 { fields["suppressed"] = "\(left)" }
        logger.log(level: level, message(), metadata: fields)
        return true
    }

    private mutating func forgetOldest(now: Date) {
        last = last.filter { now.timeIntervalSince($0.value) < interval }
        if last.count >= keyLimit, let oldest = last.min(by: { $0.value < $1.value })?.key { last[oldest] = nil }
        suppressed = suppressed.filter { last[$0.key] != nil }
    }
}
