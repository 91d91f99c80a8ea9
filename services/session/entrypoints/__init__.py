"""What drives the session: the gRPC servicer, the ticker, the keeper, timers, presence, the follower and the progress relay."""
