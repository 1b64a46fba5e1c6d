"""Benchmarks and the NumPy/SciPy reference implementation msim is measured and tested against."""
