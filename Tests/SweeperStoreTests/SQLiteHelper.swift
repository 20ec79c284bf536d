import GRDB

/// Runs raw SQL against a database file, as another program (a newer sweeperd) would.
func runSQLite(_ path: String, _ sql: String) throws {
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in try db.execute(sql: sql) }
    try queue.close()
}
