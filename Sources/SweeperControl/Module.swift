/// The control-socket protocol shared by sweeperd and its clients.
enum SweeperControlModule {}
