import Foundation
import Testing

@testable import SweeperStore

/// The store's own layer over SQLite's C API: dates as the GRDB library
/// wrote them, values of the wrong type, empty blobs, reads beside writes.
@Suite struct SQLiteTests {
    /// GRDB wrote dates as UTC text with milliseconds; every database
    /// written so far holds them, so they read back to the same instant.
    @Test func datesReadAndWriteAsGRDBWroteThem() throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        for text in ["2026-11-25 18:21:17.882", "1970-01-01 00:00:00.000", "1969-12-31 23:59:59.999", "2000-02-29 12:00:00.500", "2099-12-31 23:59:59.001"] {
            let date = try #require(SQLiteDate.date(from: text), "\(text)")
            let expected = try #require(formatter.date(from: text))
            #expect(abs(date.timeIntervalSince1970 - expected.timeIntervalSince1970) < 0.0005, "\(text)")
            #expect(SQLiteDate.text(of: date) == text)
        }
        #expect(SQLiteDate.text(of: Date(timeIntervalSince1970: 1_795_572_251.7949)) == "2026-11-25 02:04:11.794")
        // A time a peer signed may be anything: it is written as the nearest one that reads back.
        #expect(SQLiteDate.text(of: Date(timeIntervalSince1970: Double(UInt64.max) / 1000)) == "9999-12-31 23:59:59.999")
        #expect(SQLiteDate.text(of: Date(timeIntervalSince1970: -1e15)) == "0001-01-01 00:00:00.000")
        #expect(SQLiteDate.text(of: Date(timeIntervalSince1970: .nan)) == "1970-01-01 00:00:00.000")
        #expect(SQLiteDate.date(from: "9999-12-31 23:59:59.999") != nil && SQLiteDate.date(from: "0001-01-01 00:00:00.000") != nil)
        // The shorter forms GRDB also read.
        #expect(SQLiteDate.date(from: "2026-11-25") == Date(timeIntervalSince1970: 1_795_564_800))
        #expect(SQLiteDate.date(from: "2026-11-25T01:24") == Date(timeIntervalSince1970: 1_795_564_800 + 5040))
        #expect(SQLiteDate.date(from: "2026-11-25 01:24:11") == Date(timeIntervalSince1970: 1_795_564_800 + 5051))
        for bad in ["", "2026-13-01", "2026-11-25 25:00", "2026-11-25 01:24:11.x", "yesterday", "2026-11-25 01"] {
            #expect(SQLiteDate.date(from: bad) == nil, "\(bad)")
        }
    }

    /// A column that holds another type than the store wrote (a damaged or
    /// hand-edited file) is an error answered, never a crash.
    @Test func aValueOfTheWrongTypeIsAnErrorNotACrash() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        do {
            let store = try Store(directory: dir.path)
            let game = StoredGame(id: "g1", params: Data("{}".utf8), created: Date(), lastActivity: Date(), status: "playing")
            #expect(try store.createGame(game))
            #expect(try store.games().map(\.id) == ["g1"])
            store.close()
        }
        try runSQLite(dir.dbPath, "UPDATE games SET created = 'not a date', params = 42")
        let store = try Store(directory: dir.path)
        defer { store.close() }
        #expect {
            try store.games()
        } throws: { error in
            guard case .database(let detail) = error as? StoreError else { return false }
            return detail.contains("created") || detail.contains("params")
        }
    }

    /// An empty blob stays an empty blob (SQLite binds a zero-length blob
    /// given no bytes as NULL, which the NOT NULL columns would refuse).
    @Test func emptyBytesRoundTrip() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try Store(directory: dir.path)
        defer { store.close() }
        let game = StoredGame(id: "g1", params: Data(), created: Date(), lastActivity: Date(), status: "playing")
        #expect(try store.createGame(game, ops: [StoredOp(gameID: "g1", author: Data([1]), seq: 1, lamport: 1, bytes: Data())]))
        #expect(try store.game(id: "g1")?.params == Data())
        #expect(try store.ops(gameID: "g1").first?.bytes == Data())
    }

    /// Reads run on read-only connections of their own while the writer
    /// commits: each sees a whole commit, never half of one.
    @Test func readsBesideWritesSeeWholeCommits() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try Store(directory: dir.path)
        defer { store.close() }
        let game = StoredGame(id: "g1", params: Data("{}".utf8), created: Date(), lastActivity: Date(), status: "playing")
        #expect(try store.createGame(game))
        let seen = try await withThrowingTaskGroup(of: [Int].self) { group in
            group.addTask {
                for i in 0..<100 {
                    // Two ops a commit: a read sees an even count.
                    let ops = (1...2).map {
                        StoredOp(gameID: "g1", author: Data([UInt8($0)]), seq: Int64(i + 1), lamport: Int64(i + 1), bytes: Data([UInt8(i % 256)]))
                    }
                    try store.append(ops, durability: .deferred)
                }
                return []
            }
            for _ in 0..<3 {
                group.addTask {
                    var counts: [Int] = []
                    for _ in 0..<100 { counts.append(try store.ops(gameID: "g1").count) }
                    return counts
                }
            }
            var all: [Int] = []
            for try await counts in group { all += counts }
            return all
        }
        #expect(seen.count == 300)
        #expect(seen.allSatisfy { $0 % 2 == 0 }, "a read saw half a commit")
        #expect(try store.opCount() == 200)
    }
}
