"""Regular-expression forms of rules for the exports (core/report/export.py, core/report/crawlerexport.py): the
escaping shared by Java and Python regexes, a scope as a regex prefix, and the (pattern,
substitution) pairs of the substring, parameter and query rules (each type's ``nutch_regexes``
calls its own here; the pattern rule's are in core/model/pattern.py).  Moved out of core/report/export.py so
that a rule type can give its export mapping without importing the exporters."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from dustbuster.core.model.ruletype import Unexpressible

if TYPE_CHECKING:
    from dustbuster.core.model.rules import ParamRule, SubstringRule
    from dustbuster.core.model.scopedrules import QueryRule

ALNUM = re.compile(r"[A-Za-z0-9]")
BEFORE, AFTER = "(?<![A-Za-z0-9])", "(?![A-Za-z0-9])"


def java_escape(text: str) -> str:
    """A regex matching ``text`` literally in Java and Python: every ASCII character that is not a
    letter or digit gets a backslash (both treat ``\\`` + non-alphanumeric as that character)."""
    return "".join("\\" + c if c < "\x80" and not c.isalnum() else c for c in text)


def java_replacement(text: str) -> str:
    """``text`` as a literal Java replacement string (``\\`` and ``$`` escaped)."""
    return text.replace("\\", "\\\\").replace("$", "\\$")


def after_group(text: str) -> str:
    """A literal replacement that follows a ``$n`` reference: a leading digit is escaped so that it
    never extends the group number."""
    out = java_replacement(text)
    return "\\" + out if out[:1].isdigit() else out


def scope_prefix(scope: str) -> str:
    """A regex that matches from the URL's start through the end of ``scope`` when the URL's path
    is in it (dustbuster.core.urls.scope): the head up to the first ``://`` of the part before ``?``
    and the authority, or nothing when that part has no ``://``; then the scope, followed by ``/``,
    ``?`` or the end.  ``""`` for the global scope."""
    if not scope:
        return ""
    return rf"(?:(?:(?!://)[^?])*://[^/?]*|(?![^?]*://)){java_escape(scope)}(?=[/?]|$)"


def value_regex(rule: "ParamRule") -> str:
    """The regex of a value the rule removes: any (``[^&]*``), or one of its ``values`` ending the
    item."""
    if not rule.values:
        return "[^&]*"
    return "(?:" + "|".join(java_escape(v) for v in sorted(rule.values, key=lambda v: (-len(v), v))) + ")(?![^&])"


def param_regexes(rule: ParamRule) -> list[tuple[str, str]]:
    n, p = java_escape(rule.name), scope_prefix(rule.scope)
    val = value_regex(rule)
    if rule.action == "replace":
        if rule.scope:
            raise Unexpressible("a scoped value replacement needs a condition on the whole URL at every "
                                "match (\\G), which the exported regexes cannot have")
        return [(rf"(?<=[?&]){n}=[^&]*", java_replacement(f"{rule.name}={rule.value}"))]
    alts = [rf"^({p}[^?]*)\?(?:{n}={val}&)*{n}={val}$", rf"^({p}[^?]*\?)(?:{n}={val}&)+", rf"^({p}[^?]*\?)",
            rf"^({p}[^?]*)$"]
    if rule.scope:
        alts.append(r"^([\s\S]*)")  # out of scope: consumed whole, so '&N=' after it never matches
    return [("|".join(alts + [rf"&{n}={val}"]), "".join(f"${i}" for i in range(1, len(alts) + 1)))]


def query_regexes(rule: QueryRule) -> list[tuple[str, str]]:
    p = scope_prefix(rule.scope)
    if rule.action == "sort":
        raise Unexpressible("sorting the query's items is not a regular-expression replacement")
    if rule.only:  # the listed items go, every other stays
        d = "(?:" + "|".join(java_escape(n) for n in rule.only) + ")(?:=[^&]*)?"  # one item that goes
        other = rf"^((?!{p}[^?]*\?)[\s\S]*)"
        # an item kept before nothing but items that go gives up its "&" (the URL's own trailing
        # "&", an empty last item, stays: the canonizer keeps it)
        items = rf"{other}|^([^?]*\?)|{d}(?:&|$)|([^&]*)&(?=(?:{d}&)*{d}$)|([^&]*&)|([^&]+$)"
        return [(items, "$1$2$3$4$5"), (rf"{other}|^([^?]*)\?$", "$1$2")]
    if not rule.keep:
        return [(rf"^({p}[^?]*)\?[\s\S]*", "$1")]
    k = "(?:" + "|".join(java_escape(n) for n in rule.keep) + ")"
    other = rf"^((?!{p}[^?]*\?)[\s\S]*)"  # out of scope or no query: consumed whole, unchanged
    items = rf"{other}|^([^?]*\?)|({k}(?:=[^&]*)?&)|({k}(?:=[^&]*)?$)|[^&]*&|[^&]+$"
    return [(items, "$1$2$3$4"), (rf"{other}|^([^?]*)\?$|&$", "$1$2")]


def substring_regexes(rule: SubstringRule) -> list[tuple[str, str]]:
    a, b = rule.alpha_text, rule.beta_text
    s, e = rule.anchor_start, rule.anchor_end
    body = java_escape(a)
    lb = BEFORE if a and not s and ALNUM.match(a[0]) else ""
    la = AFTER if a and not e and ALNUM.match(a[-1]) else ""
    if s:
        return [("^" + body + ("$" if e else la), java_replacement(b))]
    if e:
        return [("(?s)^(.*?)" + lb + body + "$", "$1" + after_group(b))]
    if not a:
        return [("^", java_replacement(b))]  # the empty α occurs first at the URL's start
    return [("(?s)^(.*?)" + lb + body + la, "$1" + after_group(b))]


def param_removal_regex(rule: "ParamRule") -> tuple[str, str]:
    """One whole-URI (regex, format) that removes one ``N=`` item (a Heritrix RegexRule)."""
    n, p, val = java_escape(rule.name), scope_prefix(rule.scope), value_regex(rule)
    one = (rf"^({p}[^?]*)\?{n}={val}$|^({p}[^?]*\?(?:[^&]*&)*?){n}={val}&([\s\S]*)$"
           rf"|^({p}[^?]*\?(?:[^&]*&)*?[^&]*)&{n}={val}$")
    return one, "$1$2$3$4"
