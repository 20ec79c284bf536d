@testable import SweeperStore

/// Runs raw SQL against a database file, as another program (a newer sweeperd) would.
func runSQLite(_ path: String, _ sql: String) throws {
    let connection = try SQLiteConnection(path: path)
    defer { connection.close() }
    try connection.execute(sql)
}
