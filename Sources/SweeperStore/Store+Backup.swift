import FoundationEssentials
import SweeperConventions
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A device's one copy of its identity, circle and history, written to a
/// file while the daemon runs and put back on another machine.
extension Store {
    /// What a backup holds, read from it without changing it.
    public struct BackupSummary: Sendable, Equatable {
        /// The device's public key: the peer id a restored daemon has.
        public var publicKey: Data
        /// The games it holds.
        public var games: Int
        /// The file's size in bytes.
        public var bytes: Int
    }

    /// Why a backup or a restore was refused; nothing was changed.
    public struct BackupError: Error, Equatable, Sendable, CustomStringConvertible {
        /// A sentence for people: what is wrong and what to do.
        public var description: String
    }

    /// Writes a consistent copy of the whole database to `destination` (a
    /// new file, mode 0600) while the store goes on serving: SQLite's
    /// `VACUUM INTO` on a read-only connection of its own sees one snapshot,
    /// and the copy has no write-ahead log beside it. It is written under
    /// another name, synced, checked, then renamed into place, so a
    /// destination that exists is always a whole backup.
    public func backUp(to destination: String) throws -> BackupSummary {
        guard destination.hasPrefix("/") else { throw BackupError(description: "the backup's path must be absolute, not \(destination)") }
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw BackupError(description: "\(destination) exists already: choose a new name (a backup never overwrites a file)")
        }
        let partial = destination + ".partial-\(getpid())"
        try Self.writeNew(partial) {
            do {
                let connection = try SQLiteConnection(path: path, readOnly: true)
                defer { connection.close() }
                _ = try connection.run("VACUUM INTO ?", [partial])
            } catch {
                throw Self.classify(error, path: destination)
            }
        }
        do {
            chmod(partial, 0o600)
            try Self.sync(partial)
            let summary = try Self.summary(ofBackup: partial)
            guard rename(partial, destination) == 0 else {
                throw BackupError(description: "cannot put the backup at \(destination): \(String(cString: strerror(errno)))")
            }
            try? Self.sync(SweeperPaths.folder(of: destination))
            return summary
        } catch {
            unlink(partial)
            throw error
        }
    }

    /// Reads what a backup file holds, checking first that it is a whole
    /// Sweeper database this build can open (integrity, schema version, an
    /// identity).
    public static func summary(ofBackup path: String) throws -> BackupSummary {
        guard FileManager.default.fileExists(atPath: path) else { throw BackupError(description: "no file at \(path)") }
        try inspectExisting(path: path)
        do {
            let connection = try SQLiteConnection(path: path, readOnly: true)
            defer { connection.close() }
            return try connection.transaction(immediate: false) { db in
                guard try db.tableExists("identity"), let key = try db.scalar("SELECT publicKey FROM identity WHERE id = 1", as: Data.self)
                else { throw BackupError(description: "\(path) is not a Sweeper database: it holds no device identity") }
                let games = try db.tableExists("games") ? try db.scalar("SELECT count(*) FROM games", as: Int.self) ?? 0 : 0
                var st = stat()
                let size = stat(path, &st) == 0 ? Int(st.st_size) : 0
                return BackupSummary(publicKey: key, games: games, bytes: size)
            }
        } catch let error as BackupError {
            throw error
        } catch {
            throw classify(error, path: path)
        }
    }

    /// Puts the backup at `source` in place as the database of the state
    /// `directory` (made if missing, mode 0700), for a daemon not running.
    /// A database there already is refused, unless `replacing`: then it is
    /// moved aside (with its write-ahead log) to a name ending in `.before-restore-` and
    /// `stamp`, which is returned. The copy is written under another name,
    /// synced and renamed into place.
    public static func restore(
        from source: String, intoDirectory directory: String, replacing: Bool, stamp: String
    ) throws -> (summary: BackupSummary, movedAside: String?) {
        let summary = try summary(ofBackup: source)
        try prepareBackupDirectory(directory)
        let target = directory + "/" + fileName
        var movedAside: String?
        if FileManager.default.fileExists(atPath: target) {
            guard replacing else {
                throw BackupError(
                    description: "\(target) holds a device already; restoring would replace it. To replace it, add --replace (it is kept aside, not deleted)")
            }
            // Never over an earlier one (two restores within a second).
            var aside = target + ".before-restore-" + stamp
            var n = 1
            while FileManager.default.fileExists(atPath: aside) {
                n += 1
                aside = target + ".before-restore-" + stamp + "-\(n)"
            }
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: target + suffix) {
                guard rename(target + suffix, aside + suffix) == 0 else {
                    throw BackupError(description: "cannot move \(target + suffix) aside: \(String(cString: strerror(errno)))")
                }
            }
            movedAside = aside
        }
        let partial = target + ".restoring"
        try writeNew(partial) {
            let bytes = try copy(from: source, to: partial)
            guard bytes == summary.bytes else { throw BackupError(description: "\(source) changed while it was copied; try again") }
            try sync(partial)
        }
        // A log left beside the old name would be replayed onto the restored file.
        unlink(target + "-wal")
        unlink(target + "-shm")
        guard rename(partial, target) == 0 else {
            throw BackupError(description: "cannot put the restored database at \(target): \(String(cString: strerror(errno)))")
        }
        chmod(target, 0o600)
        try? sync(directory)
        return (summary, movedAside)
    }

    /// Writes a new file at `partial` (mode 0600, whatever the umask) with
    /// `body`; a file that failed half-way is removed.
    private static func writeNew(_ partial: String, _ body: () throws -> Void) throws {
        unlink(partial)
        let old = umask(0o077)
        defer { umask(old) }
        do {
            try body()
        } catch {
            unlink(partial)
            throw error
        }
    }

    private static func prepareBackupDirectory(_ directory: String) throws {
        do {
            try PrivateDirectory.make(directory, tighten: true)
        } catch {
            throw BackupError(description: "cannot use the state directory \(directory): \(error.detail)")
        }
    }

    /// Copies the file at `source` to a new file at `destination` (mode
    /// 0600); returns how many bytes.
    private static func copy(from source: String, to destination: String) throws -> Int {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw BackupError(description: "cannot read \(source): \(String(cString: strerror(errno)))") }
        defer { Glibc.close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard output >= 0 else { throw BackupError(description: "cannot write \(destination): \(String(cString: strerror(errno)))") }
        defer { Glibc.close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var total = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw BackupError(description: "cannot read \(source): \(String(cString: strerror(errno)))") }
            if n == 0 { return total }
            guard FileDescriptorWriter.writeAll(Array(buffer[0..<n]), to: output) else {
                throw BackupError(description: "cannot write \(destination): \(String(cString: strerror(errno)))")
            }
            total += n
        }
    }

    /// Flushes a file or a directory to disk.
    static func sync(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BackupError(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { Glibc.close(fd) }
        guard fsync(fd) == 0 else { throw BackupError(description: "cannot sync \(path): \(String(cString: strerror(errno)))") }
    }
}
