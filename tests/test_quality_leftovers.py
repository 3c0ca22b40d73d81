"""bench/quality/run.py's leftovers: why a family of duplicate URLs is left apart.  A parameter that
selects other contents in the truth in the pair's folder (an old revision beside today's page) is
one no rule should merge; one that does so only elsewhere says a rule dropping it merges other pages."""

from __future__ import annotations

import sys

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench" / "quality"))

from run import SelectingParams  # noqa: E402

W = "http://w.test"


def test_a_revision_parameter_that_selects_other_contents_in_the_folder_is_no_rule_to_merge():
    truth = {f"{W}/wiki/A": 1, f"{W}/wiki/A?oldid=4": 1,  # the current revision: one content by chance
             f"{W}/wiki/B": 2, f"{W}/wiki/B?oldid=2": 3,  # an old one: another content
             f"{W}/w/load.php?m=a&printable=yes": 4, f"{W}/w/load.php?m=a": 5, f"{W}/wiki/C?printable=yes": 6,
             f"{W}/wiki/C": 6}
    sel = SelectingParams(truth)
    why = sel.example(f"{W}/wiki/A", f"{W}/wiki/A?oldid=4")
    assert why.startswith("no rule should merge them: oldid= selects other contents under /wiki/"), why
    why = sel.example(f"{W}/wiki/C", f"{W}/wiki/C?printable=yes")  # other contents only under /w/
    assert why.startswith("a rule dropping printable= merges other contents"), why
    assert sel.example(f"{W}/wiki/C", f"{W}/w/?title=C") == ""  # two paths: not this kind of family
    assert SelectingParams({f"{W}/a?x=1": 1, f"{W}/a": 1}).example(f"{W}/a", f"{W}/a?x=1") == ""
