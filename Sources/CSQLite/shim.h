// The SQLite C API for the CSQLite module (pkg-config: sqlite3), plus the
// destructor constant SQLite's macros spell as a cast, which Swift cannot
// import: SQLITE_TRANSIENT tells SQLite to copy a bound value at once.
#ifndef SWEEPER_CSQLITE_SHIM_H
#define SWEEPER_CSQLITE_SHIM_H
#include <sqlite3.h>

static inline int sweeper_sqlite_bind_text(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}

static inline int sweeper_sqlite_bind_blob(sqlite3_stmt *statement, int index, const void *bytes, int length) {
    if (length == 0) return sqlite3_bind_zeroblob(statement, index, 0);
    return sqlite3_bind_blob(statement, index, bytes, length, SQLITE_TRANSIENT);
}

#endif
