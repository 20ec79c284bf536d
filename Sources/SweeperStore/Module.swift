/// SQLite storage for sweeperd: identity, circle, settings, peers, games, ops.
enum SweeperStoreModule {}
