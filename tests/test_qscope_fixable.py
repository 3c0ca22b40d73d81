"""qscope._fixable (the fast test of whether ``?n=v`` is a scope) answers as check_scope does."""

from hypothesis import given, settings, strategies as st

from dustbuster.core.mining.qscope import _fixable, _fixable_by_check_scope

_CHARS = st.sampled_from(list("ab=&?#%/ \x00\x1f\x7f\u00e9-_.") + [chr(0x19), chr(0x20)])
_TEXT = st.text(_CHARS, max_size=6) | st.text(max_size=6)


@given(_TEXT, _TEXT)
@settings(max_examples=3000, deadline=None)
def test_fixable_equals_check_scope(n: str, v: str) -> None:
    assert _fixable(n, v) == _fixable_by_check_scope(n, v)


def test_fixable_cases() -> None:
    assert _fixable("title", "Special:UserLogin")
    assert _fixable("a", "")  # an empty value is a value
    assert _fixable("a", "x=y")  # '=' after the first belongs to the value
    assert not _fixable("", "x")
    assert not _fixable("a?b", "x") and not _fixable("a", "x?y")
    assert not _fixable("a#", "x") and not _fixable("a", "#x")
    assert not _fixable("a\x01", "x") and not _fixable("a", "x\x1f")
    assert not _fixable("a&b", "x")  # not an item of a parsed query: the slow path answers
