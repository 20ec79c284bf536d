import CSQLite
import FoundationEssentials
import SweeperConventions

// A thin layer over SQLite's C API: what the store needs (connections,
// cached prepared statements, typed values, transactions), with every
// failure a thrown `SQLiteError` and nothing that traps on what a file holds.

/// A failure SQLite reported.
struct SQLiteError: Error, CustomStringConvertible {
    /// SQLite's extended result code (`SQLITE_IOERR_FSYNC`, …).
    var extendedCode: Int32
    /// SQLite's message for it (`sqlite3_errmsg`).
    var message: String
    /// The statement that failed, if one did.
    var sql: String?

    /// The primary result code (`SQLITE_IOERR`, `SQLITE_FULL`, …).
    var code: Int32 { extendedCode & 0xff }

    var description: String {
        "SQLite error \(extendedCode): \(message)" + (sql.map { " - while executing `\($0)`" } ?? "")
    }
}

/// One value of a column or of a statement's parameter.
enum SQLiteValue: Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// A Swift value that binds to a statement's parameter.
protocol SQLiteBindable {
    /// The value as SQLite stores it.
    var sqliteValue: SQLiteValue { get }
}

/// A Swift value read from a column; `nil` when the column holds something
/// else (a damaged or foreign database), which the reader turns into an error.
protocol SQLiteReadable {
    init?(sqliteValue: SQLiteValue)
}

extension Int64: SQLiteBindable, SQLiteReadable {
    var sqliteValue: SQLiteValue { .integer(self) }
    init?(sqliteValue: SQLiteValue) {
        guard case .integer(let v) = sqliteValue else { return nil }
        self = v
    }
}

extension Int: SQLiteBindable, SQLiteReadable {
    var sqliteValue: SQLiteValue { .integer(Int64(self)) }
    init?(sqliteValue: SQLiteValue) {
        guard case .integer(let v) = sqliteValue else { return nil }
        self = Int(v)
    }
}

extension String: SQLiteBindable, SQLiteReadable {
    var sqliteValue: SQLiteValue { .text(self) }
    init?(sqliteValue: SQLiteValue) {
        guard case .text(let v) = sqliteValue else { return nil }
        self = v
    }
}

extension Data: SQLiteBindable, SQLiteReadable {
    var sqliteValue: SQLiteValue { .blob([UInt8](self)) }
    init?(sqliteValue: SQLiteValue) {
        guard case .blob(let v) = sqliteValue else { return nil }
        self = Data(v)
    }
}

extension Array: SQLiteBindable where Element == UInt8 {
    var sqliteValue: SQLiteValue { .blob(self) }
}

extension Array: SQLiteReadable where Element == UInt8 {
    init?(sqliteValue: SQLiteValue) {
        guard case .blob(let v) = sqliteValue else { return nil }
        self = v
    }
}

extension Optional: SQLiteBindable where Wrapped: SQLiteBindable {
    var sqliteValue: SQLiteValue { self?.sqliteValue ?? .null }
}

extension Optional: SQLiteReadable where Wrapped: SQLiteReadable {
    init?(sqliteValue: SQLiteValue) {
        if case .null = sqliteValue {
            self = .none
        } else if let value = Wrapped(sqliteValue: sqliteValue) {
            self = .some(value)
        } else {
            return nil
        }
    }
}

/// Dates are kept as text in UTC, `2026-11-25 18:21:17.882`: the form the
/// store has always written (GRDB's), which sorts as time does and reads in
/// the `sqlite3` shell. Text without the fraction or the seconds, with a `T`
/// between date and time, and numbers (seconds since 1970) read too.
extension Date: SQLiteBindable, SQLiteReadable {
    var sqliteValue: SQLiteValue { .text(SQLiteDate.text(of: self)) }
    init?(sqliteValue: SQLiteValue) {
        switch sqliteValue {
        case .text(let text):
            guard let date = SQLiteDate.date(from: text) else { return nil }
            self = date
        case .integer(let seconds): self = Date(timeIntervalSince1970: Double(seconds))
        case .real(let seconds): self = Date(timeIntervalSince1970: seconds)
        default: return nil
        }
    }
}

/// The text form of dates in the database.
enum SQLiteDate {
    /// The first and the last microsecond written: years 1 to 9999, so that
    /// every date written reads back (a time a peer signed may be anything).
    static let writtenMicros: ClosedRange<Int64> = -62_135_596_800_000_000...253_402_300_799_999_999

    /// `yyyy-MM-dd HH:mm:ss.SSS` in UTC, the milliseconds truncated (after
    /// rounding to the microsecond, so that a time read back from its text
    /// gives that text again, whatever the binary fraction's error). A time
    /// outside years 1 to 9999 is written as the nearest one inside.
    static func text(of date: Date) -> String {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let kept: Int64 =
            micros.isNaN
            ? 0
            : micros <= Double(writtenMicros.lowerBound)
                ? writtenMicros.lowerBound
                : micros >= Double(writtenMicros.upperBound) ? writtenMicros.upperBound : Int64(micros)
        let (millis, _) = floorDivide(kept, 1000)
        let (days, inDay) = floorDivide(millis, 86_400_000)
        let h = inDay / 3_600_000, m = inDay / 60_000 % 60, s = inDay / 1000 % 60, ms = inDay % 1000
        return CivilDate(daysSince1970: days).text + " " + pad(h, 2) + ":" + pad(m, 2) + ":" + pad(s, 2) + "." + pad(ms, 3)
    }

    /// The date of `yyyy-MM-dd[( |T)HH:mm[:ss[.SSS…]]]` in UTC, or nil.
    static func date(from text: String) -> Date? {
        let b = Array(text.utf8)
        func number(_ at: Int, _ count: Int) -> Int64? {
            guard at + count <= b.count else { return nil }
            var v: Int64 = 0
            for c in b[at..<(at + count)] {
                guard c >= 0x30, c <= 0x39 else { return nil }
                v = v * 10 + Int64(c - 0x30)
            }
            return v
        }
        guard b.count >= 10, b[4] == 0x2D, b[7] == 0x2D, let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var seconds = CivilDate(year: year, month: month, day: day).daysSince1970 * 86_400
        var fraction = 0.0
        if b.count > 10 {
            guard b.count >= 16, b[10] == 0x20 || b[10] == 0x54, b[13] == 0x3A, let h = number(11, 2), let m = number(14, 2), h < 24, m < 60
            else { return nil }
            seconds += h * 3600 + m * 60
            if b.count > 16 {
                guard b.count >= 19, b[16] == 0x3A, let s = number(17, 2), s < 61 else { return nil }
                seconds += s
                if b.count > 19 {
                    guard b[19] == 0x2E, b.count > 20 else { return nil }
                    var scale = 0.1
                    for c in b[20...] {
                        guard c >= 0x30, c <= 0x39 else { return nil }
                        fraction += Double(c - 0x30) * scale
                        scale /= 10
                    }
                }
            }
        }
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let q = a / b, r = a % b
        return r < 0 ? (q - 1, r + b) : (q, r)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String { CivilDate.padded(value, width) }
}

/// One row of a query's result.
struct SQLiteRow {
    /// The columns' names, in the query's order.
    let names: [String]
    /// The columns' values, in the same order.
    let values: [SQLiteValue]

    /// The value of `column` as `T`; throws when the column is missing or
    /// holds another type.
    func get<T: SQLiteReadable>(_ column: String, as: T.Type = T.self) throws -> T {
        guard let i = names.firstIndex(of: column) else {
            throw SQLiteError(extendedCode: SQLITE_ERROR, message: "no column \(column) in the result")
        }
        return try get(i)
    }

    /// The value of the column at `index` (from 0) as `T`.
    func get<T: SQLiteReadable>(_ index: Int, as: T.Type = T.self) throws -> T {
        guard values.indices.contains(index) else {
            throw SQLiteError(extendedCode: SQLITE_ERROR, message: "no column \(index) in the result")
        }
        guard let value = T(sqliteValue: values[index]) else {
            throw SQLiteError(extendedCode: SQLITE_MISMATCH, message: "column \(names[index]) holds \(values[index]), not \(T.self)")
        }
        return value
    }
}

/// One connection to a database file. Not thread-safe: the store hands each
/// connection to one caller at a time, under a lock.
final class SQLiteConnection: @unchecked Sendable {
    private var handle: OpaquePointer?
    private var cache: [String: OpaquePointer] = [:]

    /// Opens the database at `path` (created if `create`; read-only if `readOnly`).
    init(path: String, readOnly: Bool = false, create: Bool = true) throws {
        var flags = SQLITE_OPEN_NOMUTEX
        flags |= readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)
        var db: OpaquePointer?
        let result = sqlite3_open_v2(path, &db, flags, nil)
        guard result == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(result))
            sqlite3_close_v2(db)
            throw SQLiteError(extendedCode: result, message: message)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 5000)
    }

    deinit { close() }

    /// Finalizes the cached statements and closes the connection; later calls fail.
    func close() {
        for statement in cache.values { sqlite3_finalize(statement) }
        cache = [:]
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    private func failure(_ code: Int32, _ sql: String?) -> SQLiteError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "the database is closed"
        return SQLiteError(extendedCode: code, message: message, sql: sql)
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { handle.map { Int(sqlite3_changes($0)) } ?? 0 }

    /// Runs one or more statements that take no parameters (schema, pragmas).
    func execute(_ sql: String) throws {
        guard let handle else { throw failure(SQLITE_MISUSE, sql) }
        let result = sqlite3_exec(handle, sql, nil, nil, nil)
        guard result == SQLITE_OK else { throw failure(sqlite3_extended_errcode(handle), sql) }
    }

    /// Runs one statement with `arguments` to its end, and returns its rows.
    /// `cached` keeps the statement prepared for the next call (what every move runs).
    @discardableResult
    func rows(_ sql: String, _ arguments: [any SQLiteBindable] = [], cached: Bool = false) throws -> [SQLiteRow] {
        guard let handle else { throw failure(SQLITE_MISUSE, sql) }
        let statement: OpaquePointer
        if cached, let kept = cache[sql] {
            statement = kept
        } else {
            var prepared: OpaquePointer?
            let result = sqlite3_prepare_v3(handle, sql, -1, cached ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0, &prepared, nil)
            guard result == SQLITE_OK, let prepared else { throw failure(result == SQLITE_OK ? SQLITE_MISUSE : sqlite3_extended_errcode(handle), sql) }
            statement = prepared
            if cached { cache[sql] = prepared }
        }
        defer {
            if cached {
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
            } else {
                sqlite3_finalize(statement)
            }
        }
        guard Int(sqlite3_bind_parameter_count(statement)) == arguments.count else {
            throw SQLiteError(
                extendedCode: SQLITE_RANGE, message: "\(arguments.count) arguments for \(sqlite3_bind_parameter_count(statement)) parameters", sql: sql)
        }
        for (i, argument) in arguments.enumerated() {
            let index = Int32(i + 1)
            let result: Int32
            switch argument.sqliteValue {
            case .null: result = sqlite3_bind_null(statement, index)
            case .integer(let v): result = sqlite3_bind_int64(statement, index, v)
            case .real(let v): result = sqlite3_bind_double(statement, index, v)
            case .text(let v):
                let utf8 = Array(v.utf8)
                result = utf8.withUnsafeBufferPointer { buffer in
                    buffer.withMemoryRebound(to: CChar.self) { sweeper_sqlite_bind_text(statement, index, $0.baseAddress, Int32($0.count)) }
                }
            case .blob(let v): result = v.withUnsafeBytes { sweeper_sqlite_bind_blob(statement, index, $0.baseAddress, Int32($0.count)) }
            }
            guard result == SQLITE_OK else { throw failure(result, sql) }
        }
        var rows: [SQLiteRow] = []
        var names: [String]?
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { break }
            guard step == SQLITE_ROW else { throw failure(sqlite3_extended_errcode(handle), sql) }
            let count = sqlite3_column_count(statement)
            let columns = names ?? (0..<count).map { sqlite3_column_name(statement, $0).map { String(cString: $0) } ?? "" }
            names = columns
            rows.append(SQLiteRow(names: columns, values: (0..<count).map { Self.value(statement, $0) }))
        }
        return rows
    }

    private static func value(_ statement: OpaquePointer, _ column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(statement, column))
            guard let text = sqlite3_column_text(statement, column) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, column))
            guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return .blob([]) }
            return .blob([UInt8](UnsafeRawBufferPointer(start: bytes, count: count)))
        default: return .null
        }
    }

    /// Runs one statement for its effect; returns the rows it changed.
    @discardableResult
    func run(_ sql: String, _ arguments: [any SQLiteBindable] = [], cached: Bool = false) throws -> Int {
        try rows(sql, arguments, cached: cached)
        return changes
    }

    /// The first column of every row, as `T`.
    func column<T: SQLiteReadable>(_ sql: String, _ arguments: [any SQLiteBindable] = [], as: T.Type = T.self) throws -> [T] {
        try rows(sql, arguments).map { try $0.get(0, as: T.self) }
    }

    /// The first column of the first row, if there is a row.
    func scalar<T: SQLiteReadable>(_ sql: String, _ arguments: [any SQLiteBindable] = [], as: T.Type = T.self) throws -> T? {
        try column(sql, arguments, as: T.self).first
    }

    /// Runs `body` in a transaction (`BEGIN IMMEDIATE` for a write, so that
    /// it holds the write lock from its start; `BEGIN DEFERRED` for a read,
    /// which sees one snapshot throughout), committed if it returns and
    /// rolled back if it or the commit throws.
    func transaction<T>(immediate: Bool, _ body: (SQLiteConnection) throws -> T) throws -> T {
        try execute(immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
        do {
            let result = try body(self)
            try execute("COMMIT")
            return result
        } catch {
            if let handle, sqlite3_get_autocommit(handle) == 0 { _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }

    /// The names of a table's columns.
    func columnNames(in table: String) throws -> [String] {
        try rows("SELECT name FROM pragma_table_info(?)", [table]).map { try $0.get("name", as: String.self) }
    }

    /// Whether a table of that name exists.
    func tableExists(_ table: String) throws -> Bool {
        try scalar("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [table], as: Int.self) != nil
    }
}
