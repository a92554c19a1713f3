"""Benchmarks: speed goals live here, not in timed tests. See docs/performance.md."""
