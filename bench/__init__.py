"""Performance benchmarks (docs/benchmarks.md), run by ``make bench`` / ``python -m bench.run``."""
