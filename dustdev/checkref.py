"""The per-candidate fetch-free checks as they were before issue 25 made them one pass over the URLs
(core/canon/urlreach.py): each applies its rule to every test URL.  The reference the one-pass checks are
compared with — tests/test_urlreach.py for equality, bench/bench_commands.py for time — as
:mod:`dustdev.reference` is Figure 1's.  Not used by the product."""

from __future__ import annotations

import random
from typing import Collection, Iterable, Sequence

from dustbuster.core.canon.canonize import Canonizer, canonical
from dustbuster.core.canon.rulecheck import MIN_OBSERVED_SHARE, UNSAFE_CHANGED_SHARE, UNSAFE_OBSERVED_SHARE, is_http_url, self_feeding
from dustbuster.core.model.rules import Rule, SubstringRule, canonization_order
from dustbuster.core.urls.tokens import END, START


def unobserved_output_plain(rule: Rule, urls: Iterable[str], observed: Collection[str] | None = None,
                            min_share: float = MIN_OBSERVED_SHARE) -> str | None:
    urls = list(urls)
    seen = set(urls) if observed is None else observed
    outs = [v for u in dict.fromkeys(urls) if (v := canonical(u, [rule], ma=1)) != u]
    if not outs:
        return None
    share = sum(v in seen for v in outs) / len(outs)
    if share < min_share:
        return f"unobserved_output: {share:.0%} of {len(outs)} outputs observed"
    return None


def unsafe_candidate_plain(rule: Rule, urls: Sequence[str]) -> str | None:
    why = self_feeding(rule)
    if why:
        return why
    seen = dict.fromkeys(urls)
    outs = _one_application(rule, seen)
    broken = next(((u, v) for u, v in outs if "://" in u and not is_http_url(v)), None)
    if broken:
        return f"not a URL: {broken[0]} becomes {broken[1]}"
    if seen and len(outs) >= UNSAFE_CHANGED_SHARE * len(seen):
        observed = sum(v in seen for _, v in outs) / len(outs)
        if observed < UNSAFE_OBSERVED_SHARE:
            return f"rewrites {len(outs) / len(seen):.0%} of the URLs, {observed:.0%} into observed ones"
    return None


def _one_application(rule: Rule, urls: Iterable[str]) -> list[tuple[str, str]]:
    key = rule.scan_key
    outs = []
    for u in urls:
        w = f"{START}{u}{END}"
        if (key and key not in w) or START in u or END in u:
            continue
        v = rule.apply_internal(w)
        if v != w:
            outs.append((u, v[1:-1]))
    return outs


def unsafe_flags_plain(result, urls: Iterable[str], sample: int = 5000) -> dict[str, str]:
    """core.mine.unsafe_flags with the per-candidate check."""
    ordered = sorted(urls)
    if len(ordered) > sample:
        ordered = random.Random(0).sample(ordered, sample)
    pairs = result.kept if result.stage == "eliminate" else result.detected
    rules = [SubstringRule(p.alpha, p.beta) for p in pairs] + result.param_rules() + result.general
    return {r.text: why for r in rules if (why := unsafe_candidate_plain(r, ordered))}


def breaks_urls_plain(rule: Rule, urls: Iterable[str]) -> str | None:
    for u in urls:
        if "://" in u and is_http_url(u):
            v = canonical(u, [rule], ma=1)
            if v != u and not is_http_url(v):
                return f"not_a_url: {u} becomes {v}"
    return None


def covered_by_plain(rule: Rule, valid: Sequence[Rule], test_urls: Sequence[str]) -> bool:
    if not valid:
        return False
    canon = Canonizer(canonization_order(valid))
    changed = False
    for u in dict.fromkeys(test_urls):
        v = canonical(u, [rule], ma=1)
        if v != u:
            changed = True
            if canon(u) != canon(v):
                return False
    return changed


def changed_plain(rule: Rule, test_urls: Iterable[str]) -> list[str]:
    """Figure 3's applicable URLs as validate_rewrite listed them."""
    return [u for u in dict.fromkeys(test_urls) if canonical(u, [rule], ma=1) != u]


__all__ = ["breaks_urls_plain", "changed_plain", "covered_by_plain", "unobserved_output_plain", "unsafe_candidate_plain",
           "unsafe_flags_plain"]
