"""The naive Figure 1 reference for the tests: :mod:`dustbuster.core.reference` (the benchmarks time
it too)."""

from dustbuster.core.reference import brute_support, oracle_supports, oracle_supports_both, substrings

__all__ = ["brute_support", "oracle_supports", "oracle_supports_both", "substrings"]
