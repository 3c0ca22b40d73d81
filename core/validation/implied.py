"""Rules implied by a valid set, put in place of the literals that say the same law (ours, beyond
the papers; docs/validation.md "Rules implied by the set").

Figure 4 (WWW 2007 §5.4) decides rules one by one, so a valid set can say one law several times,
or say it in a form that never fires once the rules before it have run.  Two such repairs, both
fetch-free and exact consequences of rules already valid (the caller checks the new set again as
a whole, docs/validation.md "The set-level checks"):

* **One host rule per alias** (:func:`one_rule_per_alias`).  The origins the set's host rules join
  are one site: each of them but one *target* gets one rule ``"^alias/" → "^target/"`` (the
  transitive closure of the valid host rules: ``a ≡ b`` and ``b ≡ t`` give ``a ≡ t``), and the host
  rules between aliases, those in the other direction and the literals that rewrite one of those
  origins into another under a single path (``"w.test:8080/w/" → "w.test/w/"``) go: the host rules
  imply them.  A crawler then sees one rule per host it may meet, in the direction the site points.
* **Rules carried through the substring rules** (:func:`through_substrings`).
  Substring rules run before the mappings (docs/rules.md "Canonization order"), so where a valid
  substring rule rewrites a mapping's scope — ``"/w/index.php?title=" → "/w/?title="`` (Apache's
  DirectoryIndex shows one script under both paths) — the mapping ``/w/index.php?title=X →
  /wiki/X`` never sees the URLs it was valid on.  With both rules valid, ``/w/?title=X`` ≡
  ``/w/index.php?title=X`` ≡ ``/wiki/X``: the mapping of the rewritten scope is implied, and is added
  beside the original (which still maps the spellings the substring rule does not match, such as
  ``/w/index.php?action=history&title=X``).  A parameter or query rule under a path scope is
  carried the same way: with ``".html" → ""`` valid, ``remove q=* under /search.html`` implies
  ``remove q=* under /search`` (``/search?q=x`` ≡ ``/search.html?q=x`` ≡ ``/search.html`` ≡ ``/search``),
  the URLs a client spells without the suffix.  A carried rule stays in the set where no test URL
  spells its scope yet (core/canon/rulecheck.py ``carried``): it is implied, and the log's URLs are
  not all the spellings a crawler meets.

>>> from dustbuster.core.model.rules import SubstringRule
>>> host = lambda a, b: SubstringRule.from_parts(a, b, anchor_start=True, status="valid")
>>> rules = [host("http://www.w.test/", "http://w.test:8080/"), host("http://w.test:8080/", "http://w.test/"),
...          SubstringRule.from_parts("w.test:8080/w/", "w.test/w/", status="valid")]
>>> [r.text for r in one_rule_per_alias(rules, "http://w.test")]
['"^http://w.test:8080/" → "^http://w.test/"', '"^http://www.w.test/" → "^http://w.test/"']
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections import Counter
from typing import Sequence

from dustbuster.core.canon.canonize import canonical
from dustbuster.core.errors import RuleError
from dustbuster.core.mining.hostalias import alias_target
from dustbuster.core.model.rules import ParamRule, Rule, SubstringRule
from dustbuster.core.model.scopedrules import QueryRule
from dustbuster.core.model.ruletypes.querypath import QueryPathRule
from dustbuster.core.params import DEFAULT_MA
from dustbuster.core.urls.scope import make_scope, parse_scope, split_url
from dustbuster.core.urls.tokens import END, START

log = logging.getLogger(__name__)

#: a side of a host rule: the start anchor, ``scheme://host[:port]``, then ``/`` or nothing
_ORIGIN_SIDE = re.compile(r"(?i)\x02(https?://(?:[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?|\[[0-9a-f:.]+\])"
                          r"(?::\d{1,5})?)(/?)\Z")
#: the value a mapping's scope is probed with (no rule of a site names it)
PROBE_VALUE = "DustProbe_Title"


def _host_pair(rule: Rule) -> tuple[str, str] | None:
    """``(origin of α, origin of β)`` of a substring rule that rewrites nothing but a URL's origin,
    anchored at its start (``"^http://a/" → "^http://b/"``, or without the slash); else None."""
    if not isinstance(rule, SubstringRule) or rule.alpha.endswith(END):
        return None
    a, b = _ORIGIN_SIDE.match(rule.alpha), _ORIGIN_SIDE.match(rule.beta)
    if a is None or b is None or a.group(2) != b.group(2):
        return None
    pa, pb = a.group(1).lower(), b.group(1).lower()
    return (pa, pb) if pa != pb else None


def _authority(origin: str) -> str:
    return origin.split("://", 1)[1]


def _origin_literal(rule: Rule, members: set[str]) -> bool:
    """``rule`` is a substring rule that only replaces one member origin's authority by another's
    where a URL's authority is (``"w.test:8080/w/" → "w.test/w/"``): the host rules imply it."""
    if not isinstance(rule, SubstringRule) or _host_pair(rule) is not None:
        return False
    alpha, beta = rule.alpha, rule.beta
    for a in members:
        for b in members:
            if a == b:
                continue
            for pa, pb in ((a, b), (_authority(a), _authority(b))):
                k = alpha.find(pa)
                if k < 0 or alpha[:k] + pb + alpha[k + len(pa):] != beta:
                    continue
                before, after = alpha[:k].lstrip(START), alpha[k + len(pa):]
                at_origin = before == "" or (pa == _authority(a) and before in ("http://", "https://", "//", "/"))
                if at_origin and (after == "" or after[0] in "/?:" or after[0] == END):
                    return True
    return False


def one_rule_per_alias(rules: Sequence[Rule], target: str | None = None) -> list[Rule]:
    """The set with its host rules replaced by one rule per alias origin (module docstring).  The
    origins that the host rules join are grouped (their transitive closure); each group's target is
    ``target`` when it is in the group (the site's declared direction: where its origins point,
    else the shortest host: dustbuster.core.mining.hostalias.alias_target), else the origin most of
    the group's rules point to (then the shortest).  A kept rule keeps its evidence; an implied one
    cites the rules it follows from.  Every other rule stays, in its place."""
    pairs = [(r, p) for r in rules if (p := _host_pair(r)) is not None]
    if not pairs:
        return list(rules)
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for _, (a, b) in pairs:
        parent[find(a)] = find(b)
    groups: dict[str, set[str]] = {}
    for o in list(parent):
        groups.setdefault(find(o), set()).add(o)
    out: list[Rule] = []
    placed: set[str] = set()  # the groups whose rules are already out
    for r in rules:
        pair = _host_pair(r)
        members = next((g for g in groups.values() if pair and pair[0] in g), None)
        if members is None:
            if not any(_origin_literal(r, g) for g in groups.values()):
                out.append(r)
            else:
                log.debug("host rules imply %s: dropped", r.text)
            continue
        key = min(members)
        if key in placed:
            continue
        placed.add(key)
        out += _group_rules(members, [q for q, p in pairs if p[0] in members], target)
    return out


def _group_rules(members: set[str], group: list[Rule], target: str | None) -> list[Rule]:
    """One rule per member of ``members`` but the target (:func:`one_rule_per_alias`)."""
    if target is None or target.lower() not in members:
        votes = Counter(p[1] for p in map(_host_pair, group) if p is not None)
        best = max(votes.values())
        target = alias_target(sorted(o for o, n in votes.items() if n == best))
    target = target.lower()
    # a kept rule is one in the host rules' own form (``…/``: what consumers read as a host rule)
    by_pair = {_host_pair(r): r for r in group if isinstance(r, SubstringRule) and r.alpha.endswith("/")}
    sources = [r.text for r in group]
    made: list[Rule] = []
    for alias in sorted(members - {target}):
        have = by_pair.get((alias, target))
        if isinstance(have, SubstringRule):
            made.append(have)
            continue
        made.append(SubstringRule.from_parts(alias + "/", target + "/", anchor_start=True, status="valid",
                                             evidence={"implied_by": sources, "alias_of": target}))
    return made


def through_substrings(rules: Sequence[Rule], origins: Sequence[str], ma: int = DEFAULT_MA) -> list[Rule]:
    """The set with each query-to-path mapping, and each parameter or query rule under a path
    scope, also stated for the path the set's other rules rewrite its scope into (module
    docstring), probed under each of ``origins`` (the site's): the moved rule follows the original."""
    out: list[Rule] = []
    have = {(r.type, r.text) for r in rules}
    for r in rules:
        out.append(r)
        others = [q for q in rules if q is not r]
        for origin in dict.fromkeys(origins):
            moved = _moved(r, origin, others, ma)
            if moved is not None and (moved.type, moved.text) not in have:
                have.add((moved.type, moved.text))
                out.append(moved)
    return out


def _moved(rule: Rule, origin: str, others: Sequence[Rule], ma: int) -> Rule | None:
    """``rule`` for the scope that ``others`` rewrite its scope into under ``origin``, or None."""
    if isinstance(rule, QueryPathRule):
        probe = f"{origin}{rule.scope}?{rule.name}={PROBE_VALUE}"
        head, path, tail = split_url(canonical(probe, others, ma))
        if not head or path == rule.scope or tail != f"?{rule.name}={PROBE_VALUE}":
            return None
        change: dict = {"scope": path}
    elif isinstance(rule, (ParamRule, QueryRule)) and rule.scope:
        path, fixed = parse_scope(rule.scope)
        if not path:
            return None
        head, new_path, tail = split_url(canonical(origin + make_scope(path, fixed), others, ma))
        items = [(n, v) for n, _, v in (it.partition("=") for it in tail[1:].split("&"))] if tail else []
        new_path = new_path.rstrip("/")
        # the scope is the path and what lies below it: below, the rewrite must move with it
        below = canonical(f"{origin}{path}/{PROBE_VALUE}", others, ma)
        if (not head or not new_path or new_path == path or not set(items) <= set(fixed)
                or below != f"{head}{new_path}/{PROBE_VALUE}"):
            return None
        change = {"scope": make_scope(new_path, items)}
    else:
        return None
    try:
        moved = dataclasses.replace(rule, **change, evidence=dict(rule.evidence or {}) | {"moved_from": rule.text,
                                                                                         "carried": True})
    except RuleError:  # the rewritten path cannot be a scope
        return None
    return moved if moved.text != rule.text else None


__all__ = ["one_rule_per_alias", "through_substrings"]
