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

    /// `text` with every control character (C0, DEL, C1) and every format
    /// character (bidirectional overrides, zero widths) as `\u{…}`.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isEscaped) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isEscaped(scalar) { out += "\\u{\(String(scalar.value, radix: 16))}" } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }

    private static func isEscaped(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.properties.generalCategory == .format
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { _, new in new } }
        let fields = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        // What others sent (a name on the network, an error's words) is
        // written with its control characters escaped: it forges no line of
        // its own (nor its priority) and moves no terminal that shows the log.
        let text = Self.escaped("\(event.message)\(fields)")
        let line: String
        if journal {
            line = "<\(Self.priority(event.level))>\(label): \(text)\n"
        } else {
            let stamp = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
            line = "\(stamp) \(event.level) \(label): \(text)\n"
        }
        Self.lock.withLock { _ in
            _ = line.withCString { write(2, $0, strlen($0)) }
        }
    }
}
