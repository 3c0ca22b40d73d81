"""An untested parameter is kept (ours, beyond the papers; docs/validation.md "Parameter
strata").

Figure 3 (WWW 2007 §5.3) draws from the test URLs a rule changes, and this round's fetcher takes
out of that list the URLs found to be no page (a soft error, a 4xx: ``RoundFetcher.is_error``);
the parameter strata (:mod:`dustbuster.core.validation.paramstrata`) then owe no positives for a stratum whose
pages all failed (``Family.gone``), and a parameter met only in URLs never drawn has no stratum at
all.  A whole-query rule "drop the query under /wiki" could so be published while it drops
``target=`` — a parameter that selects another page — on evidence that never carried ``target``.

Here, over **all** the logged test URLs the rule changes (those that left the test list, those
never drawn): every parameter the rule drops or maps, and the positives its comparisons showed.  A
parameter with no positive is *untested*, and a published rule must not change it:

* a query rule that drops (:class:`~dustbuster.core.model.scopedrules.QueryRule`, ``drop``) is
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

**Published as a closed list** (:func:`closed`).  A valid "drop the query [but K]" rule is
published as the list of the parameters its positives dropped (``only``: "drop fbclid, ref,
uselang from the query under /wiki"), so a name first seen later — one no test URL of its scope
carried, such as ``diff`` and ``oldid`` once a query-to-path mapping moves
``/w/index.php?title=X&diff=…`` under ``/wiki`` — is kept, never dropped unseen (the evidence
covers the names it compared, and no more).  A name is listed when :data:`PARAM_MIN_POSITIVES`
positives or more dropped it (one login link with ``warning=prefsnologintext2`` says nothing of
the other warnings that page can show).  A name whose values in the site's test URLs are an
enumeration is listed only when its positives showed each value (:func:`covered`): positives on
``action=view`` under ``/wiki`` say nothing of ``action=info``, which the mapping brings there.
A positive that dropped a name left out no longer counts for the listed rule, and Figure 3's
``(1 − ε)N`` (or ``min_samples``) is required of the rest, else the rule is undecided
(``untested_value``).

A parameter rule changes one parameter: its positives are that parameter's, so it is never
narrowed.  The verdict records ``untested``: for each untested name the changed URLs carrying it
and whether it was kept; a cached verdict restores the narrowed rule from it (:func:`restored`).

**A refutation pinned on untested parameters** (:func:`refuted_by`).  "drop the query under /wiki"
may be refuted by negatives on ``Special:ActiveUsers?username=…&groups[]=…`` while its positives
carried ``utm_source``, ``ref`` and ``fbclid``: the negatives say those *other* parameters select
the page, not that the tested ones do.  When every negative u carries a parameter that the rule
drops on u and that no positive tested, the rule narrowed to keep those parameters is a new
candidate, decided by Figure 3 afresh (its own draw, strata and positives; pages fetched already
are reused): ``core/validation/validate.py`` tries it at most :data:`NARROWINGS` times.  Only a negative whose
changed parameters are **all** untested is pinned so; one that also changes a tested parameter
is a refutation of what was tested, and the rule stays refuted.  Ours, beyond the papers.  The
refuted verdict's negatives are not carried over, nor needed: the narrowed rule keeps every
parameter those u had changed, so it leaves them unchanged and they say nothing of it.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import Counter
from urllib.parse import parse_qsl, unquote_plus
from typing import Any, Callable, Sequence, cast

from dustbuster.core.validation.paramstrata import PARAM_MIN_POSITIVES, changed_params, value_strata
from dustbuster.core.urls import query
from dustbuster.core.model.scopedrules import QueryRule
from dustbuster.core.urls.scope import scope_names

log = logging.getLogger(__name__)

#: times a refuted rule is narrowed and decided again (:func:`refuted_by`)
NARROWINGS = 2


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
    return {n: k for n, k in sorted(changed_names(appl, rewrite).items()) if n and tested.get(n, 0) == 0}


def raw_forms(urls: Sequence[str], names: Sequence[str]) -> dict[str, list[str]]:
    """Each parameter name of ``names`` (decoded, as the strata name them: ``groups[]``) → its forms
    as written in ``urls`` (``groups%5B%5D``): the forms a query rule's ``keep`` list matches."""
    out: dict[str, list[str]]
    want, out = set(names), {n: [] for n in names}
    for u in urls:
        for raw, _ in query.split(u.partition("#")[0])[1] or ():
            name = unquote_plus(raw)
            if name in want and raw not in out[name]:
                out[name].append(raw)
    return {n: forms or [n] for n, forms in out.items()}


def narrowed(rule: Any, names: Sequence[str]) -> Any | None:
    """The rule that keeps ``names`` as well, or None when its type cannot keep a parameter.  A
    closed list (``only``) loses those names instead; None when nothing would be left to drop."""
    if not isinstance(rule, QueryRule) or rule.action != "drop":
        return None
    if rule.only:
        only = tuple(n for n in rule.only if n not in set(names))
        return dataclasses.replace(rule, only=only) if only else None
    return dataclasses.replace(rule, keep=tuple(dict.fromkeys((*rule.keep, *names))))


def narrow_verdict(v_: Any, appl: Sequence[str], rewrite: Callable[[str], str], par: Any, need: float,
                   logged_errors: Sequence[str] = (), test_urls: Sequence[str] = ()) -> None:
    """A valid verdict whose rule changes an untested parameter: its rule narrowed, or undecided
    (module docstring).  ``par``: the :class:`~dustbuster.core.validation.paramstrata.ParamStrata` (``tested``:
    positives by parameter name, ``positive_urls``: the u of each positive); ``need``: the positives a
    decision requires; ``logged_errors``: URLs logged only with status >= 400 (never in the test list)."""
    if not v_.valid or v_.rule is None:
        return
    seen = set(appl)
    appl = [*appl, *(u for u in dict.fromkeys(logged_errors) if u not in seen and rewrite(u) != u)]
    names, positive_urls = untested(appl, rewrite, par.tested), par.positive_urls
    if names:
        _narrow(v_, appl, rewrite, names, positive_urls, need)
    if v_.valid:
        tested = covered([n for n, k in par.tested.items() if k >= PARAM_MIN_POSITIVES], positive_urls, test_urls)
        forms = raw_forms(positive_urls, tested)
        rule = closed(v_.rule, [f for n in tested for f in forms[n]])
        if rule is None:
            if isinstance(v_.rule, QueryRule) and v_.rule.action == "drop" and not v_.rule.only:
                log.info("rule %s: no parameter tested enough to list, undecided", v_.rule.text)
                v_.valid, v_.reason = None, "untested_value"  # never the open rule
            return
        lost = sum(1 for u in positive_urls if rule.rewrite(u) != v_.rule.rewrite(u))
        if lost and v_.positives - lost < need:  # too few positives rewrite as the listed rule does
            log.info("rule %s: values no positive showed, undecided", v_.rule.text)
            v_.valid, v_.reason, v_.positives = None, "untested_value", v_.positives - lost
            return
        v_.rule, v_.dropped_only, v_.positives = rule, list(rule.only), v_.positives - lost


def _values(url: str, name: str) -> list[str]:
    return [v for k, v in parse_qsl(url.partition("#")[0].partition("?")[2], keep_blank_values=True) if k == name]


def covered(tested: Sequence[str], positive_urls: Sequence[str], test_urls: Sequence[str]) -> list[str]:
    """The names of ``tested`` whose values the positives covered: a name the site's test URLs
    give an enumeration of values (``action=view|edit|info``: paramstrata.value_strata) only where
    each of those values held by two URLs or more had a positive; any other name (one value, or a
    session id's many) as it is.

    >>> covered(["action", "ref"], ["http://h/wiki/A?action=view&ref=x"],
    ...         ["http://h/w/index.php?title=A&action=info", "http://h/w/index.php?title=B&action=info",
    ...          "http://h/wiki/A?action=view&ref=x", "http://h/wiki/B?action=view"])
    ['ref']
    """
    out = []
    for name in tested:
        holding = [u for u in test_urls if "?" in u and _values(u, name)]
        values = {v for v, us in value_strata(holding, name).items() if len(us) >= 2}  # one URL: no member
        if values and not values <= {vs[0] for u in positive_urls if (vs := _values(u, name))}:
            continue  # a value no positive showed may select another view: the name stays
        out.append(name)
    return out


def closed(rule: Any, names: Sequence[str]) -> Any | None:
    """A "drop the query [but K]" rule as the closed list of the parameters its evidence dropped
    (``names``, as written in the URLs): a name first seen later is kept, never dropped unseen.
    None for any other rule, a rule that is a closed list already, or when no name is left."""
    if not isinstance(rule, QueryRule) or rule.action != "drop" or rule.only:
        return None
    keep = set(rule.keep) | scope_names(rule.scope)
    only = tuple(sorted({n for n in names if n and n not in keep and not set(n) & set("&=?#")}))
    return dataclasses.replace(rule, only=only) if only else None


def _narrow(v_: Any, appl: Sequence[str], rewrite: Callable[[str], str], names: dict[str, int],
            positive_urls: Sequence[str], need: float) -> None:
    forms = raw_forms(appl, list(names))
    rule = narrowed(v_.rule, [f for n in names for f in forms[n]])
    v_.untested = [{"parameter": n, "urls": k, "kept": rule is not None, "keep": forms[n]} for n, k in names.items()]
    lost = sum(1 for u in positive_urls if rule is not None and rule.rewrite(u) != rewrite(u))
    if rule is None or (lost and v_.positives - lost < need):
        log.info("rule %s: untested parameters %s, undecided", v_.rule.text, ", ".join(names))
        v_.valid, v_.reason, v_.positives = None, "untested_parameter", v_.positives - lost
        return
    log.info("rule %s narrowed to %s: untested parameters %s", v_.rule.text, rule.text, ", ".join(names))
    v_.rule, v_.positives = rule, v_.positives - lost


def refuted_by(v_: Any, negatives: Sequence[str], rewrite: Callable[[str], str], tested: Counter) -> dict[str, int]:
    """A refuted verdict of a ``drop`` query rule whose every negative u changes only parameters that
    no positive tested: those parameters (name → negatives carrying them), the names a narrowed rule
    keeps before it is decided again (core/validation/validate.py ``validate_rule``).  The narrowed rule then
    leaves each of those u unchanged.  ``{}`` when the rule cannot keep a parameter, had no
    positive, or one negative also changes a tested parameter (a refutation of what was tested: the
    narrowed rule would still change that u, and its negative would stand)."""
    if v_.valid is not False or not negatives or v_.positives == 0 or narrowed(v_.rule, ()) is None:
        return {}
    out: Counter = Counter()
    for u in negatives:
        names = {param_name(s) for s in changed_params(u, rewrite(u))} if "?" in u else set()
        if not names or "" in names or any(tested.get(n, 0) for n in names):
            return {}  # pinned (also) on a tested parameter, or on nothing a keep list can name
        out.update(names)
    return dict(sorted(out.items()))


def stale_keep(entries: Any) -> bool:
    """A cached verdict's ``untested`` entries written before kept names carried their spellings
    (``keep``): ``groups[]`` would not keep ``groups%5B%5D``, so the verdict is decided again."""
    return isinstance(entries, list) and any(isinstance(x, dict) and x.get("kept") and "keep" not in x for x in entries)


def kept_after_refutation(names: dict[str, int], negatives: Sequence[str]) -> list[dict]:
    """The ``untested`` evidence entries of parameters a narrowed rule keeps because the rule's
    ``negatives`` carried them (:func:`refuted_by`): a cached verdict restores the rule from them."""
    forms = raw_forms(negatives, list(names))
    return [{"parameter": n, "kept": True, "keep": forms[n], "negatives": k} for n, k in names.items()]


def keep_names(entries: Sequence[dict]) -> list[str]:
    """The parameter forms that ``untested`` entries say a narrowed rule keeps."""
    out: list[str] = []
    for x in entries:
        if isinstance(x, dict) and x.get("kept") and x.get("parameter"):
            forms = cast(list, x.get("keep")) if isinstance(x.get("keep"), list) else [x["parameter"]]
            out += [f for f in forms if isinstance(f, str) and f]
    return list(dict.fromkeys(out))


def restored(v_: Any) -> Any:
    """A cached verdict with the narrowed rule its evidence names (``untested`` kept names), as
    the closed list it was published as (``dropped_only``)."""
    kept = keep_names(v_.untested)
    if kept and v_.valid:
        rule = narrowed(v_.rule, kept)
        if rule is not None:
            v_.rule = rule
    if v_.valid and v_.dropped_only:
        rule = closed(v_.rule, v_.dropped_only)
        if rule is not None:
            v_.rule = rule
    return v_


__all__ = ["applicable", "changed_names", "closed", "covered", "NARROWINGS", "kept_after_refutation", "keep_names", "narrow_verdict", "narrowed", "raw_forms", "refuted_by",
           "restored", "stale_keep",
           "untested"]
