"""Regression on the real logs copied from ../shared/data (tests/data/logs, with provenance):
the rule lists are checked in under tests/data/expected; docs/real-logs.md explains them,
the obviously wrong ones included.  Regenerate with ``python -m tests.realruns``."""

from __future__ import annotations

import json

import pytest

from tests.realruns import EXPECTED, RUNS, run


@pytest.mark.parametrize("name", sorted(RUNS))
def test_real_log_rules_regression(name):
    expected = json.loads((EXPECTED / f"{name}.json").read_text(encoding="utf-8"))
    assert run(name) == expected


def test_known_rules_are_found():
    """Spot checks of DUST the data's INDEX.md documents."""
    sc = {r[0] for r in run("semicomplete")["rules"]}
    assert any("utm_source=feedburner" in t for t in sc)  # ?utm_source=... ≡ bare page
    tw = {r[0] for r in run("monitorware")["rules"]}
    assert '"?rev=r1." → "?rev=1."' in tw  # TWiki ?rev=r1.3 ≡ ?rev=1.3
    na = {r[0] for r in run("netarchive")["rules"]}
    assert '"^http://www." → "^http://"' in na  # www. vs bare host, by digests
    assert '"^http://www.trineogkaare.dk/" → "^http://www.kaareogtrine.dk/"' in na  # mirror hosts
