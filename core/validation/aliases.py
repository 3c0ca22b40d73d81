"""The host-alias round of one site's validation: the declared origins' alias candidates
(:mod:`dustbuster.core.mining.hostalias`) decided by Figure 3 (WWW 2007 §5.3) on made samples —
the site's test paths under each alias — with the round's fetcher (its cache, the site's pace and
budget) and verdict cache.  Ours, beyond the papers; docs/validation.md "Host aliases"."""

from __future__ import annotations

import dataclasses
import logging
from typing import Mapping, Sequence

from dustbuster.core.errors import RuleError
from dustbuster.core.mining.hostalias import alias_candidates, alias_samples, origin_of
from dustbuster.core.model.hostrules import host_rule_hosts
from dustbuster.core.model.rules import Rule, SubstringRule
from dustbuster.core.urls.tokens import START
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


def onto_targets(rules: Sequence[Rule]) -> list[Rule]:
    """The rules with each substring or pattern rule anchored on an alias origin moved onto its
    target (ours, beyond the papers): with ``"^a/" → "^t/"`` valid on every page of the site, a
    valid ``"^a/x" → "^a/y"`` implies ``"^t/x" → "^t/y"`` (``t/x`` ≡ ``a/x`` ≡ ``a/y`` ≡ ``t/y``),
    and only the latter ever fires on a URL entered by either host (the host rule moves ``a`` to
    ``t`` first).  A rule whose α and β are anchored on one alias is moved whole; a rule that names
    the alias only in α is moved there; the host rules themselves, and every other rule, stay.
    One rule per law: the literal for the alias goes, the same law for the target stays once.

    >>> from dustbuster.core.model.rules import SubstringRule
    >>> rules = [SubstringRule.from_parts("http://www.w.test/", "http://w.test/", anchor_start=True),
    ...          SubstringRule.from_parts("http://www.w.test/a/", "http://www.w.test/b/", anchor_start=True),
    ...          SubstringRule.from_parts("http://w.test/a/", "http://w.test/b/", anchor_start=True),
    ...          SubstringRule.from_parts("/index.html", "/")]
    >>> [r.text for r in onto_targets(rules)]
    ['"^http://www.w.test/" → "^http://w.test/"', '"^http://w.test/a/" → "^http://w.test/b/"', '"/index.html" → "/"']
    """
    moves: dict[str, str] = {}
    for r in rules:
        pair = host_rule_hosts(r)
        if pair is not None and isinstance(r, SubstringRule):
            a, t = r.alpha[1:], r.beta[1:]  # "scheme://host[:port]/", each
            if a not in moves and t not in moves:
                moves[a] = t
    if not moves:
        return list(rules)
    out: list[Rule] = []
    seen: set[tuple[str, str]] = set()
    for r in rules:
        alpha, beta = getattr(r, "alpha", None), getattr(r, "beta", None)
        if isinstance(alpha, str) and isinstance(beta, str) and host_rule_hosts(r) is None and alpha.startswith(START):
            src = next((a for a in moves if alpha.startswith(START + a)), None)
            if src is not None:
                dst = moves[src]
                new_beta = START + dst + beta[1 + len(src):] if beta.startswith(START + src) else beta
                ev = dict(r.evidence or {}) | {"moved_from": r.text, "via_alias": src}
                try:
                    r = dataclasses.replace(r, alpha=START + dst + alpha[1 + len(src):], beta=new_beta,
                                            evidence=ev)
                except RuleError:  # the moved rule cannot be one (it would feed itself): the literal stays
                    pass
        key = (r.type, r.text)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


__all__ = ["alias_round", "onto_targets", "pointed_origins"]
