"""The matchmaker service (DESIGN §1, §11): tickets in NATS, the matching step, matches
formed through the session service, OpenSkill ratings from ``GameFinished``."""
