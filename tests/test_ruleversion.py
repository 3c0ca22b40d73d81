"""The validator's pure decision (dustbuster.core.model.ruleversion): previous published set + this
round's valid rules → a new version, nothing, or a tombstone; and which undecided rules stay."""

from __future__ import annotations

import pytest

from dustbuster.core.model.rules import SubstringRule
from dustbuster.core.model.ruleversion import (PUBLISH, TOMBSTONE, UNCHANGED, Published, VersionDecision, carried_over,
                                         decide_version)

A, B = "/a -> /b", "/c -> /d"

CASES = [
    # previous published,        this round's valid rules, held,  → decision
    (None,                       [A],      None, VersionDecision(PUBLISH, 1)),
    (None,                       [],       None, VersionDecision(PUBLISH, 1)),  # a first round with no rule: v1, empty
    (None,                       None,     None, VersionDecision(UNCHANGED, why="outage")),
    (Published(3, (A,)),         None,     None, VersionDecision(UNCHANGED, why="outage")),
    (Published(3, (A,)),         [A],      None, VersionDecision(UNCHANGED, why="same_rules")),
    (Published(3, (A,)),         [A],      9,    VersionDecision(UNCHANGED, why="same_rules")),
    (Published(3, (A,)),         [A, B],   None, VersionDecision(PUBLISH, 4)),
    (Published(3, (A, B)),       [B, A],   None, VersionDecision(PUBLISH, 4)),  # the order is canonization order
    (Published(3, (A,)),         [],       None, VersionDecision(TOMBSTONE, 4)),
    (Published(3, ()),           [],       None, VersionDecision(UNCHANGED, why="same_rules")),  # tombstoned already
    (Published(3, ()),           [A],      None, VersionDecision(PUBLISH, 4)),  # back after a tombstone
    (Published(3, (A,)),         [B],      7,    VersionDecision(PUBLISH, 8)),  # consumers hold a later version
    (Published(3, (A,)),         [B],      2,    VersionDecision(PUBLISH, 4)),
    (None,                       [A],      5,    VersionDecision(PUBLISH, 6)),  # the validator's state was lost
    (Published(3, (A,)),         [],       7,    VersionDecision(TOMBSTONE, 8)),
]


@pytest.mark.parametrize("previous, valid, held, expected", CASES)
def test_decide_version(previous, valid, held, expected):
    assert decide_version(previous, valid, held) == expected


def test_published_from_the_stored_document():
    assert Published.from_json(None) is None
    assert Published.from_json({"version": 2, "sig": [A, B], "rules": []}) == Published(2, (A, B))


def test_only_undecided_rules_are_carried_over():
    r1, r2, r3 = SubstringRule("/a", "/b"), SubstringRule("/c", "/d"), SubstringRule("/e", "/f")
    # r1 undecided and not valid again: kept; r2 valid again: not twice; r3 refuted (not undecided): dropped
    assert carried_over([r1, r2, r3], {r1.text, r2.text}, [r2]) == [r1]
    assert carried_over([], {r1.text}, []) == []
    assert carried_over([r1], set(), []) == []


NOW = 1_795_650_000_000  # ms


@pytest.mark.parametrize("previous, valid, held, expected", [
    (None,                       [A],      None, VersionDecision(PUBLISH, NOW)),       # the publish time in ms
    (Published(3, (A,)),         [A, B],   None, VersionDecision(PUBLISH, NOW)),       # old small versions: below now
    (Published(NOW + 5, (A,)),   [B],      None, VersionDecision(PUBLISH, NOW + 6)),   # the clock went back: still newer
    (Published(3, (A,)),         [B],      NOW + 9, VersionDecision(PUBLISH, NOW + 10)),  # consumers hold a later one
    (Published(3, (A,)),         [],       None, VersionDecision(TOMBSTONE, NOW)),
    (Published(3, (A,)),         [A],      None, VersionDecision(UNCHANGED, why="same_rules")),
])
def test_versions_are_the_publish_time_in_ms(previous, valid, held, expected):
    """Issue 27: max(previous + 1, held + 1, now in ms), so consumers can refuse a version far
    ahead of their clock (dustbuster.core.canon.admission, ``version_from_future``)."""
    assert decide_version(previous, valid, held, now_ms=NOW) == expected
