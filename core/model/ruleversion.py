"""A site's published rule set from one validation round to the next: what the round keeps, and
whether it publishes a new version, nothing, or a tombstone.

Only a refutation removes a rule: a previous rule whose verdict is undecided this round (the
page would not load, the site timed out) is kept as it was (:func:`carried_over`).  A new
version is published only when the list of valid rules changed; an outage (no origin answered,
``valid`` None) decides nothing; a site whose every rule was refuted is removed with a tombstone
(:func:`decide_version`).  Versions only grow: the next one is above both the validator's own
last version and the one consumers hold (a validator whose state was lost must not publish a
version they would refuse as stale), and is at least the publish time in ms: consumers
refuse a version too far ahead of their clock (``version_from_future``,
dustbuster.core.canon.admission.MAX_SKEW_MS), so a forged version 2^53-1 cannot freeze a site, and a
real version is never far ahead.  Old small-integer versions stay below any such time and are
replaced by the next round's.  The clock is passed in (``now_ms``): the decision stays pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from dustbuster.core.model.rules import Rule

PUBLISH = "publish"  #: a new version with the round's valid rules
UNCHANGED = "unchanged"  #: nothing is sent
TOMBSTONE = "tombstone"  #: the site has no valid rule any more: its record is deleted


@dataclass(frozen=True)
class Published:
    """What the validator last published for a site: its version and its rules' display forms."""

    version: int
    sig: tuple[str, ...]

    @classmethod
    def from_json(cls, doc: dict | None) -> "Published | None":
        return None if doc is None else cls(int(doc["version"]), tuple(doc["sig"]))


@dataclass(frozen=True)
class VersionDecision:
    """The outcome of a round: ``action`` (PUBLISH, UNCHANGED, TOMBSTONE), the new ``version``
    (None when unchanged) and why it is unchanged (``outage``, ``same_rules``)."""

    action: str
    version: int | None = None
    why: str = ""


def decide_version(previous: Published | None, valid: Sequence[str] | None,
                   held: int | None = None, now_ms: int = 0) -> VersionDecision:
    """``valid``: the display forms of the round's valid rules in canonization order, None for an
    outage; ``held``: the version the consumers hold (read from the rules topic), if any;
    ``now_ms``: the publish time in ms (0: versions count 1, 2, …).  The new version is
    max(previous + 1, held + 1, now_ms): a clock that went back still gives a newer version."""
    if valid is None:
        return VersionDecision(UNCHANGED, why="outage")
    sig = tuple(valid)
    if previous is not None and previous.sig == sig:
        return VersionDecision(UNCHANGED, why="same_rules")
    version = max(max(previous.version if previous is not None else 0, held or 0) + 1, now_ms)
    if not sig and previous is not None:
        return VersionDecision(TOMBSTONE, version)
    return VersionDecision(PUBLISH, version)


def carried_over(previous: Iterable[Rule], undecided: Iterable[str], valid: Iterable[Rule]) -> list[Rule]:
    """The previous rules kept although this round did not find them valid: those whose verdict
    is undecided (``undecided``: rule texts) and that are not among the ``valid`` ones already."""
    undecided, have = set(undecided), {r.text for r in valid}
    return [r for r in previous if r.text in undecided and r.text not in have]
