"""One-page families decided on their merits (ours, beyond the papers;
docs/validation.md "One-page families").

WWW 2007 §5.3 (Figure 3) accepts a rule on its positives; we added "equal today": the
positives' u pages must show :data:`~dustbuster.core.model.evidence.MIN_DISTINCT_PAGES` different pages,
or the rule is undecided (``uninformative``).  That guard also blocks a parameter that is a no-op
on the one page that has it — ``index.php?title=Special:UserLogin&returnto=X`` for hundreds of X,
one login page — however many URLs show it: ``remove returnto=* where title=Special:UserLogin``
can only ever show one page.

Such a rule may be decided on one page when all of the following hold (else the guard stands):

* **the rule** drops a parameter (:class:`~dustbuster.core.model.rules.ParamRule` ``remove``): a rule
  that maps one value to another (:func:`~dustbuster.core.model.evidence.maps_values`) keeps the
  multi-page guard — "``+3`` → ``+2``" on one empty listing is exactly what "equal today" is for;
* **its scope holds one page** (:func:`one_page_of`): the scope is not global, and every test URL
  in the scope (:func:`~dustbuster.core.urls.scope.url_in_scope`) that the rule changes, rewritten by
  it, has one and the same path and query — the same path and every other parameter (a URL of the
  scope without the parameter is merged with nothing by the rule).  In a query-parameter
  scope (``?title=Special:UserLogin``) the page is the one path plus the scope's fixed values, and
  the URLs' other parameters ride along (``returntoquery=``, ``utm_*``: the login page linked from
  every page carries them); a path scope keeps "one path and query".  A global rule, or a scope with
  two pages in the test list, needs the normal evidence: a one-page decision cannot merge pages
  elsewhere, since the rule applies nowhere else the test list shows.  Where other parameters ride
  along they might select other pages (``&page=2``): every pair still compares u with R(u) (the same
  other parameters on both sides), so a parameter that matters gives negatives, and the positives
  must all show **one identity** (below), so a scope whose riding parameters select pages with
  their own titles or canonicals is not decided on one page (the normal guard stands).  The origin may differ (one
  page per host name of the site: a parameter rule never changes the host, so it merges URLs of one
  host only), and each host holding a share of the URLs must show its own positives (URL families,
  :mod:`dustbuster.core.urls.families`, whose family includes the origin);
* **the dropped values vary freely**: the positives show at least :data:`ONE_PAGE_MIN_VALUES`
  distinct values of the parameter (5: as many as a value-mapping rule's pages must be),
  with Figure 3's ≥ 10 comparisons (``min_samples``) as for any rule;
* **every positive is the same page by its identity** (:func:`same_page_evidence`,
  :mod:`dustbuster.core.validation.identity`): both fetches were real pages (a soft error is a failed fetch,
  never a positive), and u redirects to v's page (``redirect``), or both declare the same canonical
  (``canonical``; one side declaring is not enough), or both have the same non-empty normalised
  title and neither declares a canonical (``title``).  Text alone is not enough on one page;
* **one identity** across the positives (ours): every positive's v page declares the same
  canonical, or, without canonicals, has the same normalised title — one page, by what it says;
* **no negative** at all (Figure 3 accepts with fewer than εN; one page has no room for one).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Sequence, TypeGuard, cast
from urllib.parse import parse_qsl

from dustbuster.core.model.evidence import maps_values
from dustbuster.core.validation.fetched import Fetched
from dustbuster.core.model.rules import ParamRule, Rule
from dustbuster.core.urls.scope import make_scope, parse_scope, split_url, url_in_scope

#: distinct values of the dropped parameter a one-page decision needs among its positives
ONE_PAGE_MIN_VALUES = 5


def one_page_capable(rule: Rule) -> TypeGuard[ParamRule]:
    """A scoped rule that drops a parameter: the only kind decided on one page."""
    if rule.type != "parameter":
        return False
    p = cast(ParamRule, rule)  # type "parameter" is ParamRule's (the registry)
    return p.action == "remove" and not maps_values(p) and bool(p.scope)


def one_page_of(rule: Rule, rewrite: Callable[[str], str], test_urls: Sequence[str],
                canon: Callable[[str], str] | None = None) -> str | None:
    """The one page a remove rule's scope holds in the test list (module docstring), or None when
    the rule is not such a rule: global, mapping values, its scope holding several pages, or fewer
    than :data:`ONE_PAGE_MIN_VALUES` values of the parameter in the test list (undecided unfetched).
    ``canon``: each rewritten URL's canonical form under the rules found valid (validated
    equivalences of the site), by which its page is named; a URL the canonical form takes out of
    the scope is named as it is."""
    if not one_page_capable(rule):
        return None
    # the URLs the rule changes: one in the scope that lacks the parameter is merged with nothing
    inside = [u for u in dict.fromkeys(test_urls) if url_in_scope(u, rule.scope) and rewrite(u) != u]
    pages = {_page(_named(rewrite(u), rule.scope, canon), rule.scope) for u in inside}  # the host is never the rule's: see docstring
    if len(pages) != 1 or len({v for u in inside for v in _values(u, rule.name)}) < ONE_PAGE_MIN_VALUES:
        return None  # several pages, or too few values to ever decide it on one: the normal guard
    return pages.pop()


def _named(url: str, scope: str, canon: Callable[[str], str] | None) -> str:
    if canon is None:
        return url
    c = canon(url)
    return c if url_in_scope(c, scope) else url


def _page(url: str, scope: str) -> str:
    """The page a rewritten URL shows, as far as the scope says (module docstring): its path and
    the scope's fixed values in a query-parameter scope, its path and query in a path scope."""
    _, path, query = split_url(url)
    _, fixed = parse_scope(scope)
    return path + make_scope("", fixed) if fixed else path + query


def same_page_evidence(fu: Fetched, fv: Fetched, outcome: str) -> str:
    """Why the identities of a positive pair say one page (``redirect``, ``canonical``, ``title``),
    or ``""`` when they say nothing (no identity, no title, a canonical on one side only)."""
    iu, iv = fu.identity, fv.identity
    if not (fu.ok and fv.ok) or iu is None or iv is None:
        return ""
    if outcome == "same_target":
        return "redirect"
    if iu.canonical or iv.canonical:
        return "canonical" if iu.canonical == iv.canonical else ""
    return "title" if iu.norm_title and iu.norm_title == iv.norm_title else ""


def _values(url: str, name: str) -> list[str]:
    return [v for k, v in parse_qsl(split_url(url)[2][1:], keep_blank_values=True) if k == name]


@dataclass
class OnePage:
    """One rule's one-page evidence as Figure 3 draws it (module docstring)."""

    page: str  #: the one path and query every test URL of the scope is rewritten to
    name: str  #: the dropped parameter
    values: set[str] = field(default_factory=set)  #: its distinct values among the positives
    identity: Counter = field(default_factory=Counter)  #: positives by same-page evidence ("" = none)
    names: set[str] = field(default_factory=set)  #: the v pages' identities (canonical, else title)

    def positive(self, u: str, fu: Fetched, fv: Fetched, outcome: str) -> None:
        self.values.update(_values(u, self.name))
        self.identity[same_page_evidence(fu, fv, outcome)] += 1
        if fv.identity is not None:
            self.names.add(fv.identity.canonical or fv.identity.norm_title)

    def why_not(self, negatives: int) -> str:
        """``""`` when the evidence decides the rule on its one page, else why not."""
        if negatives:
            return f"{negatives} negative(s)"
        if len(self.values) < ONE_PAGE_MIN_VALUES:
            return f"{len(self.values)} distinct values of {self.name} (needs {ONE_PAGE_MIN_VALUES})"
        if self.identity[""]:
            return f"{self.identity['']} positive(s) without same-page identity evidence"
        if len(self.names) > 1:
            return f"the positives show {len(self.names)} page identities (one page shows one)"
        return ""

    def to_json(self, negatives: int) -> dict:
        why = self.why_not(negatives)
        return {"page": self.page, "parameter": self.name, "values": len(self.values),
                "identity": {k or "none": n for k, n in sorted(self.identity.items())}, "identities": len(self.names),
                "sufficient": not why,
                **({"why_not": why} if why else {})}


__all__ = ["ONE_PAGE_MIN_VALUES", "OnePage", "one_page_capable", "one_page_of", "same_page_evidence"]
