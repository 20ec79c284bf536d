import FoundationEssentials
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A swift-log handler writing one line per message to stderr, with `<N>`
/// syslog priority prefixes when stderr is the journal (`$JOURNAL_STREAM`
/// names stderr's device and inode), plain with a timestamp otherwise.
public struct StderrLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let journal: Bool
    private static let lock = Mutex(())

    /// Creates a handler; `journal` decides the prefix style.
    public init(label: String, level: Logger.Level, journal: Bool) {
        self.label = label
        self.logLevel = level
        self.journal = journal
    }

    /// Whether `$JOURNAL_STREAM` (`device:inode`) matches stderr.
    public static func stderrIsJournal(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else { return false }
        var st = stat()
        guard fstat(2, &st) == 0 else { return false }
        return UInt64(st.st_dev) == dev && UInt64(st.st_ino) == ino
    }

    /// The syslog priority of a level.
    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { _, new in new } }
        let fields = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let line: String
        if journal {
            line = "<\(Self.priority(event.level))>\(label): \(event.message)\(fields)\n"
        } else {
            let stamp = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
            line = "\(stamp) \(event.level) \(label): \(event.message)\(fields)\n"
        }
        Self.lock.withLock { _ in
            _ = line.withCString { write(2, $0, strlen($0)) }
        }
    }
}
