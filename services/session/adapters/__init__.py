"""The session's adapters: JetStream event store, KV stores (snapshots, directory, leases, profiles), the engine client, and the in-memory ports for tests."""
