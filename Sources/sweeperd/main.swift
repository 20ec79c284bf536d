print("sweeperd: not yet")
