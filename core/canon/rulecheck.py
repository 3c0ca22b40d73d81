"""Checks of rules and rule sets that need no fetch: what makes a *set* of valid rules a correct
canonicalizer (beyond the papers; docs/validation.md "Set-level checks").

The papers validate rules one at a time (WWW 2007 Figures 3–4) and canonize with all of them
(thesis Figure 5.5, at most MA iterations).  Each rule can be "valid" on its own while the set is a
wrong canonicalizer: ``"$" → "?utm_source=feed0$"`` never changes a page, yet canonical URLs grow
at every iteration and are forms no crawler meets.  These checks close that gap:

* :func:`self_feeding`: a rule whose α is empty (or only an anchor) or occurs in its own β fires
  again on its output (a pattern rule: α matches an output of its own and rewrites it again);
  :func:`breaks_urls`: a rule turns an absolute URL into a non-URL;
* :func:`unobserved_output`: an expanding rule must map the test URLs mostly to URLs observed in
  the log (share ≥ :data:`MIN_OBSERVED_SHARE`): a canonical form should be a URL the site serves
  and crawlers meet, not an invention;
* :func:`drop_inverses`: of two rules that undo each other (α→β and β→α) the later one goes;
* :func:`drop_non_converging`: every test URL must reach a fixed point before MA iterations (then
  canon(canon(u)) = canon(u)); the rule that keeps a cycle going is dropped;
* :func:`drop_url_breaking`: canonization by the whole set must keep absolute URLs absolute;
* :func:`drop_unused`: a rule that never changes a test URL once the rules before it (in
  canonization order) have run is subsumed (except a rule :func:`carried` onto another spelling
  of its scope), and a parameter *replace* rule goes when removing the
  same parameter is valid in a scope that covers it (``sid=* → sid=02ec4e`` next to ``remove sid=*``).

:func:`check_static` runs them in that order; :mod:`dustbuster.core.validation.setcheck` adds the fetching check of the
composed canonicalizer.  Every function is pure and deterministic.
"""

from __future__ import annotations

from collections import Counter
from typing import Collection, Iterable, Sequence

from dustbuster.core.canon.canonize import Canonizer
from dustbuster.core.params import DEFAULT_MA
from dustbuster.core.model.pattern import PATTERN_SAMPLES
from dustbuster.core.model.rules import ParamRule, Rule
from dustbuster.core.urls.scope import in_scope
from dustbuster.core.urls.tokens import END, START
from dustbuster.core.canon.urlreach import URLReach

#: an expanding rule must turn at least this share of the test URLs it changes into URLs observed
#: in the log.  Its support counts pairs (u, R(u)) that were both observed, so a real expanding
#: alias (the site links both forms) maps most URLs to observed ones; a rule that invents forms
#: (appending a no-op parameter to every URL) maps almost none.  Half leaves room for a log that
#: saw only part of the site's pages in both forms.
MIN_OBSERVED_SHARE = 0.5

Dropped = list[tuple[Rule, str]]


def self_feeding(rule: Rule) -> str | None:
    """Why ``rule`` can fire again on its own output (None: it cannot by itself): its type's
    ``self_feeding``.  Parameter, query and case rules are idempotent (the parameter is gone or has
    the value already, the query is dropped or sorted, the path lower-case); substring and pattern
    rules say why they feed themselves (dustbuster.core.model.rules, dustbuster.core.model.pattern)."""
    return rule.self_feeding()


def unobserved_output(rule: Rule, urls: Iterable[str], observed: Collection[str] | None = None,
                      min_share: float = MIN_OBSERVED_SHARE, reach: URLReach | None = None) -> str | None:
    """Why ``rule`` invents URLs: the share of its outputs on ``urls`` that are ``observed`` (by
    default ``urls`` themselves) is below ``min_share``.  None when it applies to no URL.
    ``reach``: ``urls`` indexed by rule key (core/canon/urlreach.py), for a caller that checks many rules
    on one list; the same answer, only the URLs holding the rule's key tried."""
    if reach is None:
        urls = list(urls)
        reach = URLReach(urls)
    seen = reach.seen() if observed is None else observed
    outs = [v for _, v in reach.changes(rule)]
    if not outs:
        return None
    share = sum(v in seen for v in outs) / len(outs)
    if share < min_share:
        return f"unobserved_output: {share:.0%} of {len(outs)} outputs observed"
    return None


#: a candidate is flagged unsafe when it changes at least this share of the URLs ...
UNSAFE_CHANGED_SHARE = 0.5
#: ... and fewer than this share of its outputs are URLs of the list
UNSAFE_OBSERVED_SHARE = 0.05


def unsafe_candidate(rule: Rule, urls: Sequence[str], reach: URLReach | None = None) -> str | None:
    """Why applying the unvalidated candidate ``rule`` would mangle URLs (None: no such sign): it
    feeds itself, turns an absolute URL into something that is not one, or rewrites most URLs into
    forms never observed (``"/" → ""`` turns every URL into ``http:host…``).  For ``mine``'s output;
    ``urls`` is the mined list (or a sample of it).  ``reach``: ``urls`` indexed by rule key
    (:func:`unsafe_candidates` builds it once for all candidates)."""
    why = self_feeding(rule)
    if why:
        return why
    if reach is None:
        reach = URLReach(urls)  # in the caller's order: the same example URL on every run
    outs = reach.changes(rule)
    broken = next(((u, v) for u, v in outs if "://" in u and not is_http_url(v)), None)
    if broken:
        return f"not a URL: {broken[0]} becomes {broken[1]}"
    n = len(reach.urls)
    if n and len(outs) >= UNSAFE_CHANGED_SHARE * n:
        seen = reach.seen()
        observed = sum(v in seen for _, v in outs) / len(outs)
        if observed < UNSAFE_OBSERVED_SHARE:
            return f"rewrites {len(outs) / n:.0%} of the URLs, {observed:.0%} into observed ones"
    return None


def unsafe_candidates(rules: Iterable[Rule], urls: Sequence[str]) -> dict[str, str]:
    """Display text → :func:`unsafe_candidate`'s reason, for every flagged rule of ``rules``: the
    URLs scanned once for all the rules' keys (core/canon/urlreach.py), not once per rule (that took 8.5
    million rule applications for 1,704 candidates).  Equal to the per-rule calls, rule for rule."""
    rules = list(rules)
    return {r.text: why for r, why in zip(rules, unsafe_reasons(rules, urls)) if why}


def unsafe_reasons(rules: Sequence[Rule], urls: Sequence[str]) -> list[str | None]:
    """:func:`unsafe_candidate` of each of ``rules`` on ``urls``, in order, the URLs scanned once
    for all the rules' keys: a rule's answer does not depend on the other rules checked with it, so
    a caller may check its candidates in groups (core/mining/parallel.py) and get the same answers."""
    reach = URLReach(urls, rules)
    return [unsafe_candidate(r, urls, reach) for r in rules]


def is_http_url(url: str) -> bool:
    """``http(s)://host...``: what a rule's output and the model's canonical form must be."""
    scheme, sep, rest = url.partition("://")
    return bool(sep) and scheme.lower() in ("http", "https") and bool(rest.split("/", 1)[0])


def _inverse(a: Rule, b: Rule) -> bool:
    """``b`` undoes ``a`` (α→β and β→α of one type: substring rules; pattern rules whose β copies the
    placeholder): the type's ``is_inverse_of``."""
    return a.is_inverse_of(b)


def drop_inverses(rules: Sequence[Rule]) -> tuple[list[Rule], Dropped]:
    kept: list[Rule] = []
    dropped: Dropped = []
    for r in rules:
        undone = next((k for k in kept if _inverse(k, r)), None)
        if undone is not None:
            dropped.append((r, f"undoes {undone.text}"))
        else:
            kept.append(r)
    return kept, dropped


def reaches_fixed_point(ordered: Sequence[Rule], forms: Iterable[str], rounds: int) -> bool:
    """Applying ``ordered`` in turn to each internal form (``^url$``, or a pair's α or β) reaches a
    fixed point within ``rounds`` passes without meeting a form twice: stricter than the canonizer's
    ``converged``, for which rules that undo each other within one pass look converged.  A rule
    whose ``scan_key`` does not occur cannot change the form (the canonizer's argument): not tried.
    The candidate generators' check (core/mining/generalize.py, core/mining/learnrules.py)."""
    keyed = [(r, r.scan_key) for r in ordered]
    for w in dict.fromkeys(forms):
        seen = {w}
        for _ in range(rounds):
            prev = w
            for r, k in keyed:
                nw = w if k and k not in w else r.apply_internal(w)
                if nw != w:
                    if nw in seen:
                        return False
                    seen.add(nw)
                    w = nw
            if w == prev:
                break
        else:
            return False
    return True


def non_converging(rules: Sequence[Rule], urls: Iterable[str], ma: int = DEFAULT_MA) -> list[str]:
    """The URLs on which canonization stops at MA iterations instead of at a fixed point."""
    if not rules:
        return []
    canon = Canonizer(rules, ma)
    return [u for u in dict.fromkeys(urls) if not canon.canonize(u).converged]


def cycle_culprit(url: str, rules: Sequence[Rule], ma: int = DEFAULT_MA) -> int:
    """Index of the rule to blame for ``url`` not converging: among the rules that still fire in
    the last iteration, the last non-shrinking one (the one that grows the URL or turns it back),
    else the last one."""
    w = START + url + END
    last: list[int] = []
    for _ in range(ma):
        last = []
        for i, r in enumerate(rules):
            nw = r.apply_internal(w)
            if nw != w:
                last.append(i)
                w = nw
        if not last:
            break
    if not last:
        return len(rules) - 1
    growing = [i for i in last if rules[i].direction != "shrinking"]
    return (growing or last)[-1]


def drop_non_converging(rules: Sequence[Rule], urls: Iterable[str], ma: int = DEFAULT_MA) -> tuple[list[Rule], Dropped]:
    dropped: Dropped
    kept, dropped = list(rules), []
    urls = list(dict.fromkeys(urls))
    while True:
        bad = non_converging(kept, urls, ma)
        if not bad:
            return kept, dropped
        blame = Counter(cycle_culprit(u, kept, ma) for u in bad[:50])
        i = max(blame, key=lambda k: (blame[k], k))
        dropped.append((kept[i], f"non_converging: {len(bad)} test URLs, e.g. {bad[0]}"))
        del kept[i]


def carried(rule: Rule) -> bool:
    """``rule`` was carried through the set's substring rules onto the spelling they rewrite its
    scope into (core/validation/implied.py): implied by valid rules, it is kept where no test URL
    has that spelling yet — the log's URLs are not all the spellings clients use."""
    return bool((getattr(rule, "evidence", None) or {}).get("carried"))


def drop_unused(rules: Sequence[Rule], urls: Iterable[str], ma: int = DEFAULT_MA) -> tuple[list[Rule], Dropped]:
    """Drop replace rules of parameters whose removal is in the set with a scope that covers the
    replace rule's (dustbuster.core.urls.scope: ``""`` covers every scope, ``/a`` covers ``/a/b``), then,
    until nothing changes, the rules that change no test URL once the rules before them have run."""
    removes = [r for r in rules if isinstance(r, ParamRule) and r.action == "remove"]
    kept: list[Rule] = []
    dropped: Dropped = []
    for r in rules:
        by = None
        if isinstance(r, ParamRule) and r.action == "replace":
            by = next((x for x in removes if x.name == r.name and in_scope(r.scope, x.scope)), None)
        if by is not None:
            dropped.append((r, f"subsumed: {by.text} is in the set"))
        else:
            kept.append(r)
    urls = list(dict.fromkeys(urls))
    while kept:
        canon = Canonizer(kept, ma)
        uses = Counter(i for u in urls for i in set(canon.canonize(u).applied))
        unused = [i for i in range(len(kept)) if not uses[i] and not carried(kept[i])]
        if not unused:
            break
        for i in reversed(unused):
            dropped.append((kept[i], "subsumed: changes no test URL after the rules before it"))
            del kept[i]
    return kept, dropped


def breaks_urls(rule: Rule, urls: Iterable[str], reach: URLReach | None = None) -> str | None:
    """Why ``rule`` turns an absolute URL into something that is not one (None: it does not).
    ``reach``: ``urls`` indexed by rule key (core/canon/urlreach.py), shared by the rules of one check."""
    if reach is None:
        reach = URLReach(urls)
    for u, v in reach.changes(rule):
        if "://" in u and is_http_url(u) and not is_http_url(v):
            return f"not_a_url: {u} becomes {v}"
    return None


def _breaking_step(url: str, rules: Sequence[Rule], ma: int) -> int | None:
    """Index of the rule whose application first turns ``url`` (absolute) into a non-URL during
    its canonization; None when canonization keeps it a URL."""
    w = START + url + END
    for _ in range(ma):
        prev = w
        for i, r in enumerate(rules):
            nw = r.apply_internal(w)
            if nw != w:
                w = nw
                if not is_http_url(w[1:-1]):
                    return i
        if w == prev:
            break
    return None


def drop_url_breaking(rules: Sequence[Rule], urls: Iterable[str], ma: int = DEFAULT_MA) -> tuple[list[Rule], Dropped]:
    """Rules that, composed with the others, turn a test URL into a non-URL (each rule alone may
    not: ``"/www." → "/"`` after ``"^http:/" → "^http:"``...): the rule blamed most goes, until none."""
    kept, dropped = list(rules), []
    urls = [u for u in dict.fromkeys(urls) if "://" in u and is_http_url(u)]
    while kept:
        canon = Canonizer(kept, ma)
        bad = [u for u in urls if not is_http_url(canon(u))]
        if not bad:
            break
        blame = Counter(i for u in bad[:50] if (i := _breaking_step(u, kept, ma)) is not None)
        i = max(blame, key=lambda k: (blame[k], k)) if blame else len(kept) - 1
        dropped.append((kept[i], f"not_a_url: with the rules before it, {bad[0]} becomes {canon(bad[0])}"))
        del kept[i]
    return kept, dropped


def downgrades(rule: Rule, reach: URLReach) -> str | None:
    """Why ``rule`` may not be published when it makes an https test URL http: every consumer's
    admission refuses such a set (``downgrade``, dustbuster.core.canon.admission), so publishing it
    would freeze the site on its previous version."""
    for u, out in reach.changes(rule):
        if u[:8].lower() == "https://" and out[:7].lower() == "http://":
            return f"downgrade: {u[:200]} becomes {out[:200]}"
    return None


def check_static(rules: Sequence[Rule], urls: Iterable[str], ma: int = DEFAULT_MA) -> tuple[list[Rule], Dropped]:
    """All fetch-free checks, in order: self-feeding, URL-breaking or TLS-stripping rules, inverses,
    convergence, URL-breaking compositions, subsumption."""
    urls = list(dict.fromkeys(urls))
    dropped: Dropped = []
    kept = []
    reach = URLReach(urls, rules)
    for r in rules:
        why = self_feeding(r) or breaks_urls(r, urls, reach) or downgrades(r, reach)
        if why:
            dropped.append((r, why))
        else:
            kept.append(r)
    kept, d = drop_inverses(kept)
    dropped += d
    kept, d = drop_non_converging(kept, urls, ma)
    dropped += d
    kept, d = drop_url_breaking(kept, urls, ma)
    dropped += d
    kept, d = drop_unused(kept, urls, ma)
    return kept, dropped + d


__all__ = ["is_http_url", "reaches_fixed_point", "MIN_OBSERVED_SHARE", "PATTERN_SAMPLES",
           "UNSAFE_CHANGED_SHARE", "UNSAFE_OBSERVED_SHARE", "breaks_urls", "unsafe_candidate", "unsafe_candidates",
           "check_static", "cycle_culprit", "downgrades", "drop_url_breaking", "drop_inverses", "drop_non_converging",
           "drop_unused", "non_converging", "self_feeding", "unobserved_output"]
