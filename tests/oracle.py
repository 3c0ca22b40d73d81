"""Reference implementations the tests compare the engine with: the naive Figure 1 reference
(:mod:`dustdev.reference`; the benchmarks time it too) and the per-candidate fetch-free
checks as they were before issue 25 made them one pass over the URLs (:mod:`dustdev.checkref`)."""

from dustdev.checkref import (breaks_urls_plain, changed_plain, covered_by_plain, unobserved_output_plain,
                                      unsafe_candidate_plain, unsafe_flags_plain)
from dustdev.reference import brute_support, oracle_supports, oracle_supports_both, substrings

__all__ = ["breaks_urls_plain", "brute_support", "changed_plain", "covered_by_plain", "oracle_supports",
           "oracle_supports_both", "substrings", "unobserved_output_plain", "unsafe_candidate_plain",
           "unsafe_flags_plain"]
