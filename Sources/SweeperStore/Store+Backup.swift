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
    public struct BackupContents: Sendable, Equatable {
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
    /// and the copy has no write-ahead log beside it. It is written into a
    /// file made here (exclusively, never through a link, so nobody else
    /// can hold it open), synced, checked, then linked into place, which
    /// fails rather than replace a file that appeared meanwhile: a
    /// destination that exists is always a whole backup, and never one
    /// overwritten.
    public func backUp(to destination: String) throws -> BackupContents {
        guard destination.hasPrefix("/") else { throw BackupError(description: "the backup's path must be absolute, not \(destination)") }
        guard !FileManager.default.fileExists(atPath: destination) else { throw Self.taken(destination) }
        let partial = destination + ".partial-\(getpid())"
        try Self.writeNew(partial) {
            do {
                let connection = try SQLiteConnection(path: path, readOnly: true)
                defer { connection.close() }
                // Into the empty file made above: SQLite writes into an empty file.
                _ = try connection.run("VACUUM INTO ?", [partial])
            } catch {
                // Said plainly: the store's classifier would probe the destination's folder.
                throw BackupError(description: "cannot write the backup \(destination): \(error)")
            }
            try Self.sync(partial)
        }
        // The destination is a link of its own: the name written under goes, with any log checking it left.
        defer { Self.removeWithLog(partial) }
        let contents = try Self.contents(ofBackup: partial)
        guard link(partial, destination) == 0 else {
            if errno == EEXIST { throw Self.taken(destination) }
            throw BackupError(description: "cannot put the backup at \(destination): \(String(cString: strerror(errno)))")
        }
        try? Self.sync(SweeperPaths.folder(of: destination))
        return contents
    }

    private static func taken(_ destination: String) -> BackupError {
        BackupError(description: "\(destination) exists already: choose a new name (a backup never overwrites a file)")
    }

    /// Reads what a backup file holds, checking first that it is a whole
    /// Sweeper database this build can open (integrity, schema version, an
    /// identity).
    public static func contents(ofBackup path: String) throws -> BackupContents {
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
                return BackupContents(publicKey: key, games: games, bytes: size)
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
    /// moved aside (with its write-ahead log) to a name ending in
    /// `.before-restore-` and `stamp`, which is returned. The copy is made
    /// and checked first; only then is the old database moved aside and
    /// the copy renamed in, and a failure then puts the old one back, so a
    /// refused restore leaves the directory as it was.
    public static func restore(
        from source: String, intoDirectory directory: String, replacing: Bool, stamp: String
    ) throws -> (contents: BackupContents, movedAside: String?) {
        // A live database (a write-ahead log beside it) is not a backup: its copy would lack what the log holds.
        var st = stat()
        if stat(source + "-wal", &st) == 0, st.st_size > 0 {
            throw BackupError(description: "\(source) has a write-ahead log beside it: it is a live database, not a backup (make one with sweeper backup)")
        }
        let contents = try Self.contents(ofBackup: source)
        try prepareBackupDirectory(directory)
        let target = directory + "/" + fileName
        let replaces = FileManager.default.fileExists(atPath: target)
        if replaces && !replacing {
            throw BackupError(
                description: "\(target) holds a device already; restoring would replace it. To replace it, add --replace (it is kept aside, not deleted)")
        }
        let partial = target + ".restoring"
        try writeNew(partial) {
            let bytes = try copy(from: source, to: partial)
            guard bytes == contents.bytes else { throw BackupError(description: "\(source) changed while it was copied; try again") }
            try sync(partial)
        }
        do {
            let copied = try self.contents(ofBackup: partial)
            guard copied == contents else { throw BackupError(description: "the copy of \(source) differs from it; nothing was changed") }
        } catch {
            removeWithLog(partial)
            throw error
        }
        // Checking the copy may have left an empty log beside it.
        removeLog(of: partial)
        var movedAside: String?
        var moved: [String] = []
        if replaces {
            // Never over an earlier one (two restores within a second).
            var aside = target + ".before-restore-" + stamp
            var n = 1
            while FileManager.default.fileExists(atPath: aside) {
                n += 1
                aside = target + ".before-restore-" + stamp + "-\(n)"
            }
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: target + suffix) {
                guard rename(target + suffix, aside + suffix) == 0 else {
                    let why = String(cString: strerror(errno))
                    for done in moved { rename(aside + done, target + done) }
                    removeWithLog(partial)
                    throw BackupError(description: "cannot move \(target + suffix) aside: \(why); nothing was changed")
                }
                moved.append(suffix)
            }
            movedAside = aside
        }
        // A log left beside the old name would be replayed onto the restored file;
        // the old file's clean-close stamp says nothing of the restored one.
        removeLog(of: target)
        CleanStamp.remove(for: target)
        guard rename(partial, target) == 0 else {
            let why = String(cString: strerror(errno))
            if let aside = movedAside { for done in moved { rename(aside + done, target + done) } }
            removeWithLog(partial)
            throw BackupError(description: "cannot put the restored database at \(target): \(why); nothing was changed")
        }
        chmod(target, 0o600)
        try? sync(directory)
        return (contents, movedAside)
    }

    /// Removes a database's write-ahead log and its index.
    private static func removeLog(of path: String) {
        unlink(path + "-wal")
        unlink(path + "-shm")
    }

    /// Removes a database file and its log.
    private static func removeWithLog(_ path: String) {
        unlink(path)
        removeLog(of: path)
    }

    /// Makes the new, empty file `partial` (mode 0600, exclusively and
    /// never through a link: a file someone else made there is refused, not
    /// written into), then fills it with `body`; a file that failed
    /// half-way is removed.
    private static func writeNew(_ partial: String, _ body: () throws -> Void) throws {
        let fd = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw BackupError(description: "cannot make \(partial): \(String(cString: strerror(errno)))") }
        Glibc.close(fd)
        do {
            try body()
        } catch {
            removeWithLog(partial)
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

    /// Copies the file at `source` into the empty file at `destination`;
    /// returns how many bytes.
    private static func copy(from source: String, to destination: String) throws -> Int {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw BackupError(description: "cannot read \(source): \(String(cString: strerror(errno)))") }
        defer { Glibc.close(input) }
        // The file ``writeNew(_:_:)`` made: opened again, never through a link.
        let output = open(destination, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW)
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
