/// Composition of the sweeperd services.
enum SweeperDaemonModule {}
