// printf-style formatting of numbers and local times from the C library, so
// that no module the shipped program links needs full Foundation (and ICU)
// for `String(format:)` or `DateFormatter`.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension String {
    /// `format` filled in by the C library's `vsnprintf`: `%ld` for an `Int`,
    /// `%.2f` for a `Double`, `%s` never (pass Swift strings by
    /// interpolation instead).
    public init(cFormat format: String, _ arguments: any CVarArg...) {
        var buffer = [CChar](repeating: 0, count: 128)
        let needed = withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) }
        if needed >= buffer.count {
            buffer = [CChar](repeating: 0, count: Int(needed) + 1)
            _ = withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) }
        }
        self = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A moment (seconds since 1970) in this machine's local time zone, by
    /// `strftime`'s `format`, for example `%Y-%m-%d %H:%M`.
    public init(localTime secondsSince1970: Double, format: String) {
        var seconds = time_t(secondsSince1970.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, format, &parts)
        self = String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
