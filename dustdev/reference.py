"""The plain dict-of-lists Figure 1 reference (WWW 2007 §5.1), for tests and benchmarks: a naive,
obviously-correct computation of the supports, literally the paper's tables ST, IT and RT in plain
dicts and strings.  :func:`dustbuster.core.mining.detect.count_supports` must give the same numbers
(tests/test_detect.py); bench/bench_mine.py times the two side by side.
"""

from __future__ import annotations

from collections import defaultdict

from dustbuster.core.params import DustParams
from dustbuster.core.urls.tokens import tokenize, wrap
from dustbuster.core.urls.urllist import URLList


def substrings(url: str, S: int, max_envelopes: int = 0):
    """(alpha, prefix, suffix) for all substrings of ^url$ of 0..S tokens (dustbuster.core.mining.detect's positions);
    with ``max_envelopes`` (bounded cost), S shrinks for this URL until it has at most that many
    (but never below 1)."""
    toks = tokenize(wrap(url))
    n = len(toks)

    def upto(span: int) -> list[tuple[str, str, str]]:
        out = []
        for length in range(0, span + 1):
            for i in range(0, n - length + 1):
                j = i + length
                if length == 0 and not 1 <= i <= n - 1:
                    continue
                out.append(("".join(toks[i:j]), "".join(toks[:i]), "".join(toks[j:])))
        return out

    span = S
    subs = upto(span)
    while max_envelopes and span > 1 and len(subs) > max_envelopes:
        span -= 1
        subs = upto(span)
    yield from subs


def oracle_supports(urllist: URLList, params: DustParams, T: int) -> dict[tuple[str, str], int]:
    """{(a, b) with a < b: |(E(a) ∩ E(b)) \\ (O ∪ D_ab)|} for buckets of size <= T."""
    ST: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)  # (p, s) -> [(alpha, url)]
    for url in urllist:
        for alpha, p, s in substrings(url, params.S, params.max_envelopes):
            ST[(p, s)].append((alpha, url))
    IT: dict[tuple[str, str], int] = defaultdict(int)
    for bucket in ST.values():
        if len(bucket) == 1 or len(bucket) > T:
            continue
        for x in range(len(bucket)):
            for y in range(x + 1, len(bucket)):
                (a1, u1), (a2, u2) = bucket[x], bucket[y]
                if urllist.similar(u1, u2, params):
                    IT[(a1, a2) if a1 < a2 else (a2, a1)] += 1
    return dict(IT)


def oracle_supports_both(urllist: URLList, params: DustParams) -> tuple[dict, dict]:
    """Figure 1 once for T_low and T_high (one ST table, two IT tables), as the engine does."""
    ST: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for url in urllist:
        for alpha, p, s in substrings(url, params.S, params.max_envelopes):
            ST[(p, s)].append((alpha, url))
    low: dict[tuple[str, str], int] = defaultdict(int)
    high: dict[tuple[str, str], int] = defaultdict(int)
    for bucket in ST.values():
        if len(bucket) == 1 or len(bucket) > params.t_high:
            continue
        small = len(bucket) <= params.t_low
        for x in range(len(bucket)):
            for y in range(x + 1, len(bucket)):
                (a1, u1), (a2, u2) = bucket[x], bucket[y]
                if urllist.similar(u1, u2, params):
                    key = (a1, a2) if a1 < a2 else (a2, a1)
                    high[key] += 1
                    if small:
                        low[key] += 1
    return dict(low), dict(high)


def brute_support(urllist: URLList, params: DustParams, T: int, a: str, b: str) -> int:
    """|E(a) ∩ E(b)| minus overflowing and disqualified envelopes, by direct enumeration per pair."""
    env: dict[str, set[tuple[str, str, str]]] = {a: set(), b: set()}
    bucket_size: dict[tuple[str, str], int] = defaultdict(int)
    for url in urllist:
        for alpha, p, s in substrings(url, params.S, params.max_envelopes):
            bucket_size[(p, s)] += 1
            if alpha in env:
                env[alpha].add((p, s, url))
    ea = {(p, s): u for p, s, u in env[a]}
    eb = {(p, s): u for p, s, u in env[b]}
    count = 0
    for e in set(ea) & set(eb):
        if bucket_size[e] > T:
            continue
        if urllist.similar(ea[e], eb[e], params):
            count += 1
    return count
