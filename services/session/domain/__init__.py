"""The game aggregate and its rules of idempotency: pure data and functions, no I/O."""
