"""The seq2seq paper's URL pre-processing (§2.1) as core/urls/urltokens.py does it: tokens, function
tokens by document frequency, argument placeholders, and the exact round trip."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from dustbuster.core.urls.urltokens import (FunctionTokens, decode, encode, encode_target, function_tokens,
                                       placeholder, url_tokens)

TOKENS = [
    ("http://h.test/user/123/mike", ["http://", "h.test", "/", "user", "/", "123", "/", "mike"]),
    ("http://h.test:8080/", ["http://", "h.test:8080", "/"]),
    ("http://h.test", ["http://", "h.test"]),
    ("http://h.test?x=1", ["http://", "h.test", "?", "x", "=", "1"]),
    ("https://h.test/a//b/", ["https://", "h.test", "/", "a", "/", "/", "b", "/"]),
    ("http://h.test/page.html?a=1&b=&c", ["http://", "h.test", "/", "page", ".", "html", "?", "a", "=", "1", "&",
                                          "b", "=", "&", "c"]),
    ("http://h.test/x;jsessionid=AB#frag", ["http://", "h.test", "/", "x", ";", "jsessionid", "=", "AB", "#", "frag"]),
    ("/relative/path?q=1", ["/", "relative", "/", "path", "?", "q", "=", "1"]),
    ("/zzz?u=http://x", ["/", "zzz", "?", "u", "=", "http:", "/", "/", "x"]),
    ("http://h.test/a%2Fb/%3C", ["http://", "h.test", "/", "a%2Fb", "/", "%3C"]),
    ("", []),
]


@pytest.mark.parametrize("url,tokens", TOKENS)
def test_tokens(url, tokens):
    assert url_tokens(url) == tokens
    assert "".join(tokens) == url


FUNCS = FunctionTokens(frozenset({"user", "wiki", "html", "version"}))

ENCODED = [
    # the paper's example (§2.1): http://stackexchange.com/user/123/mike → .../user/arg1/arg2
    ("http://h.test/user/123/mike", ("http://", "h.test", "/", "user", "/", "<arg1>", "/", "<arg2>"), ("123", "mike")),
    # one placeholder per distinct value
    ("http://h.test/user/7/7", ("http://", "h.test", "/", "user", "/", "<arg1>", "/", "<arg1>"), ("7",)),
    ("http://h.test/wiki/Start?version=2", ("http://", "h.test", "/", "wiki", "/", "<arg1>", "?", "version", "=",
                                            "<arg2>"), ("Start", "2")),
    # a literal token shaped like a placeholder or a special token is always an argument
    ("http://h.test/<arg1>/<unk>", ("http://", "h.test", "/", "<arg1>", "/", "<arg2>"), ("<arg1>", "<unk>")),
    # relative URLs: no scheme or authority tokens
    ("/user/5", ("/", "user", "/", "<arg1>"), ("5",)),
]


@pytest.mark.parametrize("url,tokens,args", ENCODED)
def test_encode(url, tokens, args):
    e = encode(url, FUNCS)
    assert e.tokens == tokens and e.args == args
    assert decode(e.tokens, e.args) == url


def test_target_copies_the_source_arguments():
    src = encode("http://h.test/wiki/Start?version=2", FUNCS)
    assert encode_target("http://h.test/wiki/Start", src, FUNCS) == ("http://", "h.test", "/", "wiki", "/", "<arg1>")
    # an argument the source lacks stays literal
    assert encode_target("http://h.test/wiki/Other", src, FUNCS)[-1] == "Other"
    assert decode(("http://", "h.test", "/", "wiki", "/", "<arg1>"), src.args) == "http://h.test/wiki/Start"


@pytest.mark.parametrize("tokens", [("/", "<arg3>"), ("/", "<unk>"), ("<s>", "/"), ("</s>",)])
def test_decode_refuses_what_is_not_a_url(tokens):
    assert decode(tokens, ("a", "b")) is None


def test_function_tokens_by_document_frequency():
    urls = [f"http://h.test/user/{i}/profile" for i in range(300)] + ["http://h.test/about"]
    f = function_tokens(urls)
    assert {"user", "profile", "http://", "h.test", "/"} <= f.tokens
    assert "17" not in f.tokens and "about" not in f.tokens  # df 1/301 < 0.01
    assert FunctionTokens.from_json(f.to_json()) == f


def test_function_tokens_of_a_small_list_need_two_urls():
    # with 50 URLs, df >= 0.01 is one URL: every token would be a function token
    urls = [f"http://h.test/item/{i}" for i in range(50)]
    f = function_tokens(urls)
    assert "item" in f and "7" not in f


def test_a_relative_url_with_a_url_in_its_query_has_no_authority():
    f = function_tokens([f"/p{i}?u=http://x" for i in range(5)])
    assert "p1" not in f and "/" in f
    assert encode("/zzz?u=http://x", f).tokens[1] == "<arg1>"


def test_placeholders_are_never_function_tokens():
    f = function_tokens(["http://h.test/<arg1>"] * 5)
    assert "<arg1>" not in f
    assert placeholder(3) == "<arg3>"


_URL_CHARS = st.text(st.sampled_from("ab1/?&=;.#%:<>-_~"), max_size=30)


@settings(max_examples=300, deadline=None)
@given(_URL_CHARS, st.sampled_from(["http://h.test", "https://x.y:81", ""]))
def test_round_trip(rest, head):
    url = head + rest
    assert "".join(url_tokens(url)) == url
    e = encode(url, FUNCS)
    assert decode(e.tokens, e.args) == url
    assert decode(encode_target(url, e, FUNCS), e.args) == url
