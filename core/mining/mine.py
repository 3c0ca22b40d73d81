"""The offline DustBuster pipeline without fetching: phases 1–3 (WWW 2007 §5.1–5.2, thesis §5.3).

``mine(urllist)`` ranks likely substring pairs with T_low supports (Figure 1), eliminates
redundant ones with Figure 2 on T_high supports (§5.2), and detects parameter rules (§5.3).  The
pairs come out oriented in the shrinking direction (α > β), the direction Figure 4 tries first.

>>> from dustbuster.core.urls.urllist import URLList
>>> ul = URLList()
>>> for i in range(40):       # every story under two URLs, of the same size: DUST
...     ul.add(f"http://forum.test/story?id={i}", size=2000 + 7 * i)
...     ul.add(f"http://forum.test/story_{i}", size=2000 + 7 * i)
>>> result = mine(ul)
>>> [r.text for r in result.substring_rules()]
['"^http://forum.test/story?id=" → "^http://forum.test/story_"']
>>> result.to_json()["schema"]
'dustbuster/mine@2'
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from dustbuster.core.mining.detect import Pair, Progress, SupportTable, count_supports, likely_pairs
from dustbuster.core.mining.paramrules import ParamCandidate, detect_param_rules
from dustbuster.core.params import DustParams
from dustbuster.core.mining.refine import eliminate, elimination_order
from dustbuster.core.model.ruletype import REGISTRY
from dustbuster.core.model.rules import SCHEMA_MINE, ParamRule, Rule, SubstringRule, canonization_order
from dustbuster.core.urls.urlindex import URLIndex
from dustbuster.core.urls.urllist import URLList

STAGES = ("detect", "eliminate")
#: how many of the mined URLs (a fixed sample) each candidate's unsafe check is judged on
UNSAFE_SAMPLE = 5000


@dataclass
class MineResult:
    params: DustParams
    stage: str
    detected: list[Pair]  #: phase 1 output, ranked by T_low support
    kept: list[Pair]  #: after elimination (== detected for stage "detect"), ranked
    param_candidates: list[ParamCandidate]
    param_kept: list[ParamCandidate]
    stats: dict = field(default_factory=dict)
    eliminated_by: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    test_urls: list[str] = field(default_factory=list)  #: streaming: recent URLs for validation
    error_urls: list[str] = field(default_factory=list)  #: streaming: URLs logged only with status >= 400
    #: language "extended": parameter rules per path scope (core/mining/scoped.py; replace the thesis'
    #: global ones in param_rules()), then query, case and pattern rules (docs/rules.md)
    scoped_params: list[ParamRule] | None = None
    general: list[Rule] = field(default_factory=list)
    #: display text → why the candidate is unsafe (:func:`unsafe_flags`); the JSON's ``unsafe``
    unsafe: dict[str, str] = field(default_factory=dict)

    def substring_rules(self) -> list[SubstringRule]:
        out = []
        for rank, p in enumerate(self.kept, 1):
            ev: dict = {"rank": rank}
            out.append(SubstringRule(p.alpha, p.beta, p.support, p.support_high, "likely", ev))
        return out

    def param_rules(self) -> list[ParamRule]:
        if self.scoped_params is not None:
            return list(self.scoped_params)
        return [
            ParamRule(
                c.name,
                c.action,
                c.value,
                c.support,
                c.disqualified,
                "likely",
                {"urls_with_param": c.urls, "similar_ratio": round(c.ratio, 4)},
            )
            for c in self.param_kept
        ]

    def to_json(self) -> dict:
        return {
            "schema": SCHEMA_MINE,
            "stage": self.stage,
            "params": self.params.to_dict(),
            "stats": self.stats,
            "rules": [self._rule_json(r) for r in self.grouped_rules()],
        }

    def grouped_rules(self) -> list[Rule]:
        """Every mined rule as the one ``rules`` list of mine@2: parameter rules, the other types,
        then the substring rules by rank (readers put them in canonization order)."""
        return [*self.param_rules(), *self.general, *self.substring_rules()]

    def _rule_json(self, rule: Rule) -> dict:
        doc = rule.to_json()
        if rule.text in self.unsafe:
            doc["unsafe"] = self.unsafe[rule.text]
        return doc

    def likely_rules(self) -> list[Rule]:
        """Every mined rule, in canonization order (parameter, query, case, substring, pattern)."""
        return canonization_order(self.grouped_rules())


def candidate_count(result: MineResult) -> int:
    """Every rule the run proposes: substring pairs kept, parameter rules, the other types."""
    pairs = result.kept if result.stage == "eliminate" else result.detected
    return len(pairs) + len(result.param_rules()) + len(result.general)


def unsafe_flags(result: MineResult, urls: Iterable[str], sample: int = UNSAFE_SAMPLE) -> dict[str, str]:
    """Display text → why applying the candidate unvalidated would mangle URLs
    (:func:`dustbuster.core.canon.rulecheck.unsafe_candidate`, for all candidates at once), judged on a fixed sample of the mined URLs:
    the same flags for the same URLs, in ``dustbuster mine`` and in a streaming window."""
    from dustbuster.core.canon.rulecheck import unsafe_candidates

    return unsafe_candidates(flagged_rules(result), unsafe_sample(urls, sample))  # one scan of the sample for all (core/canon/urlreach.py)


def unsafe_sample(urls: Iterable[str], sample: int = UNSAFE_SAMPLE) -> list[str]:
    """The URLs :func:`unsafe_flags` judges the candidates on: a fixed sample of ``urls``."""
    ordered = sorted(urls)  # sorted: the same sample and the same example URL on every run
    if len(ordered) > sample:
        ordered = random.Random(0).sample(ordered, sample)
    return ordered


def flagged_rules(result: MineResult) -> list[Rule]:
    """The candidates :func:`unsafe_flags` judges, in its order: the substring pairs (kept, or
    detected for stage "detect"), the parameter rules, the other types."""
    return [*pair_rules(result), *result.param_rules(), *result.general]


def pair_rules(result: MineResult) -> list[SubstringRule]:
    """The substring pairs :func:`unsafe_flags` judges, as rules."""
    pairs = result.kept if result.stage == "eliminate" else result.detected
    return [SubstringRule(p.alpha, p.beta) for p in pairs]


def mine(urllist: URLList, params: DustParams | None = None, stage: str = "eliminate", progress: Progress | None = None,
         index: URLIndex | None = None) -> MineResult:
    """Phases 1 to 3 on ``urllist``.  ``index``: the list's URLs already parsed (a streaming window
    keeps it between windows, core/urls/urlindex.py :meth:`~URLIndex.refresh`); the same result."""
    params = params or DustParams()
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}")
    return mine_table(count_supports(urllist, params, progress, index), urllist, params, stage, index)


def mine_table(table: SupportTable, urllist: URLList, params: DustParams, stage: str = "eliminate",
               index: URLIndex | None = None) -> MineResult:
    """Phases 1 (ranking) to 3 from already counted supports (the streaming miner's state)."""
    detected, kept, eliminated_by, stats = rank_pairs(table, urllist, params, stage)
    del table
    t0 = time.perf_counter()
    index = URLIndex.of(urllist, params, index)  # every URL parsed once for phase 3 and the general miners
    pkept, pcands = detect_param_rules(urllist, params, index)
    stats["param_candidates"] = len(pcands)
    stats["param_rules"] = len(pkept)
    stats["param_seconds"] = round(time.perf_counter() - t0, 3)
    result = MineResult(params, stage, detected, kept, pcands, pkept, stats, eliminated_by)
    if params.language == "extended":
        t0 = time.perf_counter()
        mine_general(result, urllist, index)
        stats["general_seconds"] = round(time.perf_counter() - t0, 3)
    return result


def rank_pairs(table: SupportTable, urllist: URLList, params: DustParams, stage: str = "eliminate"
               ) -> tuple[list[Pair], list[Pair], dict[tuple[str, str], tuple[str, str]], dict]:
    """Phase 1's ranking (Figure 1 lines 21-22) and, for stage "eliminate", phase 2 (Figure 2):
    (detected, kept, eliminated_by, stats); what :func:`mine_table` does before phase 3."""
    stats = dict(table.stats)
    stats["urls_with_size"] = urllist.sized
    detected = likely_pairs(table, params)
    stats["likely_pairs"] = len(detected)
    eliminated_by: dict[tuple[str, str], tuple[str, str]] = {}
    if stage == "eliminate":
        t0 = time.perf_counter()
        survivors, why = eliminate(elimination_order(detected), params)
        alive = set(survivors)
        kept = [p for p in detected if p in alive]
        eliminated_by = {(a.alpha, a.beta): (b.alpha, b.beta) for a, b in why}
        stats["eliminate_seconds"] = round(time.perf_counter() - t0, 3)
        stats["after_elimination"] = len(kept)
    else:
        kept = list(detected)
    return detected, kept, eliminated_by, stats


def mine_general(result: MineResult, urllist: URLList, index: URLIndex | None = None,
                 before_pairs: Callable[[list[Rule]], None] | None = None) -> None:
    """The rules beyond the paper's language (docs/rules.md): scoped parameter rules instead of
    the global ones, query rules, case rules, and pattern rules generalising the likely pairs.
    ``index``: the URLs parsed once (core/urls/urlindex.py), shared with phase 3.
    ``before_pairs``: called with the rules mined so far (the parameter rules and those of the
    other types that read the URL list only) before the likely pairs are first read, which in
    ``mine --jobs 2`` means waiting for the other process (core/mining/parallel.py)."""
    from dustbuster.core.mining.casemine import mine_case_rules
    from dustbuster.core.mining.generalize import generalize_pairs
    from dustbuster.core.mining.originfree import origin_free
    from dustbuster.core.mining.overliterals import general_over_literals
    from dustbuster.core.mining.querypath import mine_query_paths
    from dustbuster.core.mining.scoped import mine_query_rules, mine_scoped_param_rules
    from dustbuster.core.mining.siblings import family_roots, generalise

    p = result.params
    ix = URLIndex.of(urllist, p, index)
    refuted: dict = {}
    scoped = mine_scoped_param_rules(urllist, p, ix, refuted)
    queries = mine_query_rules(urllist, p, ix, refuted)
    parents = generalise([*scoped, *queries], refuted)
    roots = family_roots([*scoped, *queries, *parents], refuted)
    parents = [*roots, *(r for r in parents if r not in roots)]
    result.scoped_params = [*(r for r in parents if isinstance(r, ParamRule)), *scoped]  # parents first
    # the miners of the URL list before those of the likely pairs, which mine --jobs 2 waits for
    # (core/mining/parallel.py): the other process counts Figure 1 meanwhile
    query_paths, cases = mine_query_paths(urllist, p, ix), mine_case_rules(urllist, p, ix)
    registered = [r for cls in REGISTRY.values() if cls.miner is not None for r in cls.miner(urllist, p, ix)]
    if before_pairs is not None:
        before_pairs([*result.scoped_params, *(r for r in parents if r.type == "query"), *queries, *query_paths,
                      *cases, *registered])
    patterns = generalize_pairs(result.kept, p)
    over = general_over_literals(result.kept, p, patterns)
    result.general = [*(r for r in parents if r.type == "query"), *queries, *query_paths,
                      *cases, *patterns, *over, *origin_free(result.kept, p), *registered]
    # after the pairs were read: mine --jobs 2's other process may send phase 3's counts with them
    counts = {"thesis_param_rules": result.stats["param_rules"], "param_rules": len(result.scoped_params),
              "scoped_param_rules": sum(1 for r in result.scoped_params if r.scope),
              "general_rules": len(result.general),
              "query_scoped_rules": sum(1 for rs in (scoped, queries) for r in rs if "?" in r.scope),
              "generalised_scopes": len(parents), "family_rules": len(roots), "general_literal_rules": len(over)}
    for r in result.general:
        counts[f"{r.type}_rules"] = counts.get(f"{r.type}_rules", 0) + 1
    result.stats.update(counts)
