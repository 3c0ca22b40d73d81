"""What the dashboard shows that no other object keeps: typed, bounded, in memory.

* :class:`SiteTraffic` — per site, from the candidates topic (every worker follows all of it):
  lines in and unique URLs at each window (a small time series), the newest candidate set, and
  its test URLs (the site's most recently seen URLs) for the discovered redundancy.
* :class:`LiveRound` / :class:`Rounds` — the validation rounds of *this* worker's validator,
  live: rules decided and to go, fetches by outcome, the rate.  The validator agent feeds them:
  ``round_for`` calls :meth:`Rounds.begin` and :meth:`Rounds.end`; ``validate_site`` hands the
  round's fetcher counts to :meth:`LiveRound.watch` and each verdict to :meth:`LiveRound.verdict`.
* :class:`VersionLog` — every rule-set version this worker's rule book applied (or refused), with
  the rules added and removed, fed by the rules follower.

The published rule sets themselves are the rule book's (``dustbuster.core.canon.rulebook``); nothing is copied.
Everything here is touched from the worker's event loop only.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from dustbuster.core.model.rules import LEGACY_LISTS, rule_dicts

MAX_POINTS = 240  #: time-series points kept per site (4 hours of 60 s windows)
MAX_SITES = 500  #: sites whose traffic is kept (the least recently updated are forgotten)
MAX_TEST_URLS_SITES = 50  #: sites whose newest test URLs are kept (for redundancy and evidence)
MAX_VERSIONS = 50  #: rule-set versions kept per site
MAX_FINISHED = 20  #: finished validation rounds kept


@dataclass(frozen=True, slots=True)
class Point:
    t: float  #: clock time of the window's candidate set (the Kafka record's timestamp)
    window: int
    lines: int  #: log lines of the site in the worker's state
    urls: int  #: unique URLs of the site


@dataclass
class SiteTraffic:
    site: str
    points: deque[Point] = field(default_factory=lambda: deque(maxlen=MAX_POINTS))
    candidates: dict[str, Any] | None = None  #: the newest candidate set, without its test URLs
    test_urls: list[str] = field(default_factory=list)
    updated: float = 0.0

    def add(self, t: float, cand: Mapping[str, Any]) -> None:
        stats = cand["stats"] if isinstance(cand.get("stats"), dict) else {}
        window = int(cand.get("window") or 0)
        if self.candidates is not None and window < int(self.candidates.get("window") or 0):
            return  # an older window read late (another partition): keep the newer one
        self.points.append(Point(t, window, _int(stats.get("lines")), _int(stats.get("urls"))))
        self.candidates = {k: v for k, v in cand.items() if k != "test_urls"} | {"received": t}
        self.test_urls = [u for u in cand.get("test_urls") or [] if isinstance(u, str)]
        self.updated = t


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


@dataclass
class LiveRound:
    """One validation round of one site on this worker."""

    site: str
    window: int
    to_decide: int  #: candidate rules of the round (substring pairs and parameter rules)
    started: float = field(default_factory=time.time)
    phase: str = "validating"  #: validating → done
    decided: int = 0  #: rules with a verdict this round (fetched, or decided before any fetch)
    valid: int = 0
    invalid: int = 0
    undecided: int = 0
    cached: int = 0  #: of the decided, verdicts taken from the verdict cache (no fetch)
    outcome: str = ""  #: when done: published, unchanged, unconfigured, tombstone, failed
    finished: float | None = None
    _outcomes: Mapping[str, int] = field(default_factory=dict)  #: the fetcher's live counts by outcome

    def watch(self, counts: Mapping[str, int]) -> None:
        """Follow the round's fetcher: its counts by outcome (ok, timeout, soft_error...), live."""
        self._outcomes = counts

    def chain(self, on_verdict: Callable[[Any], None] | None) -> Callable[[Any], None]:
        """An ``on_verdict`` callback that calls ``on_verdict`` (when given), then :meth:`verdict`."""
        def both(v: Any) -> None:
            if on_verdict is not None:
                on_verdict(v)
            self.verdict(v)
        return both

    def verdict(self, v: Any) -> None:
        """``dustbuster.core.validation.validate.validate``'s ``on_verdict``: one more rule decided."""
        self.decided += 1
        self.cached += getattr(v, "reason", "") == "cached"
        valid = getattr(v, "valid", None)
        if valid is None:
            self.undecided += 1
        elif valid:
            self.valid += 1
        else:
            self.invalid += 1

    def finish(self, outcome: str) -> None:
        self.phase, self.outcome, self.finished = "done", outcome, time.time()
        self._outcomes = dict(self._outcomes)  # freeze: the fetcher is gone

    def to_json(self, now: float | None = None) -> dict[str, Any]:
        now = time.time() if now is None else now
        outcomes = {k: int(v) for k, v in sorted(self._outcomes.items()) if v}
        fetches = sum(outcomes.values())
        seconds = max((self.finished or now) - self.started, 1e-6)
        return {"site": self.site, "window": self.window, "phase": self.phase, "to_decide": self.to_decide,
                "decided": self.decided, "valid": self.valid, "invalid": self.invalid, "undecided": self.undecided,
                "cached": self.cached, "fetches": fetches, "fetch_rate": round(fetches / seconds, 1), "fetch_outcomes": outcomes,
                "started": self.started, "seconds": round(seconds, 1), "outcome": self.outcome,
                "finished": self.finished}


#: what ``validation_round`` returns when it ran no round (agents/validator.py)
NO_ROUND = ("skipped", "fetch_budget", "unconfigured")


class Rounds:
    """The validation rounds of this worker: the one running per site, and the last few finished."""

    def __init__(self) -> None:
        self.running: dict[str, LiveRound] = {}
        self.finished: deque[LiveRound] = deque(maxlen=MAX_FINISHED)

    def begin(self, site: str, cand: Any) -> LiveRound:
        get = (lambda k: getattr(cand, k, None)) if not isinstance(cand, Mapping) else cand.get
        todo = len(rule_dicts({k: get(k) for k in LEGACY_LISTS}))
        rp = self.running[site] = LiveRound(site, int(get("window") or 0), todo)
        return rp

    def end(self, rp: LiveRound, result: Any) -> None:
        """The round is over; ``result`` is what ``validation_round`` returned (or the exception)."""
        rp.finish(outcome_of(result))
        if self.running.get(rp.site) is rp:
            del self.running[rp.site]
        if rp.outcome not in NO_ROUND:  # nothing was fetched or decided: the last round stays the last
            self.finished.append(rp)

    def for_site(self, site: str) -> tuple[LiveRound | None, LiveRound | None]:
        """(the round running now, the last finished one) of ``site``."""
        last = next((r for r in reversed(self.finished) if r.site == site), None)
        return self.running.get(site), last


def outcome_of(result: Any) -> str:
    if isinstance(result, BaseException):
        return "failed"
    if result is None:
        return "tombstone"
    if isinstance(result, str):
        return result
    return "published"


@dataclass(frozen=True, slots=True)
class Version:
    site: str
    version: int | None  #: None: a tombstone (the site has no valid rule any more)
    applied: float  #: when this worker applied it
    created: float | None  #: when the validator made it
    rules: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    refused: str = ""  #: the admission's reason when this worker refused the set

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "applied": self.applied, "created": self.created, "rules": len(self.rules),
                "added": list(self.added), "removed": list(self.removed), "refused": self.refused or None}


class VersionLog:
    """Rule-set versions per site as this worker saw them, newest last; and per rule the sample
    pairs of the version that last carried them (a rule whose verdict came from the validator's
    cache is published without samples: the dashboard shows the ones fetched when it was decided)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.sites: dict[str, deque[Version]] = {}
        self.samples: dict[str, dict[str, tuple[int, list]]] = {}  #: site → rule → (version, samples)

    def remember_samples(self, site: str, version: int, rules: Mapping[str, Mapping[str, Any]]) -> None:
        """``rules``: display form → rule JSON of the version applied; only the site's current rules
        are kept."""
        old = self.samples.get(site, {})
        new = {}
        for text, rj in rules.items():
            ev = rj["evidence"] if isinstance(rj.get("evidence"), Mapping) else {}
            got = [x for x in ev.get("samples") or [] if isinstance(x, list)][:5]
            if got:
                new[text] = (version, got)
            elif text in old:
                new[text] = old[text]
        self.samples[site] = new

    def samples_for(self, site: str, rule: str) -> tuple[int, list] | None:
        return self.samples.get(site, {}).get(rule)

    def _last_rules(self, site: str) -> tuple[str, ...]:
        log = self.sites.get(site)
        applied = [v for v in log or () if not v.refused]
        return applied[-1].rules if applied else ()

    def record(self, site: str, version: int | None, rules: tuple[str, ...], created: float | None) -> None:
        log = self.sites.setdefault(site, deque(maxlen=MAX_VERSIONS))
        if log and not log[-1].refused and log[-1].version == version:
            return  # the same version again changes nothing
        before = self._last_rules(site)
        log.append(Version(site, version, self.clock(), created, rules,
                           tuple(r for r in rules if r not in before), tuple(r for r in before if r not in rules)))

    def refused(self, site: str, doc: Mapping[str, Any] | None, reason: str) -> None:
        log = self.sites.setdefault(site, deque(maxlen=MAX_VERSIONS))
        version = doc.get("version") if isinstance(doc, Mapping) else None
        log.append(Version(site, version if isinstance(version, int) else None, self.clock(),
                           None, (), (), (), reason or "refused"))

    def for_site(self, site: str) -> list[dict[str, Any]]:
        return [v.to_json() for v in self.sites.get(site, ())]


class DashboardState:
    """Everything the dashboard reads besides the rule book and the metrics."""

    def __init__(self) -> None:
        self.traffic: dict[str, SiteTraffic] = {}
        self.rounds = Rounds()
        self.versions = VersionLog()
        self.candidate_sets_read = 0
        self.candidate_sets_skipped = 0
        #: site -> its validator fetch budget: per_hour, used_last_hour, left, refused (agents/validator.py)
        self.budgets: dict[str, dict[str, Any]] = {}

    def add_candidates(self, site: str, t: float, cand: Mapping[str, Any]) -> None:
        st = self.traffic.get(site)
        if st is None:
            st = self.traffic[site] = SiteTraffic(site)
            if len(self.traffic) > MAX_SITES:
                del self.traffic[min(self.traffic, key=lambda s: self.traffic[s].updated)]
        st.add(t, cand)
        self.candidate_sets_read += 1
        with_urls = sorted((s for s in self.traffic.values() if s.test_urls), key=lambda s: s.updated)
        for old in with_urls[:-MAX_TEST_URLS_SITES]:
            old.test_urls = []
