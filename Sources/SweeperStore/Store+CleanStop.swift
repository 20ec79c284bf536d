import FoundationEssentials
import SweeperConventions

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a clean close leaves beside the database (`sweeper.sqlite-clean`):
/// the file as it was left (size, inode, change and modification times to
/// the nanosecond) and when the whole file was last checked.
///
/// Opening reads every page of the database to check it (`PRAGMA
/// quick_check`), which takes about a second for each gigabyte. As a file
/// system skips its full check after a clean unmount, an open skips it
/// when the file is exactly as a clean close left it (nothing wrote it
/// since, not even a copy put back in its place), no write-ahead log is
/// left over, and the last whole check is less than
/// ``Store/wholeCheckInterval`` old. The stamp is removed as soon as the
/// open succeeds, so a crash or anything written after leaves none, and
/// the next open checks every page again.
struct CleanStamp: Equatable {
    /// The database file as the clean close left it.
    var file: FileIdentity
    /// When every page was last checked (ms since 1970).
    var checkedMillis: UInt64

    /// The stamp's path beside the database at `path`.
    static func path(for database: String) -> String { database + "-clean" }

    /// The stamp kept for `database`, if one is there and reads.
    static func read(for database: String) -> CleanStamp? {
        guard let bytes = try? FileDescriptorReader.readAll(path: path(for: database), limit: 256) else { return nil }
        let parts = String(decoding: bytes, as: UTF8.self).split(separator: " ").map(String.init)
        guard parts.count == 7, parts[0] == "v1", let size = Int64(parts[1]), let inode = UInt64(parts[2]), let changed = Int64(parts[3]),
            let modified = Int64(parts[4]), let checked = UInt64(parts[5]), parts[6] == "end\n"
        else { return nil }
        return CleanStamp(file: FileIdentity(size: size, inode: inode, changedNanos: changed, modifiedNanos: modified), checkedMillis: checked)
    }

    /// Writes the stamp beside `database` (mode 0600); whether it was written whole.
    func write(for database: String) -> Bool {
        let text = "v1 \(file.size) \(file.inode) \(file.changedNanos) \(file.modifiedNanos) \(checkedMillis) end\n"
        let fd = open(Self.path(for: database), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        let written = FileDescriptorWriter.writeAll(Array(text.utf8), to: fd)
        return close(fd) == 0 && written
    }

    /// Removes the stamp beside `database`.
    static func remove(for database: String) {
        unlink(path(for: database))
    }
}

/// A file as `stat` describes it: what changes whenever anything writes it
/// or puts another file in its place.
struct FileIdentity: Equatable {
    var size: Int64
    var inode: UInt64
    var changedNanos: Int64
    var modifiedNanos: Int64

    /// The file at `path` now; `nil` when it cannot be looked at.
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        size = Int64(info.st_size)
        inode = UInt64(info.st_ino)
        changedNanos = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        modifiedNanos = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    }

    init(size: Int64, inode: UInt64, changedNanos: Int64, modifiedNanos: Int64) {
        self.size = size
        self.inode = inode
        self.changedNanos = changedNanos
        self.modifiedNanos = modifiedNanos
    }
}

extension Store {
    /// The longest a database goes between two checks of every page, even
    /// when each stop was clean: a week.
    public static let wholeCheckInterval: UInt64 = 7 * 24 * 3_600_000

    /// Whether an open of the database at `path` may skip reading every
    /// page, at `nowMillis`: the clean close's stamp when it may.
    static func cleanStamp(for path: String, nowMillis: UInt64) -> CleanStamp? {
        guard let stamp = CleanStamp.read(for: path), FileIdentity(path: path) == stamp.file,
            nowMillis >= stamp.checkedMillis, nowMillis - stamp.checkedMillis < wholeCheckInterval
        else { return nil }
        // A write-ahead log left over: the last stop was not clean.
        if let log = FileIdentity(path: path + "-wal"), log.size > 0 { return nil }
        return stamp
    }
}
