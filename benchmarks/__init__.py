"""Benchmarks: msim timed against its NumPy/SciPy twins in msim.reference (run from a checkout)."""
