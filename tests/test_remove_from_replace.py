"""Issue 23: remove rules read off the replace evidence (thesis §5.3) where the parameter-less URL is
in no log line (core/mining/paramrules.py replace_removals, core/mining/scoped.py, core/mining/qscope.py).  Sizes decide
LikelySimilar as in tests/test_scoped.py."""

from __future__ import annotations

from dustbuster.core import DustParams, URLList, canonical
from dustbuster.core.mining.scoped import mine_scoped_param_rules

P = DustParams()
H = "http://w.org/index.php?title="


def build(rows) -> URLList:
    ul = URLList()
    for url, size in rows:
        ul.add(url, 200, size)
    return ul


def texts(rules):
    return [(r.text, r.support, r.disqualified) for r in rules]


def test_a_no_op_parameter_never_logged_bare_gives_a_remove_rule_narrowed_to_its_script():
    rows = [(f"http://h/app/login?next=/p{i}", 5000 + i % 3) for i in range(12)]
    rows += [(f"http://h/other/x{i}", 300 + 50 * i) for i in range(5)]
    rules = mine_scoped_param_rules(build(rows), P)
    removes = [r for r in rules if r.action == "remove"]
    assert texts(removes) == [("remove next=* under /app/login", 11, 0)]
    assert removes[0].evidence["from_replace_groups"] is True
    assert any(r.action == "replace" and r.scope == "/app/login" for r in rules)  # kept beside it
    assert canonical("http://h/app/login?next=/zz", removes) == "http://h/app/login"
    assert canonical("http://h/other/x1?next=/zz", removes) == "http://h/other/x1?next=/zz"


def test_a_parameter_whose_values_change_the_page_gives_no_remove_rule():
    rows = [(f"http://h/list?page={i}", 3000 + 400 * i) for i in range(12)]
    assert mine_scoped_param_rules(build(rows), P) == []


def test_where_the_bare_url_is_logged_the_thesis_evidence_decides_alone():
    """/a?sid= is a no-op with /a listed (the thesis' evidence, widest scope, no flag)."""
    rows = []
    for i in range(3):
        rows.append((f"http://h/a/p{i}", 1000 + 100 * i))
        rows += [(f"http://h/a/p{i}?sid=S{j}", 1000 + 100 * i) for j in range(3)]
    rules = mine_scoped_param_rules(build(rows), P)
    assert texts(rules) == [("remove sid=*", 9, 0)]
    assert "from_replace_groups" not in rules[0].evidence


def test_meaningful_bare_comparisons_veto_the_replace_groups_evidence():
    """Unlogged bare form under /a/x (values look alike), but under /a/y the bare form is logged and
    removing the parameter changes the page (MS comparisons): no remove rule at /a or above."""
    rows = [(f"http://h/a/x?v={i}", 4000) for i in range(6)]
    for i in range(4):
        rows.append((f"http://h/a/y/p{i}", 1000 + 10 * i))
        rows.append((f"http://h/a/y/p{i}?v=k{i}", 9000 + 700 * i))
    rules = [r for r in mine_scoped_param_rules(build(rows), P) if r.action == "remove"]
    assert [r.scope for r in rules] == ["/a/x"]


def test_the_login_page_never_linked_bare_gets_its_query_scoped_rule():
    """Every login link carries returnto= (the bare login URL is in no log line); another special
    page's returnto= changes it.  The replace groups' evidence gives the remove rule where
    title=Special:UserLogin, the one fixed selector of its supporting URLs."""
    ul = URLList()
    for i in range(30):
        ul.add(f"{H}Special:UserLogin&returnto=Page_{i}", 200, 5000 + i % 3)
        ul.add(f"{H}Page_{i}", 200, 2000 + 300 * i)
        ul.add(f"{H}Special:Recent&returnto=Page_{i}", 200, 9000 + 700 * i)
    rules = [r for r in mine_scoped_param_rules(ul, P) if r.action == "remove"]
    assert texts(rules) == [("remove returnto=* where title=Special:UserLogin", 29, 0)]
    assert rules[0].evidence["scope_key"] == "title=Special:UserLogin"
