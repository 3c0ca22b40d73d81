"""DustBuster's tunable parameters, with the papers' defaults.

Defaults are those of the thesis §6.2 ("DustBuster parameter settings") and the WWW 2007 paper §5:

* ``S`` = 35 tokens: maximum substring length considered in phase 1 (Figure 1, line 6).
  The ``^``/``$`` sentinel tokens count toward it.
* ``max_envelopes`` = 2048 (ours, not the papers'; 0 = no cap): most envelopes taken from one URL
  in phase 1.  A URL of n tokens has about n·S envelopes; when that exceeds the cap, S is lowered
  *for that URL* to the largest value that fits (:func:`dustbuster.core.mining.detect.max_span`), so the longest
  substrings of very long URLs are the ones left out.  Both engines (batch and streaming) apply
  it, so they stay equal; docs/cost.md explains the choice.
* ``t_low`` = 6: overflow threshold used for ranking and filtering (§5.2).
* ``t_high`` = 11: overflow threshold whose supports drive redundancy elimination (§5.2).
* ``ms`` = 3: minimum support (Figure 1, line 22).
* ``mrd`` = 0.05, ``mad`` = 1, ``mw`` = 1100: Figure 2's relative/absolute deficiency and window.
* ``ma`` = 10: maximum canonization iterations (thesis Figure 5.5).
* ``n`` = 100, ``epsilon`` = 0.05: validation count and refutation threshold (Figure 3).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from dustbuster.core.errors import ConfigError

#: the most canonization iterations (thesis Figure 5.5): DustParams.ma and every ``ma=`` default
DEFAULT_MA = 10


LANGUAGES = ("paper", "extended")


@dataclass(frozen=True)
class DustParams:
    S: int = 35
    t_low: int = 6
    t_high: int = 11
    ms: int = 3
    mrd: float = 0.05
    mad: int = 1
    mw: int = 1100
    ma: int = DEFAULT_MA
    #: validation count N (thesis §5.4, Figure 5.3).  The papers ran N = 100; the thesis' own
    #: experiment (§6.4, Figure 6.4: "100% precision is reached after 40 validations", 8 logs) says
    #: 40 suffice, and we take 40: a valid rule costs 38 comparisons instead of 95 (the validator's
    #: fetch budget), a rule is refuted at 2 negatives (ε·N) instead of 5 — stricter, not looser.
    n: int = 40
    epsilon: float = 0.05
    #: parameter rules (thesis §5.3; our choice, see docs/semantics.md): a rule is kept when its
    #: likely-similar support is >= ms and at least this fraction of its instances are likely similar.
    param_min_ratio: float = 0.75
    #: a query parameter is "popular" when it occurs in at least this many distinct URLs.
    param_min_urls: int = 3
    #: LikelySimilar filter on (False = every pair counts, ``--no-similarity``).
    similarity: bool = True
    #: min-hash sketches: fraction of equal components needed for "same page" (1.0 = "all 4 of 4",
    #: thesis §6.3), the one value for mining's LikelySimilar and the validator's page comparisons
    #: (DUST_SKETCH_THRESHOLD, ``--sketch-threshold``).
    sketch_threshold: float = 1.0
    #: most envelopes per URL in phase 1 (0 = no cap): bounds the work and state of one URL.
    max_envelopes: int = 2048
    #: LikelySimilar on sizes (ours, core/urls/urllist.py likely_similar): intervals closer than this
    #: fraction of the larger size overlap (0 = the paper's exact test).
    size_slack: float = 0.02
    #: the rule language mined and validated: "paper" (substring rules + global parameter rules,
    #: WWW 2007 + thesis §5.3) or "extended" (+ scoped parameter, query, case and pattern rules).
    language: str = "extended"

    def __post_init__(self) -> None:
        problems = []
        if self.S < 1:
            problems.append("S must be >= 1")
        if self.max_envelopes < 0:
            problems.append("max_envelopes must be >= 0 (0 = no cap)")
        if self.t_low < 2 or self.t_high < 2:
            problems.append("t_low and t_high must be >= 2 (a bucket needs two members)")
        if self.t_low > self.t_high:
            problems.append("t_low must not exceed t_high")
        if self.ms < 1:
            problems.append("ms must be >= 1")
        if not 0.0 <= self.mrd < 1.0:
            problems.append("mrd must be in [0, 1)")
        if self.mad < 0 or self.mw < 0:
            problems.append("mad and mw must be >= 0")
        if self.ma < 1:
            problems.append("ma must be >= 1")
        if self.n < 1 or not 0.0 < self.epsilon < 1.0:
            problems.append("n must be >= 1 and epsilon in (0, 1)")
        if not 0.0 <= self.param_min_ratio <= 1.0 or not 0.0 < self.sketch_threshold <= 1.0:
            problems.append("param_min_ratio must be in [0, 1] and sketch_threshold in (0, 1]")
        if not 0.0 <= self.size_slack < 1.0:
            problems.append("size_slack must be in [0, 1)")
        if self.language not in LANGUAGES:
            problems.append(f"language must be one of {LANGUAGES}")
        if problems:
            raise ConfigError("; ".join(problems))

    def with_(self, **changes: Any) -> "DustParams":
        known = {f.name for f in fields(self)}
        unknown = set(changes) - known
        if unknown:
            raise ConfigError(f"unknown parameter(s): {', '.join(sorted(unknown))}")
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}
