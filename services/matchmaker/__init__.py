"""The matchmaker service (docs/architecture/matchmaking.md, docs/ratings.md): tickets in NATS, the matching step, matches
formed through the session service, OpenSkill ratings from ``GameFinished``."""
