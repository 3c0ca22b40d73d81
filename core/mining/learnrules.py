"""From a learned model's rewrites to candidate rules of our language (beyond the papers).

The seq2seq de-duplication model (Xu, Liu, Callan, SIGIR 2017,
../shared/papers/seq2seq-dedup-sigir2017.txt) translates a URL ``u`` into its canonical form ``v``:
§2.3 trains it on pairs (url_source, url_target) of one duplicate cluster, the target being the
member with the fewest tokens, and §2.1 replaces argument tokens by placeholders that are copied to
the output.  The paper then canonizes with the network itself.  We do not: each prediction u → v is
only *evidence*, turned here into a candidate of our rule language (docs/rules.md) that goes through
the normal validation by fetching (docs/validation.md); only validated rules are published.  The
papers have no such step (DustBuster mines its candidates from the log, WWW 2007 §5.1): everything
below is our design.  :func:`rules_from_rewrites` is pure (no I/O, no model).

Choices:

* **input** — a pair is skipped when u = v, either is not an absolute http(s) URL (or holds a
  sentinel character), v is longer than u (so no candidate lengthens any of its members' URLs), u
  already had one (the first usable prediction counts), the current rules change u (they handle
  it), or they change v (v is no canonical form of theirs: a rule to v would fight the published
  set); the current rules are ``known`` less those with status ``invalid``;
* **shapes** — a pair whose host or scheme differ is only a whole-host substitution ``www.h → h``
  (same scheme, host ``x.h`` to a parent ``h`` that has a dot, same path and query): the rule
  ``"^http://www.h/" → "^http://h/"`` anchored at the start, the next character as right context,
  as the miner's host rules read.  Same path, other query: removing one parameter
  (:class:`ParamRule` remove), setting one to a constant (replace), dropping the query keeping the
  names v still has (:class:`QueryRule` drop, ``keep`` = those names) or sorting it (sort); a path
  that differs in case only: :class:`CaseRule`.  A shape counts only when its rule (global scope)
  maps u to exactly v;
* **literal** — otherwise, or when only a case rule fits: the token-aligned differing middle (WWW
  2007 §3's tokens; common token prefix and suffix removed).  It takes the neighbouring token on a
  side where it begins or ends with an alphanumeric token (``"/index$" → "/$"``, ``".html$" →
  "$"``: a separator or an anchor, never half a word), then the least further context (left first;
  both sides at once for a middle of separators only, ``"//b" → "/b"``) until α has a literal
  alphanumeric token or two literal characters (generalize.py's context rule), maps u to exactly
  v, does not feed itself (α in β) and cannot start inside ``scheme://authority`` (``"/h/"`` on
  host ``h``); at most ``MAX_CONTEXT`` tokens each side, never into u's authority.  Literal
  pairs go through :func:`~dustbuster.core.mining.generalize.generalize_pairs` (families of ≥ 3 pairs
  become pattern rules with a typed placeholder, the §2.1 arguments made readable); what
  no pattern explains stays a literal rule (the per-pattern mapping);
* **families** — the pairs of one shape; a scoped rule's scope is the most specific scope covering
  every member (their common scope at segment boundaries, widened while the rule misses one);
  chosen greedily, most members first (ties: :data:`~dustbuster.core.model.rules.TYPE_ORDER`, so the
  narrower parameter rule before a query rule), each pair explained by one rule only;
* **size** — a family needs ``min_family`` members; a smaller literal family is kept only when α
  and β hold no argument token (no digit, the cheap sign of §2.1's arguments): such a rule
  (``"-print$" → "$"``) likely changes other URLs of the log, which the validator samples, while
  ``"/s-3f9a/" → "/"`` would only ever change its one URL (a wasted fetch); a literal edit whose
  new text holds a number the URL lacks (``"_131$" → "_26$"``) is no candidate at all: the model
  recalled an argument of its training pairs instead of copying one (on the simulator, 40 of 47
  candidates were such, every one refuted);
* **safety, before any fetch** — a rule must map each member's u to exactly v (members it misses
  are not its members), not feed itself (:func:`~dustbuster.core.canon.rulecheck.self_feeding`), differ
  from every known rule (same type and text: valid ones are already there, invalid ones were
  refuted), not refine a current substring rule (WWW 2007 §5.2), and, with the current rules and the
  candidates taken so far, bring every member's u and v to a fixed point within ``_ROUNDS``
  iterations without meeting a form twice (rules that undo each other);
* **refinement among candidates** (WWW 2007 §5.2) — a family whose members an already taken, more
  general candidate maps exactly is credited to that candidate instead of becoming a rule;
* **output** — status ``likely``, ``support`` = the rewrites explained, ``evidence = {"source":
  "learned", "examples": [[u, v], …]}`` (the first three members in URL order); sorted by support,
  then text; at most ``max_rules``.
"""

from __future__ import annotations

import dataclasses
import heapq
import re
from collections import Counter, defaultdict
from typing import Sequence

from dustbuster.core.urls import query
from dustbuster.core.canon.canonize import Canonizer
from dustbuster.core.model.pair import Pair
from dustbuster.core.errors import RuleError
from dustbuster.core.mining.generalize import generalize_pairs
from dustbuster.core.model.pattern import PatternRule
from dustbuster.core.mining.refine import rule_refines
from dustbuster.core.canon.rulecheck import is_http_url, reaches_fixed_point, self_feeding
from dustbuster.core.model.rules import TYPE_ORDER, ParamRule, Rule, SubstringRule, canonization_order
from dustbuster.core.urls.scope import scopes_of, split_url
from dustbuster.core.model.scopedrules import CaseRule, QueryRule
from dustbuster.core.urls.tokens import END, START, is_boundary, tokenize, wrap

Rewrite = tuple[str, str]
Key = tuple  #: a rule shape without its scope: ("parameter", action, name[, value]), ("query", ...), ...

#: tokens of context a literal rule may take on each side of the differing middle
MAX_CONTEXT = 6
#: iterations of the convergence check (generalize.py's check, over every rule type)
_ROUNDS = 8
_SCOPED = ("parameter", "query", "case")
_ALNUM = re.compile(r"[A-Za-z0-9]")
_NUMBER = re.compile(r"[0-9]+")
#: a literal candidate's α is at most this long (a 5,000-character token would be a useless rule)
MAX_ALPHA = 200
_EXAMPLES = 3


def rules_from_rewrites(rewrites: Sequence[tuple[str, str]], known: Sequence[Rule] = (), *,
                        min_family: int = 2, max_rules: int = 50) -> list[Rule]:
    """Candidate rules (status ``likely``) explaining the model's rewrites u → v (module docstring)."""
    active = [r for r in known if r.status != "invalid"]
    rw = _usable(rewrites, active)
    taken = _select(_families(rw), rw, known, active, min_family, max_rules)
    out = [_final(rule, members, rw) for rule, members in taken]
    return sorted(out, key=lambda r: (-r.support, r.text))[:max_rules]


def _usable(rewrites: Sequence[Rewrite], active: Sequence[Rule]) -> list[Rewrite]:
    """The pairs worth explaining (module docstring, input)."""
    canon = Canonizer(active) if active else None
    out: list[Rewrite] = []
    seen: set[str] = set()
    for u, v in rewrites:
        if (u in seen or u == v or len(v) > len(u) or not is_http_url(u) or not is_http_url(v)
                or any(c in u + v for c in START + END)):
            continue
        seen.add(u)
        if canon is None or (canon(u) == u and canon(v) == v):
            out.append((u, v))
    return out


def _make(key: Key, scope: str = "") -> Rule | None:
    """The rule of a shape, or None when the shape is no rule (a bad name, α = β, ...)."""
    kind = key[0]
    try:
        if kind == "parameter":
            return ParamRule(key[2], key[1], key[3] if key[1] == "replace" else None, scope=scope)
        if kind == "query":
            return QueryRule(scope, key[1], key[2] if key[1] == "drop" else ())
        if kind == "case":
            return CaseRule(scope)
        if kind == "substring":
            return SubstringRule(key[1], key[2])
        return PatternRule(key[1], key[2], members=key[3])
    except RuleError:
        return None


def _maps(rule: Rule | None, u: str, v: str) -> bool:
    return rule is not None and rule.apply_internal(wrap(u)) == wrap(v)


def _shapes(u: str, v: str) -> list[Key]:
    """Every shape whose rule maps u to exactly v (module docstring, shapes and literal)."""
    hu, pu, tu = split_url(u)
    hv, pv, tv = split_url(v)
    if hu != hv:
        host = _host_shape(hu, hv, u[len(hu):], v[len(hv):])
        return [host] if host else []
    keys: list[Key] = []
    if pu == pv:
        keys = _query_shapes(u, v)
    elif tu == tv and pu.lower() == pv.lower():
        keys = [("case",)]
    keys = [k for k in keys if _maps(_make(k), u, v)]
    if not keys or keys == [("case",)]:
        lit = _literal_shape(u, v)
        keys += [lit] if lit else []
    return keys


def _host_shape(hu: str, hv: str, rest_u: str, rest_v: str) -> Key | None:
    """``www.h → h``: same scheme, a host to its parent (which has a dot), the same rest."""
    su, _, au = hu.partition("://")
    sv, _, av = hv.partition("://")
    if su != sv or rest_u != rest_v or "." not in av or "@" in au or not au.endswith("." + av):
        return None
    nxt = rest_u[:1] or END
    return ("substring", START + hu + nxt, START + hv + nxt)


def _query_shapes(u: str, v: str) -> list[Key]:
    """Shapes of a pair that differ in the query only (checked by the caller)."""
    iu, iv = query.split(u)[1] or [], query.split(v)[1] or []
    if not iu:
        return []
    names_u, names_v = [n for n, _ in iu], [n for n, _ in iv]
    keys: list[Key] = []
    gone = set(names_u) - set(names_v)
    if gone and set(names_v) <= set(names_u):
        if len(gone) == 1:
            keys.append(("parameter", "remove", gone.pop()))
        keys.append(("query", "drop", tuple(sorted(set(names_v)))))
    if names_u == names_v:
        changed = {n for (n, a), (_, b) in zip(iu, iv) if a != b}
        values = {b for n, b in iv if n in changed}
        if len(changed) == 1 and len(values) == 1 and None not in values:
            keys.append(("parameter", "replace", changed.pop(), values.pop()))
    if Counter(iu) == Counter(iv):
        keys.append(("query", "sort"))
    return keys


def _has_context(alpha: str) -> bool:
    lit = alpha.replace(START, "").replace(END, "")
    return bool(_ALNUM.search(lit)) or len(lit) >= 2


def _reaches_head(alpha: str, head: str) -> bool:
    """α could start inside ``^scheme://authority`` of a URL of this site (its start equals a
    token-aligned end of the head, or it lies in the head)."""
    h = START + head
    return any(is_boundary(h, i) and (alpha.startswith(h[i:]) or h.startswith(alpha, i))
               for i in range(len(h)))


def _literal_shape(u: str, v: str) -> Key | None:
    """The literal substring rule of a pair (module docstring, literal); None when none is safe."""
    tu, tv = tokenize(wrap(u)), tokenize(wrap(v))
    n = min(len(tu), len(tv))
    p = 0
    while p < n and tu[p] == tv[p]:
        p += 1
    s = 0
    while s < n - p and tu[-1 - s] == tv[-1 - s]:
        s += 1
    head = split_url(u)[0]
    room = p - len(tokenize(START + head))  # common tokens left of the middle, in the path
    if room < 0:
        return None
    mid_u, mid_v = tu[p:len(tu) - s], tv[p:len(tv) - s]
    if not mid_u or _recalled("".join(mid_v), u):
        return None  # an insertion (v would be longer), or a number the URL does not hold
    edge = lambda t: bool(t) and bool(_ALNUM.match(t))  # noqa: E731
    l0 = min(room, int(edge(mid_u[0]) or bool(mid_v) and edge(mid_v[0])))
    r0 = min(s, int(edge(mid_u[-1]) or bool(mid_v) and edge(mid_v[-1])))
    wu, wv = wrap(u), wrap(v)
    for left, right in _spans(l0, min(room, l0 + MAX_CONTEXT), r0, min(s, r0 + MAX_CONTEXT),
                              _ALNUM.search("".join(mid_u + mid_v)) is None):
        alpha = "".join(tu[p - left:len(tu) - s + right])
        beta = "".join(tv[p - left:len(tv) - s + right])
        if len(alpha) > MAX_ALPHA or not _has_context(alpha) or _reaches_head(alpha, head):
            continue
        rule = _make(("substring", alpha, beta))
        if rule is not None and rule.apply_internal(wu) == wv and self_feeding(rule) is None:
            return ("substring", alpha, beta)
    return None


def _recalled(text: str, url: str) -> bool:
    """True when ``text`` holds a number that ``url`` does not: an argument the model recalled
    from its training pairs instead of copying it (§2.1's placeholders exist to copy), as in
    ``story_131`` → ``story_26`` (a frequent training page); such a rule is refuted at a cost."""
    return bool(set(_NUMBER.findall(text)) - set(_NUMBER.findall(url)))


def _spans(l0: int, l1: int, r0: int, r1: int, sym: bool) -> list[tuple[int, int]]:
    """(left, right) context sizes to try, least context first (left before right); a middle of
    separators only (``"/"`` of ``"//"`` → ``"/"``) has no meaning of its own: both sides first."""
    spans = [(a, b) for a in range(l0, l1 + 1) for b in range(r0, r1 + 1)]
    if sym:
        return sorted(spans, key=lambda ab: (max(ab[0] - l0, ab[1] - r0), r0 - ab[1] + l0 - ab[0], -ab[0]))
    return sorted(spans, key=lambda ab: (ab[0] + ab[1], -ab[0]))


def _families(rw: Sequence[Rewrite]) -> dict[Key, list[int]]:
    """Shape → indices of the pairs it explains; pattern shapes from the literal pairs."""
    fams: dict[Key, list[int]] = defaultdict(list)
    literal: dict[int, Key] = {}
    for i, (u, v) in enumerate(rw):
        for key in _shapes(u, v):
            fams[key].append(i)
            if key[0] == "substring" and not key[1].startswith(START):
                literal[i] = key
    counts = Counter(literal.values())
    for pat in generalize_pairs([Pair(k[1], k[2], c, c) for k, c in sorted(counts.items())]):
        members = [i for i, k in literal.items() if _maps(pat, *rw[i])]
        if members:
            fams[("pattern", pat.alpha, pat.beta, pat.members)] = members
    return fams


def _common_scopes(paths: list[str]) -> list[str]:
    """Scopes covering every path, widest first (``[""]`` at least)."""
    common = scopes_of(paths[0])
    for path in paths[1:]:
        mine = scopes_of(path)
        k = 0
        while k < min(len(common), len(mine)) and common[k] == mine[k]:
            k += 1
        common = common[:k]
    return common


def _finish(key: Key, live: list[int], rw: Sequence[Rewrite], min_family: int) -> tuple[Rule, list[int]] | None:
    """The family's rule and the members it maps exactly, or None (module docstring, size)."""
    scope = ""
    if key[0] in _SCOPED:
        fits = [s for s in reversed(_common_scopes([split_url(rw[i][0])[1] for i in live]))
                if all(_maps(_make(key, s), *rw[i]) for i in live)]
        scope = fits[0] if fits else ""
    rule = _make(key, scope)
    members = [i for i in live if _maps(rule, *rw[i])]
    if not members or rule is None or self_feeding(rule) is not None:
        return None
    if len(members) < min_family and (key[0] != "substring" or re.search(r"[0-9]", key[1] + key[2])):
        return None
    return rule, members


def _converges(rules: list[Rule], samples: list[str]) -> bool:
    """The samples (URLs) reach a fixed point under the rules in canonization order
    (:func:`~dustbuster.core.canon.rulecheck.reaches_fixed_point`, generalize.py's check for any type)."""
    return reaches_fixed_point(canonization_order(rules), (wrap(u) for u in samples), _ROUNDS)


def _implied(rule: Rule, known: Sequence[Rule], active: Sequence[Rule]) -> bool:
    """The rule is a known one, or refines a current substring rule (WWW 2007 §5.2)."""
    if any(k.type == rule.type and k.text == rule.text for k in known):
        return True
    return isinstance(rule, SubstringRule) and any(
        isinstance(k, SubstringRule) and rule_refines(rule.alpha, rule.beta, k.alpha, k.beta) for k in active)


def _select(fams: dict[Key, list[int]], rw: Sequence[Rewrite], known: Sequence[Rule], active: list[Rule],
            min_family: int, max_rules: int) -> list[tuple[Rule, list[int]]]:
    """Greedy cover: the family with the most unexplained members first (module docstring)."""
    heap = [(-len(m), TYPE_ORDER[k[0]], repr(k), k) for k, m in fams.items()]
    heapq.heapify(heap)
    claimed: set[int] = set()
    taken: list[tuple[Rule, list[int]]] = []
    samples: list[str] = []
    while heap and len(taken) < max_rules:
        neg, rank, text, key = heapq.heappop(heap)
        live = [i for i in fams[key] if i not in claimed]
        if len(live) < -neg:
            if live:
                heapq.heappush(heap, (-len(live), rank, text, key))
            continue
        general = next((ms for r, ms in taken if all(_maps(r, *rw[i]) for i in live)), None)
        if general is not None:  # refinement: a taken, more general candidate explains them
            general += live
            claimed.update(live)
            samples += [s for i in live for s in rw[i]]
            continue
        made = _finish(key, live, rw, min_family)
        if made is None or _implied(made[0], known, active):
            continue
        rule, members = made
        mine = [s for i in members for s in rw[i]]
        if not _converges(active + [r for r, _ in taken] + [rule], samples + mine):
            continue
        taken.append((rule, members))
        claimed.update(members)
        samples += mine
    return taken


def _final(rule: Rule, members: list[int], rw: Sequence[Rewrite]) -> Rule:
    examples = sorted(rw[i] for i in members)[:_EXAMPLES]
    fields: dict = {"support": len(members), "status": "likely",
                    "evidence": {"source": "learned", "examples": [list(ex) for ex in examples]}}
    if isinstance(rule, SubstringRule):
        fields["support_high"] = len(members)
    return dataclasses.replace(rule, **fields)
