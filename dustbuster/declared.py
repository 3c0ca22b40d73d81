"""The declared candidates' round of one site's validation: the pairs (u, c) that the
round's fetches met — redirects and declared canonicals, kept by
:class:`dustbuster.core.validation.validate.RoundFetcher` — turned into candidates
(:func:`dustbuster.core.mining.declared.declared_candidates`) and decided by Figure 3 on the same test
list and fetch cache, after every mined candidate (the rules found valid so far cover them).
Shared by ``dustbuster validate`` and the validator agent (dustbuster.sitevalidation)."""

from __future__ import annotations

import dataclasses
import logging

from dustbuster.core.mining.declared import declared_candidates
from dustbuster.core.model.rules import Rule
from dustbuster.core.validation.validate import Round, ValidationResult, canonization_order, validate

log = logging.getLogger(__name__)


def _known(res: ValidationResult) -> list[Rule]:
    """The round's rules as rules_from_rewrites' ``known``: valid ones active, the others by text only."""
    valid = {(r.type, r.text) for r in res.valid}
    others = [dataclasses.replace(v.rule, status="invalid") for v in res.verdicts if (v.rule.type, v.rule.text) not in valid]
    return [*res.valid, *others, *(dataclasses.replace(r, status="invalid") for r in res.covered)]


async def declared_round(res: ValidationResult, rnd: Round) -> list[Rule]:
    """Decide the declared candidates of round ``rnd``'s fetches; ``res`` gains their verdicts and
    valid rules.  Returns the candidates (empty when no fetch met a declaration)."""
    rf = rnd.fetch
    cands = declared_candidates(list(rf.declared.items()), _known(res)) if rf.declared else []
    if not cands:
        return []
    more = await validate(rnd, [], [], extra=cands, valid_before=res.valid)
    log.info("%s declared pairs → %s candidates, %s valid", len(rf.declared), len(cands), len(more.valid))
    res.valid = canonization_order([*res.valid, *more.valid])
    res.verdicts += more.verdicts
    res.covered += more.covered
    res.fetches = rf.fetches
    res.outcomes = dict(rf.outcomes)
    return cands


__all__ = ["declared_round"]
