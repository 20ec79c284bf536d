import Foundation
import Testing

@testable import SweeperStore

#if canImport(Glibc)
import Glibc
#endif

/// Opening checks every page of the database unless a clean close left the
/// file exactly as it is: then the check is skipped, at most for a week.
@Suite struct CleanStopTests {
    static let day: UInt64 = 24 * 3_600_000

    func filled(_ dir: TempDir) throws {
        let store = try Store(directory: dir.path)
        for i in 0..<200 {
            try store.append([StoredOp(gameID: "g", author: Data([1]), seq: Int64(i + 1), lamport: 1, bytes: Data(repeating: UInt8(i & 0xff), count: 300))])
        }
        #expect(store.checkedEveryPage, "a new database was not checked")
        store.close()
    }

    @Test func anOpenAfterACleanCloseSkipsTheWholeCheckForAWeek() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        try filled(dir)
        let stamp = CleanStamp.path(for: dir.dbPath)
        #expect(FileManager.default.fileExists(atPath: stamp), "a clean close left no stamp")
        let checked = try #require(CleanStamp.read(for: dir.dbPath)).checkedMillis
        // Opened again as the close left it: no page read; the stamp goes while it is open.
        let again = try Store(directory: dir.path, nowMillis: checked + Self.day)
        #expect(!again.checkedEveryPage)
        #expect(!FileManager.default.fileExists(atPath: stamp), "the stamp stayed while the database was open")
        #expect(try again.ops(gameID: "g").count == 200)
        again.close()
        // The close carries the last whole check forward: past a week, every page is read again.
        #expect(CleanStamp.read(for: dir.dbPath)?.checkedMillis == checked)
        let late = try Store(directory: dir.path, nowMillis: checked + 8 * Self.day)
        #expect(late.checkedEveryPage)
        late.close()
        #expect(CleanStamp.read(for: dir.dbPath)?.checkedMillis == checked + 8 * Self.day)
    }

    @Test func anOpenAfterACrashChecksEveryPage() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        try filled(dir)
        // Open and written, never closed (the daemon was killed): no stamp.
        let killed = try Store(directory: dir.path)
        #expect(!killed.checkedEveryPage)
        try killed.append([StoredOp(gameID: "g", author: Data([1]), seq: 201, lamport: 1, bytes: Data([1]))])
        let next = try Store(directory: dir.path)
        #expect(next.checkedEveryPage)
        next.close()
        killed.close()
    }

    @Test func damageAfterACleanCloseIsFoundEvenWithTheTimesPutBack() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        try filled(dir)
        let before = try #require(CleanStamp.read(for: dir.dbPath))
        var bytes = try Data(contentsOf: URL(fileURLWithPath: dir.dbPath))
        for i in 4096..<(4096 * 3) { bytes[i] = UInt8(truncatingIfNeeded: i &* 131) }
        try bytes.write(to: URL(fileURLWithPath: dir.dbPath))
        // Same size, the modification time as the stamp says: the change time still tells.
        var times = [timespec(tv_sec: Int(before.file.modifiedNanos / 1_000_000_000), tv_nsec: Int(before.file.modifiedNanos % 1_000_000_000))]
        times.append(times[0])
        #expect(utimensat(AT_FDCWD, dir.dbPath, times, 0) == 0)
        #expect(FileIdentity(path: dir.dbPath)?.modifiedNanos == before.file.modifiedNanos)
        #expect {
            _ = try Store(directory: dir.path)
        } throws: { error in
            if case StoreError.corrupt = error { return true }
            return false
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.dbPath)) == bytes)
        #expect(FileManager.default.fileExists(atPath: CleanStamp.path(for: dir.dbPath)), "a refused open removed the stamp")
    }
}
