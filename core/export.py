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

ClearURLs: one provider per site whose ``rules`` are the removed parameters' names (ClearURLs
removes a query field whose name matches ``^rule$``).  ClearURLs compares names case-insensitively
and also removes bare fields (``sid`` without ``=``); our rules do neither (documented, tested).
Value-replacing parameter rules and substring rules cannot be said in this format: they are listed
under ``x-dustbuster.skipped``.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Sequence

from .params import DEFAULT_MA
from .rules import ParamRule, Rule

_ALNUM = re.compile(r"[A-Za-z0-9]")


def java_escape(text: str) -> str:
    """A regex matching ``text`` literally in Java and Python: every ASCII character that is not a
    letter or digit gets a backslash (both treat ``\\`` + non-alphanumeric as that character)."""
    return "".join("\\" + c if c < "\x80" and not c.isalnum() else c for c in text)


def java_replacement(text: str) -> str:
    """``text`` as a literal Java replacement string (``\\`` and ``$`` escaped)."""
    return text.replace("\\", "\\\\").replace("$", "\\$")


def nutch_regex(rule: Rule) -> tuple[str, str]:
    """(pattern, substitution) of one rule for Nutch's regex URL normalizer."""
    if isinstance(rule, ParamRule):
        n = java_escape(rule.name)
        if rule.action == "remove":
            pat = (rf"^([^?]*)\?(?:{n}=[^&]*&)*{n}=[^&]*$|^([^?]*\?)(?:{n}=[^&]*&)+|^([^?]*\?)|^([^?]*)$"
                   rf"|&{n}=[^&]*")
            return pat, "$1$2$3$4"
        return rf"(?<=[?&]){n}=[^&]*", java_replacement(f"{rule.name}={rule.value}")
    a, b = rule.alpha_text, rule.beta_text
    s, e = rule.anchor_start, rule.anchor_end
    body = java_escape(a)
    lb = "(?<![A-Za-z0-9])" if a and not s and _ALNUM.match(a[0]) else ""
    la = "(?![A-Za-z0-9])" if a and not e and _ALNUM.match(a[-1]) else ""
    if s:
        return "^" + body + ("$" if e else la), java_replacement(b)
    if e:
        return "(?s)^(.*?)" + lb + body + "$", "$1" + java_replacement(b)
    if not a:
        return "^", java_replacement(b)  # the empty α occurs first at the URL's start
    return "(?s)^(.*?)" + lb + body + la, "$1" + java_replacement(b)


def to_nutch_xml(site: str, rules: Sequence[Rule], version: int | None = None, ma: int = DEFAULT_MA) -> str:
    root = ET.Element("regex-normalize")
    root.append(ET.Comment(
        f" dustbuster rules for {site}" + (f" (rule set version {version})" if version is not None else "")
        + f"; apply in order with urlnormalizer.loop.count={ma} (thesis Figure 5.5, MA={ma}) "))
    for r in rules:
        pat, sub = nutch_regex(r)
        el = ET.SubElement(root, "regex")
        el.append(ET.Comment(" " + r.text.replace("--", "- -") + " "))
        ET.SubElement(el, "pattern").text = pat
        ET.SubElement(el, "substitution").text = sub
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def parse_nutch_xml(text: str) -> list[tuple[str, str]]:
    root = ET.fromstring(text)
    return [(el.findtext("pattern") or "", el.findtext("substitution") or "") for el in root.iter("regex")]


def to_clearurls(site: str, rules: Sequence[Rule], version: int | None = None) -> dict:
    names, skipped = [], []
    for r in rules:
        if isinstance(r, ParamRule) and r.action == "remove":
            if r.name not in names:
                names.append(r.name)
        else:
            skipped.append(r.text)
    host = re.escape(site.lower())
    provider = {
        "urlPattern": rf"^https?:\/\/(?:[^\/?#@]*\.)?{host}(?::\d+)?(?:[\/?#]|$)",
        "completeProvider": False,
        "rules": [re.escape(n) for n in names],
        "rawRules": [],
        "referralMarketing": [],
        "exceptions": [],
        "redirections": [],
        "forceRedirection": False,
    }
    return {"providers": {f"dustbuster:{site}": provider},
            "x-dustbuster": {"site": site, "version": version, "skipped": skipped}}


def to_clearurls_json(site: str, rules: Sequence[Rule], version: int | None = None) -> str:
    return json.dumps(to_clearurls(site, rules, version), indent=2, ensure_ascii=False) + "\n"


FORMATS = ("nutch", "clearurls", "json")


