"""Generalised scopes (beyond the papers; docs/rules.md "Generalised scopes").

The scoped miners (core/mining/scoped.py, core/mining/qscope.py) state each rule at the widest scope whose own
evidence holds.  A namespace that is not in the log gets no rule then, though the same rule holding
under several of its siblings says that the site treats the whole level alike: ``remove s=*`` under
``/wiki/pkg/libs`` and ``/wiki/pkg/misc`` suggests ``remove s=*`` under ``/wiki/pkg``.  Choices (ours;
the parent is a candidate like any other, decided by the validator by fetching):

* **siblings** — mined rules of one *shape* (type, action, parameter, value; a query drop rule
  without its ``keep``) whose scopes have the same parent: a path scope's parent is its path one
  segment up (``/a/b`` → ``/a``, ``/a`` → ``""``); a query-parameter scope's parent is its path part
  (``/index.php?title=Special:UserLogin`` and ``…?title=Special:CreateAccount`` → ``/index.php``);
* **threshold** — at least :data:`MIN_SIBLINGS` (2) siblings, and no scope strictly inside the
  parent (a sibling, one of its descendants, a query-parameter scope of the parent's path) where the
  miner *refuted* the shape (≥ MS comparisons, similar share below ``param_min_ratio``: the same
  test that vetoes a wider scope in :func:`dustbuster.core.mining.scoped.holding_scopes`).  The parent's
  own pooled share may fall short (namespaces with too few comparisons to refute it): that is what
  the candidate asks the validator;
* **the candidate** — the shape at the parent: support and disqualified summed, a closed list of
  dropped names (``only``) the union of the siblings' less what any keeps, ``keep`` the union of
  the siblings' (at most :data:`dustbuster.core.mining.scoped.MAX_KEEP` names: keeping a no-op parameter
  only merges less), ``evidence.generalised_from`` the sibling scopes.  One level per mining run,
  not recursive; the parent is left out when a mined rule of the shape already covers it;
* **fallback** — the siblings stay in the candidate list: the validator decides each, and when the
  parent is valid the set check drops the siblings as changing nothing it has not changed.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import replace
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence, cast

from dustbuster.core.errors import RuleError
from dustbuster.core.model.rules import ParamRule, Rule
from dustbuster.core.urls.scope import make_scope, parse_scope, scope_covers, scopes_of
from dustbuster.core.model.scopedrules import QueryRule

MIN_SIBLINGS = 2
#: members (distinct scopes) a family needs before one rule is proposed for all of them
MIN_FAMILY = 3
Shape = tuple
#: shape → the scopes where the miner refuted it (≥ MS comparisons below the ratio)
Refuted = Mapping[Shape, Iterable[str]]
if TYPE_CHECKING:
    from typing import TypeAlias

    #: the scoped rule types :func:`shape_of` knows
    Scoped: TypeAlias = ParamRule | QueryRule


def shape_of(rule: Rule) -> Shape | None:
    """A rule without its scope (and a drop rule without its ``keep``); None for unscoped types."""
    if isinstance(rule, ParamRule):  # a value-level rule: its values are part of its shape
        return ("parameter", rule.action, rule.name, rule.value, *((rule.values,) if rule.values else ()))
    if isinstance(rule, QueryRule):
        return ("query", rule.action)
    return None


def parent_scope(scope: str) -> str | None:
    """The scope one level up (module docstring); None for the global scope."""
    if not scope:
        return None
    path, fixed = parse_scope(scope)
    if fixed:
        return path
    return scopes_of(path)[-2] if len(scopes_of(path)) > 1 else ""


def generalise(rules: Sequence[Rule], refuted: Refuted, max_keep: int = 4) -> list[Scoped]:
    """The parent candidates of the rules' sibling groups (module docstring), in the rules' order."""
    groups: dict[tuple[Shape, str, tuple], list[Scoped]] = defaultdict(list)
    for r in rules:
        shape, parent = shape_of(r), parent_scope(getattr(r, "scope", ""))
        if shape is not None and parent is not None:
            assert isinstance(r, (ParamRule, QueryRule))  # the types shape_of gives a shape
            names = tuple(n for n, _ in parse_scope(r.scope)[1])
            groups[(shape, parent, names)].append(r)
    out: list[Scoped] = []
    for (shape, parent, _), sibs in groups.items():
        if len(sibs) < MIN_SIBLINGS or any(s != parent and scope_covers(parent, s) for s in refuted.get(shape, ())):
            continue
        if any(shape_of(r) == shape and scope_covers(cast("Scoped", r).scope, parent) for r in rules):
            continue
        rule = _parent_rule(sibs, parent, max_keep)
        if rule is not None:
            out.append(rule)
    return out


def family_roots(rules: Sequence[Rule], refuted: Refuted, max_keep: int = 4) -> list[Scoped]:
    """One rule per family (ours, beyond the papers; docs/rules.md "Generalised scopes"): the rules of
    one shape whose scopes lie under more than one parent (a no-op parameter mined under ``/wiki/A``,
    ``/wiki/B/C`` and ``/w/index.php?title=X``: what :func:`generalise`'s one level cannot join) give
    one candidate at their least general generalisation — the widest scope covering them all that
    covers each one's path, with the fixed values all of them share — up to the site's root, when
    at least :data:`MIN_FAMILY` of them are there, no rule of the shape covers that scope already
    and the miner refuted the shape in no region of its own inside it (a scope on the members' way
    up that fails only by pooling their comparisons with a few others is asked, as
    :func:`generalise` asks a parent).  The validator decides it on samples drawn
    across the members and made across the scopes the log did not sample (made samples); the set
    check drops the members it subsumes."""
    fam: dict[Shape, list[Scoped]] = defaultdict(list)
    for r in rules:
        shape = shape_of(r)
        if shape is not None:
            fam[shape].append(cast("Scoped", r))
    out: list[Scoped] = []
    for shape, rs in fam.items():
        every = list(dict.fromkeys(r.scope for r in rs))
        # the literal members: a rule over others (generalise's parent) is not one of them
        scopes = [s for s in every if not any(o != s and scope_covers(s, o) for o in every)]
        members = [r for r in rs if r.scope in scopes]
        if len(scopes) < MIN_FAMILY or len({parent_scope(s) for s in scopes}) < 2:
            continue
        root = least_general_scope(scopes)
        # refuted in a region of its own inside the root (not a pooled failure on the members' way up)
        if root in scopes or any(scope_covers(root, s) and not any(scope_covers(s, m) for m in scopes)
                                 for s in refuted.get(shape, ())):
            continue
        if any(scope_covers(r.scope, root) for r in rs):
            continue
        rule = _parent_rule(members, root, max_keep)
        if rule is not None:
            ev = dict(rule.evidence) | {"family": True, "members": len(scopes)}
            out.append(replace(rule, evidence=ev))
    return out


def least_general_scope(scopes: Sequence[str]) -> str:
    """The narrowest scope that covers every one of ``scopes``: the common path scope of their path
    parts, with the fixed values all of them fix.

    >>> least_general_scope(["/wiki/A", "/wiki/B/C", "/wiki"]), least_general_scope(["/wiki/A", "/w/index.php?title=X"])
    ('/wiki', '')
    >>> least_general_scope(["/i.php?a=1&t=X", "/i.php?a=1&t=Y"])
    '/i.php?a=1'
    """
    parsed = [parse_scope(s) for s in scopes]
    common = os.path.commonprefix([list(scopes_of(p)) for p, _ in parsed])  # element by element
    path = common[-1] if common else ""
    fixed = set(parsed[0][1])
    for _, f in parsed[1:]:
        fixed &= set(f)
    same_path = all(p == path for p, _ in parsed)
    return make_scope(path, sorted(fixed)) if fixed and same_path else path


def _parent_rule(sibs: list[Scoped], parent: str, max_keep: int) -> Scoped | None:
    first = sibs[0]
    ev = {"generalised_from": sorted(r.scope for r in sibs)[:20], "siblings": len(sibs)}
    sup = sum(r.support for r in sibs)
    dis = sum(getattr(r, "disqualified", 0) for r in sibs)
    try:
        if isinstance(first, QueryRule) and first.action == "drop":
            drops = cast("list[QueryRule]", sibs)  # one shape: all drop rules
            keep = tuple(sorted({n for r in drops for n in r.keep}))
            if len(keep) > max_keep:
                return None
            # closed lists: the parent drops what some sibling's evidence dropped and none keeps;
            # a mix of closed and open rules, or nothing left to drop, is no parent
            closed = [bool(r.only) for r in drops]
            only = tuple(sorted({n for r in drops for n in r.only} - set(keep)))
            if any(closed) and (not all(closed) or not only):
                return None
            return replace(first, scope=parent, keep=keep, only=only, support=sup, disqualified=dis, evidence=ev)
        return replace(first, scope=parent, support=sup, disqualified=dis, evidence=ev)
    except RuleError:  # e.g. a parent whose query scope fixes the rule's own parameter
        return None
