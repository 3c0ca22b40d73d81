"""The host-alias round of one site's validation: the declared origins' alias candidates
(:mod:`dustbuster.core.mining.hostalias`) decided by Figure 3 (WWW 2007 §5.3) on made samples —
the site's test paths under each alias — with the round's fetcher (its cache, the site's pace and
budget) and verdict cache.  Ours, beyond the papers; docs/validation.md "Host aliases"."""

from __future__ import annotations

import dataclasses
import logging
from typing import Mapping, Sequence

from dustbuster.core.mining.hostalias import alias_candidates, alias_samples, origin_of
from dustbuster.core.model.rules import Rule
from dustbuster.core.validation.round import Round
from dustbuster.core.validation.validate import ValidationResult, canonization_order, validate

log = logging.getLogger(__name__)


def pointed_origins(fronts: Mapping[str, object]) -> dict[str, str]:
    """Origin → the origin its front page points to (where it redirected, else its declared
    canonical), from the fetched front pages (origin → Fetched)."""
    out: dict[str, str] = {}
    for origin, f in fronts.items():
        ident = getattr(f, "identity", None)
        if ident is None:
            continue
        for url in (ident.final_url, ident.canonical):
            target = origin_of(url) if url else None
            if target and target != origin:
                out[origin] = target
                break
    return out


async def alias_round(res: ValidationResult, rnd: Round, origins: Sequence[str],
                      pointed: Mapping[str, str] | None = None, seed: int = 40_000) -> tuple[list[Rule], list[str]]:
    """Decide the alias candidates of the site's declared ``origins``; ``res`` gains their verdicts
    and valid rules.  Returns the candidates tried and the made samples of the valid ones (the
    set-level check runs on them too: the log's URLs may name no alias at all)."""
    cands = alias_candidates(origins, pointed)
    tried: list[Rule] = []
    made: list[str] = []
    for k, rule in enumerate(cands):
        samples = alias_samples(rule, rnd.test_urls, origins, seed=seed + k)
        if not samples:
            continue
        tried.append(rule)
        sub = dataclasses.replace(rnd, test_urls=samples, reach=None)
        more = await validate(sub, [], [rule], seed=seed + k)
        res.valid = canonization_order([*res.valid, *more.valid])
        res.verdicts += more.verdicts
        if more.valid:
            made += samples
    if tried:
        log.info("%s host-alias candidates of %s declared origins, %s valid", len(tried), len(set(origins)),
                 sum(1 for v in res.verdicts if v.valid and v.rule in tried))
        res.fetches = rnd.fetch.fetches
        res.outcomes = dict(rnd.fetch.outcomes)
    return tried, made


__all__ = ["alias_round", "pointed_origins"]
