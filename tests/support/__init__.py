"""Test support: a real NATS server (tests.support.nats) and in-process or subprocess
CellWar services on loopback (tests.support.stack)."""
