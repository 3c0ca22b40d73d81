import pytest

from dustbuster.core.urls.tokens import END, START, display, find_aligned, is_boundary, shrinks, tokenize, wrap


@pytest.mark.parametrize(
    "s, toks",
    [
        ("http://www.site.com/index.html", ["http", ":", "/", "/", "www", ".", "site", ".", "com", "/", "index", ".", "html"]),
        ("/story?id=12", ["/", "story", "?", "id", "=", "12"]),
        ("/a%2Fb", ["/", "a", "%", "2Fb"]),
        ("/ä€x", ["/", "ä", "€", "x"]),
        ("", []),
        ("&&", ["&", "&"]),
    ],
)
def test_tokenize(s, toks):
    assert tokenize(s) == toks


def test_wrap_sentinels_are_tokens():
    assert tokenize(wrap("/a")) == [START, "/", "a", END]
    assert display(wrap("/a$b")) == "^/a$b$"


@pytest.mark.parametrize(
    "hay, needle, pos",
    [
        ("/mystory_1/story_2", "story_", 11),  # not inside the token "mystory"
        ("/story_2", "story_", 1),
        ("/ab", "", 0),
        ("ab/", "", 0),
        ("xab", "ab", -1),
        ("a.a.a", "a.a", 0),
    ],
)
def test_find_aligned(hay, needle, pos):
    assert find_aligned(hay, needle) == pos


def test_boundary():
    assert is_boundary("ab", 0) and is_boundary("ab", 2)
    assert not is_boundary("ab", 1)
    assert is_boundary("a/", 1)


@pytest.mark.parametrize(
    "a, b, expect",
    [
        ("/index.html" + END, END, True),  # longer → shorter (tokens)
        ("story?id=", "story_", True),  # 4 tokens vs 2
        ("b", "a", True),  # same length: lexicographically later shrinks
        ("a", "b", False),
        ("", "x", False),
    ],
)
def test_shrinks(a, b, expect):
    assert shrinks(a, b) is expect
