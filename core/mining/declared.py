"""The site's own declarations as a source of candidate rules (ours, beyond the papers;
docs/validation.md "Declared candidates").

Every fetch that meets a redirect (u → 30x → c) or a declared canonical c ≠ u
(:meth:`dustbuster.core.validation.identity.PageIdentity.declared`) gives a pair (u, c).  Families of such pairs
go through the one generalisation of pairs into rules that the learned model's rewrites use
(:func:`dustbuster.core.mining.learnrules.rules_from_rewrites`: parameter, query, case, host and literal
shapes, literal families generalised by :func:`dustbuster.core.mining.generalize.generalize_pairs`).  The
rules are candidates like any other (status ``likely``, ``evidence.source = "declared"``), decided
by fetching: a declaration is evidence, not proof — many sites declare wrong canonicals (the home
page for every page, the first page for every page of a listing)."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from dustbuster.core.mining.learnrules import rules_from_rewrites
from dustbuster.core.model.rules import Rule

#: declared candidates per round at most
MAX_DECLARED_RULES = 30


def declared_candidates(pairs: Sequence[tuple[str, str]], known: Sequence[Rule] = (),
                        max_rules: int = MAX_DECLARED_RULES) -> list[Rule]:
    """Candidate rules explaining the declared pairs (u, c), each tagged ``source: declared``."""
    out = []
    for r in rules_from_rewrites(sorted(set(pairs)), known, max_rules=max_rules):
        ev = dict(r.evidence or {})
        ev["source"] = "declared"
        out.append(dataclasses.replace(r, evidence=ev))
    return out


__all__ = ["MAX_DECLARED_RULES", "declared_candidates"]
