"""Rule sets in formats crawlers already read: Apache Nutch's ``regex-normalize.xml`` and
ClearURLs-style provider JSON.  Pure functions; ``dustbuster export`` writes them.

Nutch (``urlnormalizer-regex``): each ``<regex>`` is compiled with ``java.util.regex.Pattern`` and
applied in file order as ``matcher.replaceAll(substitution)``; set ``urlnormalizer.loop.count`` to
MA (10) so Nutch repeats the list until nothing changes, exactly as thesis Figure 5.5 repeats the
rule list.  One regex per rule, each rewriting like the rule's single application:

* substring rule α → β (first token-aligned occurrence, docs/rules.md)::

      (?s)^(.*?)(?<![A-Za-z0-9])α(?![A-Za-z0-9])   →   $1β

  the look-arounds only where α starts/ends with a letter or digit (a token boundary elsewhere
  is automatic); ``^α`` / ``α$`` for anchored rules;
* parameter rule "remove N": one alternation that consumes the URL up to its first ``?`` (so
  ``&N=`` in a path never matches) and removes every ``N=…`` item, the ``?`` too when no item is
  left — the exact effect of :func:`dustbuster.core.urls.query.remove_param`;
* parameter rule "N=* → N=v": ``(?<=[?&])N=[^&]*`` → ``N=v``.  Exact unless the URL — or a URL the
  canonization passes through (another rule may write ``&N=`` into a path) — has ``&N=`` in its
  path or ``?N=`` inside another parameter's value (Java replacements cannot insert text for one
  alternative only); tests/test_export.py shows the cases.

The rule types beyond the papers (docs/rules.md), each exactly or not at all:

* a parameter rule with a path scope: the same regex behind a prefix that matches the URL's head
  and a path in the scope (:func:`scope_prefix`, as dustbuster.core.urls.scope.split_url and in_scope
  read a URL), plus an alternative that consumes a URL out of scope whole (so nothing after it
  matches).  A *scoped* "N=* → N=v" is skipped: without ``\\G`` (which Python's ``re`` lacks) a
  later match cannot know that the URL is in scope, and a Java replacement cannot be conditional;
* query "drop": ``^(prefix[^?]*)\\?.*`` → ``$1``; "drop but K…": two consecutive regexes, the first
  consuming the query item by item (kept items echoed with their ``&``, others removed), the
  second removing a trailing ``&`` or a lone ``?``; their composition is the rule's application, and
  Nutch runs them one after the other in every round.  Query "sort" is skipped (sorting is no
  regex replacement);
* case rules are skipped: a Java replacement cannot change letter case;
* pattern rule α → β: ``^(H[\\s\\S]*?)(?!β)α`` (H: the scheme and authority, consumed atomically:
  an unanchored pattern rule never matches in the host), the leftmost match of α that does not already read as
  β (the rule skips those, and matches may overlap, dustbuster.core.model.pattern); → ``$1β``, or ``$1β₁$2β₂`` when β copies the placeholder.  A
  copying rule whose output could equal the matched text for some value (α and β as long, with
  the placeholder at different offsets) is skipped: the regex cannot tell those matches apart.

ClearURLs: one provider per site whose ``rules`` are the removed parameters' names (ClearURLs
removes a query field whose name matches ``^rule$``), and one more provider per path scope whose
``urlPattern`` also requires the path to be in the scope.  Query "drop" is the raw rule ``\\?.*``
(the whole query goes, as the rule drops it) and "drop but K…" the field rule ``(?!(?:K…)$).*``.
ClearURLs compares names — and its ``urlPattern``, so a scope — case-insensitively, and removes
bare fields (``sid`` without ``=``) by name; our rules do neither (equal on URLs without such
fields or spellings; documented, tested).  Value-replacing parameter rules, query "sort", case,
substring and pattern rules cannot be said in this format.  When ClearURLs removes anything it
writes the whole query back, every value through ``encodeURIComponent`` (the add-on's
clearurls.js ``removeFieldsFormURL`` and core_js/tools.js ``urlSearchParamsToString``), so a page
reached with a removed field is spelt ``?id=licenses%3Absd`` and without it ``?id=licenses:bsd``:
a consumer keys URLs on their decoded query items, not on the text (:data:`CLEARURLS_KEYING`, in the
file's ``x-dustbuster.keying``; tests/test_consumers.py runs the export through a port of that code).

A rule with a query-parameter scope (``remove returnto=* under /index.php?title=Special:UserLogin``,
core/urls/scope.py) is skipped by every format here and in core/report/crawlerexport.py (:func:`query_scope_skip`):
none of them can say "only where the query fixes these values" without widening the rule.

Every rule a format cannot say is listed with the reason (:func:`unexported`): an XML comment in
the Nutch file, ``x-dustbuster.skipped`` (texts) and ``skipped_why`` in the ClearURLs document, and
a warning in the log.
"""

from __future__ import annotations

import json
import logging
import re
import xml.etree.ElementTree as ET
from typing import Sequence

from dustbuster.core.params import DEFAULT_MA
from dustbuster.core.model.regexforms import java_escape, java_replacement, scope_prefix  # noqa: F401  (the exporters' names)
from dustbuster.core.model.rules import Rule
from dustbuster.core.model.ruletype import Unexpressible

log = logging.getLogger(__name__)

QUERY_SCOPE_WHY = ("a query-parameter scope (a fixed value of another parameter) is not exported: the "
                   "format would widen the rule to the whole path")


def query_scope_skip(rule: Rule) -> None:
    """Raise :class:`Unexpressible` for a rule with a query-parameter scope (core/urls/scope.py): no
    export says "only where title=Special:UserLogin" exactly, and a rule is skipped, never widened."""
    if "?" in (getattr(rule, "scope", "") or ""):
        raise Unexpressible(QUERY_SCOPE_WHY)


def nutch_regexes(rule: Rule) -> list[tuple[str, str]]:
    """(pattern, substitution) pairs of one rule for Nutch's regex URL normalizer, applied one after
    the other (the rule type's ``nutch_regexes``); raises :class:`Unexpressible` (with the reason)
    for a rule the format cannot say."""
    query_scope_skip(rule)
    return rule.nutch_regexes()


def nutch_regex(rule: Rule) -> tuple[str, str]:
    """The (pattern, substitution) of a rule exported as one regex (all but "drop but K…")."""
    (one,) = nutch_regexes(rule)
    return one


def unexported(rules: Sequence[Rule], fmt: str) -> list[tuple[Rule, str]]:
    """The rules that ``fmt`` (``nutch`` or ``clearurls``) cannot say exactly, with the reason."""
    out = []
    for r in rules:
        why = _nutch_skip(r) if fmt == "nutch" else _clearurls_skip(r) if fmt == "clearurls" else None
        if why:
            out.append((r, why))
    return out


def _nutch_skip(rule: Rule) -> str | None:
    try:
        nutch_regexes(rule)
    except Unexpressible as exc:
        return str(exc)
    return None


def comment_text(text: str) -> str:
    """``text`` fit for an XML comment, which may not hold ``--`` (XML 1.0 §2.5): every ``-`` that
    another follows gets a space after it (``---`` becomes ``- - -``; replacing ``--`` once left
    ``- --``, and a file Nutch's parser refuses whole)."""
    return re.sub(r"-(?=-)", "- ", text)


def _warn(fmt: str, site: str, skipped: list[tuple[Rule, str]]) -> None:
    for r, why in skipped:
        log.warning("%s export of %s: rule %s skipped: %s", fmt, site, r.text, why)


def to_nutch_xml(site: str, rules: Sequence[Rule], version: int | None = None, ma: int = DEFAULT_MA) -> str:
    root = ET.Element("regex-normalize")
    root.append(ET.Comment(
        f" dustbuster rules for {site}" + (f" (rule set version {version})" if version is not None else "")
        + f"; apply in order with urlnormalizer.loop.count={ma} (thesis Figure 5.5, MA={ma}) "))
    skipped = []
    for r in rules:
        text = comment_text(r.text)
        try:
            pairs = nutch_regexes(r)
        except Unexpressible as exc:
            skipped.append((r, str(exc)))
            root.append(ET.Comment(f" skipped: {text}: {comment_text(str(exc))} "))
            continue
        for pat, sub in pairs:
            el = ET.SubElement(root, "regex")
            el.append(ET.Comment(" " + text + " "))
            ET.SubElement(el, "pattern").text = pat
            ET.SubElement(el, "substitution").text = sub
    _warn("nutch", site, skipped)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def parse_nutch_xml(text: str) -> list[tuple[str, str]]:
    root = ET.fromstring(text)
    return [(el.findtext("pattern") or "", el.findtext("substitution") or "") for el in root.iter("regex")]


def _clearurls_skip(rule: Rule) -> str | None:
    try:
        query_scope_skip(rule)
        rule.clearurls_item()
    except Unexpressible as exc:
        return str(exc)
    return None


def _provider(site: str, scope: str) -> dict:
    host = re.escape(site.lower())
    tail = re.escape(scope) + r"(?:[\/?]|$)" if scope else r"(?:[\/?#]|$)"
    return {"urlPattern": rf"^https?:\/\/(?:[^\/?#@]*\.)?{host}(?::\d+)?{tail}", "completeProvider": False,
            "rules": [], "rawRules": [], "referralMarketing": [], "exceptions": [], "redirections": [],
            "forceRedirection": False}


CLEARURLS_KEYING = ("ClearURLs writes the whole query of a URL it cleans back with encodeURIComponent(value) "
                    "(?id=licenses:bsd&utm_source=x becomes ?id=licenses%3Absd): key URLs on their query items "
                    "percent-decoded (e.g. Python urllib.parse.parse_qsl(query, keep_blank_values=True)), not on "
                    "the text, or one page has two keys")


def to_clearurls(site: str, rules: Sequence[Rule], version: int | None = None) -> dict:
    providers: dict[str, dict] = {f"dustbuster:{site}": _provider(site, "")}
    skipped = unexported(rules, "clearurls")
    bad = {id(r) for r, _ in skipped}
    for r in rules:
        if id(r) in bad:
            continue
        scope = getattr(r, "scope", "")
        prov = providers.setdefault(f"dustbuster:{site}{scope}", _provider(site, scope))
        new, key = r.clearurls_item()
        if new not in prov[key]:
            prov[key].append(new)
    _warn("clearurls", site, skipped)
    return {"providers": providers,
            "x-dustbuster": {"site": site, "version": version, "keying": CLEARURLS_KEYING,
                             "skipped": [r.text for r, _ in skipped],
                             "skipped_why": [{"rule": r.text, "why": why} for r, why in skipped]}}


def to_clearurls_json(site: str, rules: Sequence[Rule], version: int | None = None) -> str:
    return json.dumps(to_clearurls(site, rules, version), indent=2, ensure_ascii=False) + "\n"


FORMATS = ("nutch", "clearurls", "json")
