"""An untested parameter is kept (ours, beyond the papers: issue 23; docs/validation.md "Parameter
strata").

Figure 3 (WWW 2007 §5.3) draws from the test URLs a rule changes, and this round's fetcher takes
out of that list the URLs found to be no page (a soft error, a 4xx: ``RoundFetcher.is_error``);
the parameter strata (:mod:`dustbuster.core.paramstrata`) then owe no positives for a stratum whose
pages all failed (``Family.gone``), and a parameter met only in URLs never drawn has no stratum at
all.  A whole-query rule "drop the query under /wiki" could so be published while it drops
``target=`` — a parameter that selects another page — on evidence that never carried ``target``.

Here, over **all** the logged test URLs the rule changes (those that left the test list, those
never drawn): every parameter the rule drops or maps, and the positives its comparisons showed.  A
parameter with no positive is *untested*, and a published rule must not change it:

* a query rule that drops (:class:`~dustbuster.core.scopedrules.QueryRule`, ``drop``) is
  **narrowed**: the untested names join its ``keep`` list ("drop the query under /wiki but
  target").  The evidence stays the same: an untested parameter has, by definition, no positive u
  carrying it (a positive u in scope carrying it would have it dropped and count for it), so on each
  positive u the narrowed rule keeps nothing more than the rule did and rewrites u to the same v —
  every positive still holds as it was.  The negatives on u carrying a kept name no longer concern
  the narrowed rule; they stay counted (the safe side).  Should a positive u carry a kept name all
  the same, the positives are recounted without it and Figure 3's ``(1 − ε)N`` (or
  ``min_samples``) is required of the rest, else the rule is undecided (``untested_parameter``).
* any other rule (one that maps values, a substring or pattern rule, a sort) cannot be narrowed by a
  keep list: it is undecided, reason ``untested_parameter`` — never valid.

A parameter rule changes one parameter: its positives are that parameter's, so it is never
narrowed.  The verdict records ``untested``: for each untested name the changed URLs carrying it
and whether it was kept; a cached verdict restores the narrowed rule from it (:func:`restored`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections import Counter
from typing import Any, Callable, Sequence

from .paramstrata import changed_params
from .scopedrules import QueryRule

log = logging.getLogger(__name__)


def applicable(test_urls: Sequence[str], rewrite: Callable[[str], str], changed: Sequence[str] | None) -> list[str]:
    """The test URLs (each once, in order) that ``rewrite`` changes: ``changed`` when given."""
    return [u for u in dict.fromkeys(test_urls) if rewrite(u) != u] if changed is None else list(changed)


def param_name(stratum: str) -> str:
    """``drops target`` or ``maps id (number)`` → the parameter's name."""
    return stratum.split(" ", 2)[1]


def changed_names(urls: Sequence[str], rewrite: Callable[[str], str]) -> Counter:
    """For each parameter the rewrite drops or maps on ``urls``: how many of them it changes there."""
    out: Counter = Counter()
    for u in urls:
        if "?" in u:
            out.update({param_name(s) for s in changed_params(u, rewrite(u))})
    return out


def untested(appl: Sequence[str], rewrite: Callable[[str], str], tested: Counter) -> dict[str, int]:
    """The parameters the rewrite changes on ``appl`` with no positive in ``tested`` (name →
    positives), each with the number of changed URLs carrying it."""
    return {n: k for n, k in sorted(changed_names(appl, rewrite).items()) if tested.get(n, 0) == 0}


def narrowed(rule: Any, names: Sequence[str]) -> Any | None:
    """The rule that keeps ``names`` as well, or None when its type cannot keep a parameter."""
    if not isinstance(rule, QueryRule) or rule.action != "drop":
        return None
    return dataclasses.replace(rule, keep=tuple(dict.fromkeys((*rule.keep, *names))))


def narrow_verdict(v_: Any, appl: Sequence[str], rewrite: Callable[[str], str], par: Any, need: float,
                   logged_errors: Sequence[str] = ()) -> None:
    """A valid verdict whose rule changes an untested parameter: its rule narrowed, or undecided
    (module docstring).  ``par``: the :class:`~dustbuster.core.paramstrata.ParamStrata` (``tested``:
    positives by parameter name, ``positive_urls``: the u of each positive); ``need``: the positives a
    decision requires; ``logged_errors``: URLs logged only with status >= 400 (never in the test list)."""
    if not v_.valid or v_.rule is None:
        return
    seen = set(appl)
    appl = [*appl, *(u for u in dict.fromkeys(logged_errors) if u not in seen and rewrite(u) != u)]
    names, positive_urls = untested(appl, rewrite, par.tested), par.positive_urls
    if not names:
        return
    rule = narrowed(v_.rule, list(names))
    v_.untested = [{"parameter": n, "urls": k, "kept": rule is not None} for n, k in names.items()]
    lost = sum(1 for u in positive_urls if rule is not None and rule.rewrite(u) != rewrite(u))
    if rule is None or (lost and v_.positives - lost < need):
        log.info("rule %s: untested parameters %s, undecided", v_.rule.text, ", ".join(names))
        v_.valid, v_.reason, v_.positives = None, "untested_parameter", v_.positives - lost
        return
    log.info("rule %s narrowed to %s: untested parameters %s", v_.rule.text, rule.text, ", ".join(names))
    v_.rule, v_.positives = rule, v_.positives - lost


def restored(v_: Any) -> Any:
    """A cached verdict with the narrowed rule its evidence names (``untested`` kept names)."""
    kept = [x["parameter"] for x in v_.untested if isinstance(x, dict) and x.get("kept") and x.get("parameter")]
    if kept and v_.valid:
        rule = narrowed(v_.rule, kept)
        if rule is not None:
            v_.rule = rule
    return v_


__all__ = ["applicable", "changed_names", "narrow_verdict", "narrowed", "restored", "untested"]
