"""One general rule over its literal instances (beyond the papers; docs/rules.md).

Phase 1 (WWW 2007 Figure 1) finds a rewrite once per context it saw: on a wiki whose page ids
name namespaces with ``:`` where its other links use ``/``, ``"pkg:misc:" → "pkg/misc/"``,
``":devel:" → "/devel/"``, ``"net:web:" → "net/web/"``, … — one literal rule per namespace, and
none for a namespace the log never showed.  Figure 2's refinement (Lemma 5.3) keeps the literal
rules apart: none refines another, and the pattern miner (core/mining/generalize.py) sees no family,
since their contexts differ.

Here each likely pair is first reduced to its **core**: the same tokens removed from the start of
α and β while they agree, and from their ends (``"pkg:misc:" → "pkg/misc/"`` has the core
``":misc:" → "/misc/"``; the pair refines its core, WWW 2007 §5.2).  The cores of all pairs then go
through the pattern miner (:func:`dustbuster.core.mining.generalize.generalize_pairs`, its families of at
least three distinct cores, its checks), which folds ``":misc:" → "/misc/"``, ``":devel:" →
"/devel/"``, ``":web:" → "/web/"`` into ``":{word}:" → "/{word}/"`` — a pattern rule, a type we have.
A rule that the pattern miner already finds on the pairs themselves is not repeated, nor one whose
β is literal and whose α has no literal letter or digit besides the placeholder (``"/{word}/" →
"/"`` over ``"^http://h/{word}/" → "^http://h/"``: the context that made the instances safe is gone);
a core never starts in the scheme or authority (:func:`core_of`).

The rule carries ``evidence.over_literals`` (its literal instances, the first ten) and is decided
by the validator before the pairs (core/validation/validate.py): once valid, the instances it covers are
dropped unfetched as refinements (:func:`dustbuster.core.canon.coverage.covered_by`); when it fails, the
instances are decided one by one as before.
"""

from __future__ import annotations

import re
from typing import Sequence

from dustbuster.core.model.pair import Pair
from dustbuster.core.mining.generalize import _host_end, generalize_pairs
from dustbuster.core.params import DustParams
from dustbuster.core.model.pattern import _PH, PatternRule
from dustbuster.core.urls.tokens import display, tokenize

_ALNUM = re.compile(r"[A-Za-z0-9]")


def core_of(pair: Pair) -> Pair | None:
    """The pair without the tokens α and β share at their start and end (module docstring; the
    pair itself when they share none); None when the rewrite starts in the scheme or authority
    (``"^http://www.h/" → "^http://h/"``: a pattern rule's unanchored α never matches there,
    core/model/pattern.py; the pattern miner keeps such families anchored)."""
    ta, tb = tokenize(pair.alpha), tokenize(pair.beta)
    i = 0
    while i < min(len(ta), len(tb)) - 1 and ta[i] == tb[i]:
        i += 1
    j = 0
    while j < min(len(ta), len(tb)) - i - 1 and ta[-1 - j] == tb[-1 - j]:
        j += 1
    if not i and not j:
        return pair
    if sum(map(len, ta[:i])) < _host_end(pair.alpha) or sum(map(len, tb[:i])) < _host_end(pair.beta):
        return None  # the rewrite reaches into scheme://authority: an unanchored core never matches there
    a, b = "".join(ta[i:len(ta) - j]), "".join(tb[i:len(tb) - j])
    if not a or a == b:
        return None
    return Pair(a, b, pair.support, pair.support_high)


def general_over_literals(pairs: Sequence[Pair], params: DustParams | None = None,
                          known: Sequence[PatternRule] = ()) -> list[PatternRule]:
    """Pattern rules over the cores of ``pairs`` (module docstring) that ``known`` (the pattern
    miner's rules on the pairs) does not hold already."""
    cores: dict[tuple[str, str], list[Pair]] = {}
    for p in pairs:
        c = core_of(p)
        if c is not None:
            cores.setdefault((c.alpha, c.beta), []).append(p)
    if len(cores) < 3:
        return []
    merged = [Pair(a, b, sum(p.support for p in ps), sum(p.support_high for p in ps)) for (a, b), ps in cores.items()]
    seen = {r.text for r in known}
    out = []
    for rule in generalize_pairs(merged, params):
        if rule.text in seen or (not _PH.search(rule.beta) and not _ALNUM.search(_PH.sub("", rule.alpha))):
            continue  # known, or a literal β after nothing but separators ("/{word}/" → "/"): too wide
        instances = [p for (a, b), ps in cores.items() if rule.apply_internal(a) == b for p in ps]
        texts = [f'"{display(p.alpha)}" → "{display(p.beta)}"' for p in instances[:10]]
        ev = dict(rule.evidence) | {"over_literals": texts, "instances": len(instances)}
        out.append(PatternRule(rule.alpha, rule.beta, support=rule.support, members=len(instances), evidence=ev))
    return out
