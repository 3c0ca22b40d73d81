"""What evidence a rule needs beyond Figure 3's counts (ours: validation that resists
"equal today"; docs/validation.md): how many different pages its positives must show, and how long
its verdict lasts.  Used by :mod:`dustbuster.core.validation.validate`."""

from __future__ import annotations

from dustbuster.core.model.rules import Rule


#: a rule is published only when its positives show at least this many different pages on the u
#: side (ours): URLs that all show one page prove nothing about a rule ("equal today":
#: /report?sort=a ≡ /report?sort=b while the report is empty; remove sort=* shown on it alike), so
#: it stays undecided ("uninformative"), tried again later.  One exception: min_distinct_pages.
MIN_DISTINCT_PAGES = 3


#: the verdict of a rule that maps one literal value to another lasts this share of the TTL (ours):
#: "equal today" (a list that looks the same at page sizes 20 and 50) is what such rules are most
#: exposed to, so they are fetched again four times as often and leave the set within TTL/4 once
#: they stop holding (the validator's timer re-runs every site's candidates every TTL/4).
VALUE_RULE_TTL_FACTOR = 0.25


def maps_values(rule: Rule) -> bool:
    """True for a rule that rewrites one literal value into another (its type's ``maps_values``): a
    parameter replace rule, a pattern rule with a literal β, a substring rule whose α and β differ
    only in alphanumeric tokens at the same places (``"=50&" → "=20&"``)."""
    return rule.maps_values()


#: a rule that maps one literal value to another (:func:`maps_values`) needs this many different
#: pages among its positives (ours): "+3" → "+2" holds on empty listings, "-noto-mono" →
#: "-droid-fallback" on two look-alikes; positives on many values and pages, or undecided
MIN_DISTINCT_VALUE_PAGES = 5


def min_distinct_pages(rule: Rule) -> int:
    """Different pages a rule's positives must show before it is published: :data:`MIN_DISTINCT_PAGES`,
    but 1 for a rule that drops the whole query under a scope — that one script ignores its query
    (a tracking pixel, a client-side search page) is shown by many URLs of its one page: Figure 3's
    ≥ 10 comparisons, whose queries involve at least two parameter names (core/mining/scoped.py); and
    :data:`MIN_DISTINCT_VALUE_PAGES` for a rule that maps values.  The type may decide
    (its ``min_distinct_pages``; the query rule's drop does)."""
    own = rule.min_distinct_pages()
    if own is not None:
        return own
    return MIN_DISTINCT_VALUE_PAGES if maps_values(rule) else MIN_DISTINCT_PAGES


def ttl_factor(rule: Rule) -> float:
    return VALUE_RULE_TTL_FACTOR if maps_values(rule) else 1.0
