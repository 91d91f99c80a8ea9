"""Performance benchmarks (DESIGN.md §8), run by ``make bench`` / ``python -m bench.run``."""
