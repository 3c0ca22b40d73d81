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
  left — the exact effect of :func:`dustbuster.core.query.remove_param`;
* parameter rule "N=* → N=v": ``(?<=[?&])N=[^&]*`` → ``N=v``.  Exact unless the URL — or a URL the
  canonization passes through (another rule may write ``&N=`` into a path) — has ``&N=`` in its
  path or ``?N=`` inside another parameter's value (Java replacements cannot insert text for one
  alternative only); tests/test_export.py shows the cases.

The rule types beyond the papers (docs/rules.md), each exactly or not at all:

* a parameter rule with a path scope: the same regex behind a prefix that matches the URL's head
  and a path in the scope (:func:`scope_prefix`, as dustbuster.core.scope.split_url and in_scope
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
  β (the rule skips those, and matches may overlap, dustbuster.core.pattern); → ``$1β``, or ``$1β₁$2β₂`` when β copies the placeholder.  A
  copying rule whose output could equal the matched text for some value (α and β as long, with
  the placeholder at different offsets) is skipped: the regex cannot tell those matches apart.

ClearURLs: one provider per site whose ``rules`` are the removed parameters' names (ClearURLs
removes a query field whose name matches ``^rule$``), and one more provider per path scope whose
``urlPattern`` also requires the path to be in the scope.  Query "drop" is the raw rule ``\\?.*``
(the whole query goes, as the rule drops it) and "drop but K…" the field rule ``(?!(?:K…)$).*``.
ClearURLs compares names — and its ``urlPattern``, so a scope — case-insensitively, and removes
bare fields (``sid`` without ``=``) by name; our rules do neither (equal on URLs without such
fields or spellings; documented, tested).  Value-replacing parameter rules, query "sort", case,
substring and pattern rules cannot be said in this format.

A rule with a query-parameter scope (``remove returnto=* under /index.php?title=Special:UserLogin``,
core/scope.py) is skipped by every format here and in core/crawlerexport.py (:func:`query_scope_skip`):
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

from .params import DEFAULT_MA
from .pattern import CLASSES, PatternRule, _PH
from .rules import ParamRule, Rule, SubstringRule
from .scopedrules import CaseRule, QueryRule
from .tokens import END, START

log = logging.getLogger(__name__)

_ALNUM = re.compile(r"[A-Za-z0-9]")
_BEFORE, _AFTER = "(?<![A-Za-z0-9])", "(?![A-Za-z0-9])"


class Unexpressible(ValueError):
    """A rule the target format cannot say exactly; the message is the reason."""


def java_escape(text: str) -> str:
    """A regex matching ``text`` literally in Java and Python: every ASCII character that is not a
    letter or digit gets a backslash (both treat ``\\`` + non-alphanumeric as that character)."""
    return "".join("\\" + c if c < "\x80" and not c.isalnum() else c for c in text)


def java_replacement(text: str) -> str:
    """``text`` as a literal Java replacement string (``\\`` and ``$`` escaped)."""
    return text.replace("\\", "\\\\").replace("$", "\\$")


def _after_group(text: str) -> str:
    """A literal replacement that follows a ``$n`` reference: a leading digit is escaped so that it
    never extends the group number."""
    out = java_replacement(text)
    return "\\" + out if out[:1].isdigit() else out


def scope_prefix(scope: str) -> str:
    """A regex that matches from the URL's start through the end of ``scope`` when the URL's path
    is in it (dustbuster.core.scope): the head up to the first ``://`` of the part before ``?``
    and the authority, or nothing when that part has no ``://``; then the scope, followed by ``/``,
    ``?`` or the end.  ``""`` for the global scope."""
    if not scope:
        return ""
    return rf"(?:(?:(?!://)[^?])*://[^/?]*|(?![^?]*://)){java_escape(scope)}(?=[/?]|$)"


def _param_regexes(rule: ParamRule) -> list[tuple[str, str]]:
    n, p = java_escape(rule.name), scope_prefix(rule.scope)
    if rule.action == "replace":
        if rule.scope:
            raise Unexpressible("a scoped value replacement needs a condition on the whole URL at every "
                                "match (\\G), which the exported regexes cannot have")
        return [(rf"(?<=[?&]){n}=[^&]*", java_replacement(f"{rule.name}={rule.value}"))]
    alts = [rf"^({p}[^?]*)\?(?:{n}=[^&]*&)*{n}=[^&]*$", rf"^({p}[^?]*\?)(?:{n}=[^&]*&)+", rf"^({p}[^?]*\?)",
            rf"^({p}[^?]*)$"]
    if rule.scope:
        alts.append(r"^([\s\S]*)")  # out of scope: consumed whole, so '&N=' after it never matches
    return [("|".join(alts + [rf"&{n}=[^&]*"]), "".join(f"${i}" for i in range(1, len(alts) + 1)))]


def _query_regexes(rule: QueryRule) -> list[tuple[str, str]]:
    p = scope_prefix(rule.scope)
    if rule.action == "sort":
        raise Unexpressible("sorting the query's items is not a regular-expression replacement")
    if not rule.keep:
        return [(rf"^({p}[^?]*)\?[\s\S]*", "$1")]
    k = "(?:" + "|".join(java_escape(n) for n in rule.keep) + ")"
    other = rf"^((?!{p}[^?]*\?)[\s\S]*)"  # out of scope or no query: consumed whole, unchanged
    items = rf"{other}|^([^?]*\?)|({k}(?:=[^&]*)?&)|({k}(?:=[^&]*)?$)|[^&]*&|[^&]+$"
    return [(items, "$1$2$3$4"), (rf"{other}|^([^?]*)\?$|&$", "$1$2")]


#: an unanchored pattern rule matches after scheme://authority (dustbuster.core.pattern): consumed
#: atomically, so the lazy prefix after it never starts inside the host
_NOT_HOST = r"(?>(?:[^:/?#]+://[^/?#]*)?)"


def _pattern_parts(s: str) -> tuple[str, str, str | None]:
    """(before, after, placeholder class) of an internal α or β without its anchors."""
    s = s[1:] if s.startswith(START) else s
    s = s[:-1] if s.endswith(END) else s
    m = _PH.search(s)
    return (s, "", None) if m is None else (s[:m.start()], s[m.end():], m.group(1))


def _pattern_alpha(rule: PatternRule, group: bool, value: str | None = None) -> str:
    """α as a regex on the plain URL (dustbuster.core.pattern's matching): the placeholder as its
    class (captured when ``group``) or as the literal token ``value``."""
    pre, post, cls = _pattern_parts(rule.alpha)
    inner = java_escape(value) if value is not None else ("(" if group else "(?:") + CLASSES[cls] + ")"
    body = java_escape(pre) + _BEFORE + inner + _AFTER + java_escape(post)
    edge = rule.alpha[:1], rule.alpha[-1:]
    return (("^" if rule.anchor_start else _BEFORE if _ALNUM.match(edge[0]) and edge[0].isascii() else "") + body
            + ("$" if rule.anchor_end else _AFTER if _ALNUM.match(edge[1]) and edge[1].isascii() else ""))


def _pattern_regexes(rule: PatternRule) -> list[tuple[str, str]]:
    a = _pattern_alpha(rule, True)
    h = "" if rule.anchor_start else _NOT_HOST  # an α anchored at ^ starts at the URL's start
    bpre, bpost, copies = _pattern_parts(rule.beta)
    if copies is None:
        same = rule._regex.fullmatch(rule.beta)  # a match reading as β exactly: the rule steps over it
        if same is None:
            return [(rf"^({h}[\s\S]*?){a}", "$1" + _after_group(bpre))]
        b = _pattern_alpha(rule, False, same.group("v"))  # the leftmost match that does not read as β
        return [(rf"^({h}[\s\S]*?)(?!{b}){a}", "$1" + _after_group(bpre))]
    apre, apost, _ = _pattern_parts(rule.alpha)
    if len(apre) + len(apost) == len(bpre) + len(bpost) and len(apre) != len(bpre):
        raise Unexpressible("the output may equal the matched text for some value (the rule steps over "
                            "such a match; a regex cannot tell it from the others)")
    return [(rf"^({h}[\s\S]*?){a}", "$1" + _after_group(bpre) + "$2" + _after_group(bpost))]


def _substring_regexes(rule: SubstringRule) -> list[tuple[str, str]]:
    a, b = rule.alpha_text, rule.beta_text
    s, e = rule.anchor_start, rule.anchor_end
    body = java_escape(a)
    lb = _BEFORE if a and not s and _ALNUM.match(a[0]) else ""
    la = _AFTER if a and not e and _ALNUM.match(a[-1]) else ""
    if s:
        return [("^" + body + ("$" if e else la), java_replacement(b))]
    if e:
        return [("(?s)^(.*?)" + lb + body + "$", "$1" + _after_group(b))]
    if not a:
        return [("^", java_replacement(b))]  # the empty α occurs first at the URL's start
    return [("(?s)^(.*?)" + lb + body + la, "$1" + _after_group(b))]


QUERY_SCOPE_WHY = ("a query-parameter scope (a fixed value of another parameter) is not exported: the "
                   "format would widen the rule to the whole path")


def query_scope_skip(rule: Rule) -> None:
    """Raise :class:`Unexpressible` for a rule with a query-parameter scope (core/scope.py): no
    export says "only where title=Special:UserLogin" exactly, and a rule is skipped, never widened."""
    if "?" in (getattr(rule, "scope", "") or ""):
        raise Unexpressible(QUERY_SCOPE_WHY)


def nutch_regexes(rule: Rule) -> list[tuple[str, str]]:
    """(pattern, substitution) pairs of one rule for Nutch's regex URL normalizer, applied one after
    the other; raises :class:`Unexpressible` (with the reason) for a rule the format cannot say."""
    if isinstance(rule, CaseRule):
        raise Unexpressible("a Java regex replacement cannot change letter case")
    query_scope_skip(rule)
    kinds = ((ParamRule, _param_regexes), (QueryRule, _query_regexes), (PatternRule, _pattern_regexes),
             (SubstringRule, _substring_regexes))
    for cls, make in kinds:
        if isinstance(rule, cls):
            return make(rule)  # type: ignore[arg-type]
    raise Unexpressible(f"no Nutch form for {rule.type} rules")


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
        text = r.text.replace("--", "- -")
        try:
            pairs = nutch_regexes(r)
        except Unexpressible as exc:
            skipped.append((r, str(exc)))
            root.append(ET.Comment(f" skipped: {text}: {str(exc).replace('--', '- -')} "))
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
    if "?" in (getattr(rule, "scope", "") or ""):
        return QUERY_SCOPE_WHY
    if isinstance(rule, ParamRule):
        return None if rule.action == "remove" else "ClearURLs removes fields, it cannot set a value"
    if isinstance(rule, QueryRule):
        return None if rule.action == "drop" else "ClearURLs cannot reorder the query"
    if isinstance(rule, CaseRule):
        return "ClearURLs cannot change letter case"
    return "ClearURLs only removes query fields (or text); it cannot rewrite a URL"


def _provider(site: str, scope: str) -> dict:
    host = re.escape(site.lower())
    tail = re.escape(scope) + r"(?:[\/?]|$)" if scope else r"(?:[\/?#]|$)"
    return {"urlPattern": rf"^https?:\/\/(?:[^\/?#@]*\.)?{host}(?::\d+)?{tail}", "completeProvider": False,
            "rules": [], "rawRules": [], "referralMarketing": [], "exceptions": [], "redirections": [],
            "forceRedirection": False}


def to_clearurls(site: str, rules: Sequence[Rule], version: int | None = None) -> dict:
    providers: dict[str, dict] = {f"dustbuster:{site}": _provider(site, "")}
    skipped = unexported(rules, "clearurls")
    bad = {id(r) for r, _ in skipped}
    for r in rules:
        if id(r) in bad:
            continue
        prov = providers.setdefault(f"dustbuster:{site}{r.scope}", _provider(site, r.scope))  # type: ignore[union-attr]
        if isinstance(r, ParamRule):
            new, key = re.escape(r.name), "rules"
        elif r.keep:  # type: ignore[union-attr]
            new, key = "(?!(?:" + "|".join(map(re.escape, r.keep)) + ")$).*", "rules"  # type: ignore[union-attr]
        else:
            new, key = r"\?.*", "rawRules"
        if new not in prov[key]:
            prov[key].append(new)
    _warn("clearurls", site, skipped)
    return {"providers": providers,
            "x-dustbuster": {"site": site, "version": version, "skipped": [r.text for r, _ in skipped],
                             "skipped_why": [{"rule": r.text, "why": why} for r, why in skipped]}}


def to_clearurls_json(site: str, rules: Sequence[Rule], version: int | None = None) -> str:
    return json.dumps(to_clearurls(site, rules, version), indent=2, ensure_ascii=False) + "\n"


FORMATS = ("nutch", "clearurls", "json")
