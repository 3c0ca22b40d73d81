"""Token-class rules mined from phase 1's literal pairs (beyond DustBuster; docs/rules.md).

DustBuster (WWW 2007 §5.1) only finds literal substring rules, so a parameter whose value takes
many forms yields a family of near-identical rules: ``"=50&" → "=20&"``, ``"=100&" → "=20&"``,
``"=30&" → "=20&"``.  :func:`generalize_pairs` folds such a family into one
:class:`~dustbuster.core.model.pattern.PatternRule` ``"={digits}&" → "=20&"``: the literal rules whose
α (and possibly β) differ only in one URL token of one class become one rule with a typed
placeholder there.  The idea is the argument placeholders of the seq2seq de-duplication paper
(Xu, Liu, Callan, SIGIR 2017, §2.1 "URL Pre-processing", ../shared/papers/seq2seq-dedup-sigir2017.txt):
argument tokens are replaced by placeholders so that one learned rewrite covers every value, and
the value is copied to the output where the output carries it.  Here the placeholder is typed
and the rules stay readable substring rules; nothing is learned by a network.

Choices:

* **keys** — for each likely pair and each alphanumeric token ``t`` at position i of α, the pair
  joins the *literal* family (α with t blanked, β) and, when ``t`` occurs exactly once among the
  tokens of α and exactly once among those of β (the unambiguous "corresponding position"), the
  *copy* family (α and β with that token blanked in both; β copies the placeholder);
* **members** — the distinct pairs of a family; a family needs ``min_members`` of them;
* **class** — the narrowest class of ``digits``, ``hex``, ``word`` (in that order) whose pattern
  matches every member's value (``hex`` needs a digit and a letter of one case, so a family mixing
  ``50`` and ``3f`` is ``word``);
* **context** — α must keep, besides its anchors and the placeholder, one literal alphanumeric
  token or at least two literal non-alphanumeric characters: ``"={digits}&"`` and
  ``"page={digits}"`` are fine, ``"/{digits}"`` and ``"^{word}$"`` are not (they would rewrite
  almost anything);
* **host** — a token in the scheme or host is never a placeholder: one that lies before the end of
  the authority, i.e. before the first ``/`` following a ``//`` (or a final ``:/``) of α or β, and
  any token of an α anchored at the start (``^``) that has not yet reached the authority's ``//``
  and does not start with ``/``.  Tokens before a ``//`` are covered too (a query's
  ``next=http://``: conservative).  An α without ``//`` that is not anchored is path or query;
* **self-feeding** — a family is dropped when its rule does not rewrite every member's α to the
  member's β, or rewrites a member's β again (a β holding another instance of α would grow the URL
  forever; ``"={digits}&" → "=20&"`` is fine: a match already reading as β is skipped);
* **overlaps** — families are taken by most members, then longest α, then text; one is dropped
  when it shares a member pair with a family already taken, when its α's literal parts equal those
  of one taken (``"={digits}&" → "=20&"`` and ``→ "=30&"`` would cycle), or when, together with
  the rules taken, rewriting the members' α and β meets a form twice (rules undoing each other) or
  finds no fixed point within ``_CHECK_ROUNDS`` rounds;
* support = sum of the members' supports; ``evidence["examples"]``: the first three members by
  support, then text.  The rules come sorted by support (descending), then text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator, Sequence

from dustbuster.core.model.pair import Pair
from dustbuster.core.errors import RuleError
from dustbuster.core.params import DustParams
from dustbuster.core.model.pattern import CLASSES, PatternRule
from dustbuster.core.canon.rulecheck import reaches_fixed_point
from dustbuster.core.urls.tokens import END, START, display, tokenize

_ALNUM_TOKEN = re.compile(r"[A-Za-z0-9]+")
#: rounds of the convergence check on the members (one rule set of a few families)
_CHECK_ROUNDS = 8


@dataclass
class _Family:
    left: str  #: α before the placeholder
    right: str  #: α after it
    beta: tuple[str, ...]  #: literal β as (β,), or a copying β as (before, after)
    members: dict[tuple[str, str], tuple[str, int]] = field(default_factory=dict)  #: (α, β) → (value, support)

    @property
    def copy(self) -> bool:
        return len(self.beta) == 2


def _host_end(s: str) -> int:
    """Offset in ``s`` (internal form) before which a token may lie in the scheme or host."""
    k = s.find("//")
    if k < 0 and s.rstrip(END).endswith(":/"):
        k = len(s.rstrip(END)) - 1
    if k >= 0:
        slash = s.find("/", k + 2)
        return len(s) if slash < 0 else slash
    if s.startswith(START) and not s.startswith(START + "/"):
        return len(s)  # "^http:" or "^host": still in the scheme / authority
    return 0


def _offsets(tokens: list[str]) -> list[int]:
    out, pos = [], 0
    for t in tokens:
        out.append(pos)
        pos += len(t)
    return out


def _keys(pair: Pair) -> Iterator[tuple[tuple, str]]:
    """(family key, token value) of every family the pair can join (module docstring, keys)."""
    ta, tb = tokenize(pair.alpha), tokenize(pair.beta)
    oa, ob = _offsets(ta), _offsets(tb)
    host_a, host_b = _host_end(pair.alpha), _host_end(pair.beta)
    for i, tok in enumerate(ta):
        if not _ALNUM_TOKEN.fullmatch(tok) or oa[i] < host_a:
            continue
        left, right = "".join(ta[:i]), "".join(ta[i + 1:])
        yield (left, right, (pair.beta,)), tok
        if ta.count(tok) == 1 and tb.count(tok) == 1:
            j = tb.index(tok)
            # a copied token with the same text on one side in α and β only narrows the literal
            # rule without it and that side (it refines that rule, WWW 2007 §5.2): no family
            lb, rb = "".join(tb[:j]), "".join(tb[j + 1:])
            if ob[j] >= host_b and left != lb and right != rb:
                yield (left, right, (lb, rb)), tok


def _has_context(left: str, right: str) -> bool:
    """α keeps a literal alphanumeric token or two literal non-alphanumeric characters."""
    lit = (left + right).replace(START, "").replace(END, "")
    return bool(_ALNUM_TOKEN.search(lit)) or len(lit) >= 2


def _cover(values: Sequence[str]) -> str:
    """The narrowest class whose pattern matches every value (``word`` matches any token)."""
    for name, rx in CLASSES.items():
        if all(re.fullmatch(rx, v) for v in values):
            return name
    return "word"  # pragma: no cover - every alphanumeric token is a word


def _families(pairs: Sequence[Pair]) -> list[_Family]:
    fams: dict[tuple, _Family] = {}
    seen: set[tuple[str, str]] = set()
    for p in pairs:
        if (p.alpha, p.beta) in seen:
            continue
        seen.add((p.alpha, p.beta))
        for key, value in _keys(p):
            fam = fams.get(key)
            if fam is None:
                fam = fams[key] = _Family(*key)
            fam.members[(p.alpha, p.beta)] = (value, p.support)
    return list(fams.values())


def _member_text(ab: tuple[str, str]) -> str:
    return f'"{display(ab[0])}" → "{display(ab[1])}"'


def _rule(fam: _Family) -> PatternRule | None:
    """The family's rule, or None when it is not acceptable (module docstring)."""
    if not _has_context(fam.left, fam.right):
        return None
    cls = "{" + _cover([v for v, _ in fam.members.values()]) + "}"
    alpha = fam.left + cls + fam.right
    beta = fam.beta[0] + cls + fam.beta[1] if fam.copy else fam.beta[0]
    order = sorted(fam.members, key=lambda ab: (-fam.members[ab][1], ab))
    try:
        rule = PatternRule(alpha, beta, support=sum(s for _, s in fam.members.values()),
                           members=len(fam.members),
                           evidence={"examples": [_member_text(ab) for ab in order[:3]]})
    except RuleError:
        return None  # e.g. a literal "{digits}" in the URL text, or α = β
    for a, b in fam.members:
        if rule.apply_internal(a) != b or rule.apply_internal(b) != b:
            return None
    return rule


def _converges(rules: list[PatternRule], samples: list[str]) -> bool:
    """The members' α and β reach a fixed point under the rules in their final order (support,
    then text): :func:`~dustbuster.core.canon.rulecheck.reaches_fixed_point`."""
    return reaches_fixed_point(sorted(rules, key=lambda r: (-r.support, r.text)), samples, _CHECK_ROUNDS)


def generalize_pairs(pairs: Sequence[Pair], params: DustParams | None = None,
                     min_members: int = 3) -> list[PatternRule]:
    """Token-class rules generalising families of the likely pairs (module docstring).

    ``params`` is accepted for symmetry with the other miners (the choices above take none of its
    thresholds; the members are already likely pairs that passed MS)."""
    cands = []
    for fam in _families(pairs):
        if len(fam.members) < min_members:
            continue
        rule = _rule(fam)
        if rule is not None:
            cands.append((fam, rule))
    cands.sort(key=lambda fr: (-fr[1].members, -len(fr[1].alpha), fr[1].text))
    taken: list[PatternRule] = []
    claimed: set[tuple[str, str]] = set()
    contexts: set[tuple[str, str]] = set()
    samples: list[str] = []
    for fam, rule in cands:
        if claimed & fam.members.keys() or (fam.left, fam.right) in contexts:
            continue
        mine = [s for ab in fam.members for s in ab]
        if not _converges(taken + [rule], samples + mine):
            continue
        taken.append(rule)
        claimed |= fam.members.keys()
        contexts.add((fam.left, fam.right))
        samples += mine
    general = [r for r in taken if not any(_refines(r, o) for o in taken if o is not r)]
    return sorted(general, key=lambda r: (-r.support, r.text))


def _refines(r: PatternRule, o: PatternRule) -> bool:
    """True when ``r`` is ``o`` with the same text added around α and β (WWW 2007 §5.2's
    refinement): ``"-bin/countdown?{digits}," → "-bin/countdown?102,"`` refines
    ``"?{digits}," → "?102,"``; the more general rule is kept (the validator would drop the other
    unfetched once it is valid)."""
    k = r.alpha.find(o.alpha)
    while k >= 0:
        if r.beta == r.alpha[:k] + o.beta + r.alpha[k + len(o.alpha):]:
            return True
        k = r.alpha.find(o.alpha, k + 1)
    return False
