"""The exact naming behind the batch engine (dustbuster.core.urls.substrings) and the engine's shortcuts
(tuples alone in their envelope left unsorted, LikelySimilar on float intervals): names equal
exactly when texts are equal, tokens as the tokenizer's, supports equal to the oracle's."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dustbuster.core import DustParams, URLList, count_supports
from dustbuster.core.mining.detect import _envelope_ids
from dustbuster.core.urls.substrings import Tokens, dense, pack, seq_keys, sort_keys
from dustbuster.core.urls.tokens import _TOKEN_RE, wrap
from tests.oracle import oracle_supports
from tests.test_detect import small_urllist

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# alphanumerics, separators, non-ASCII (one token each), a lone surrogate, long runs
url_text = st.lists(st.sampled_from(list("aZ09/._-?=&%") + ["é", "\u2028", "\ud800", "x" * 9, "7" * 12]),
                    max_size=30).map("".join)


@SETTINGS
@given(st.lists(url_text, min_size=1, max_size=12))
def test_tokens_are_the_tokenizers(texts):
    wrapped = [wrap("http://h/" + t) for t in texts]
    tok = Tokens(wrapped)
    want = [t for w in wrapped for t in _TOKEN_RE.findall(w)]
    got = tok.text(np.arange(len(tok.tid)), np.ones(len(tok.tid), dtype=np.int64))
    assert got == want
    assert tok.n.tolist() == [len(_TOKEN_RE.findall(w)) for w in wrapped]
    ids: dict[str, int] = {}
    for t, i in zip(want, tok.tid.tolist()):
        assert ids.setdefault(t, i) == i  # one id per text ...
    assert len(set(ids.values())) == len(ids)  # ... and one text per id


@SETTINGS
@given(st.lists(url_text, min_size=1, max_size=10), st.data())
def test_sequence_names_equal_exactly_when_texts_equal(texts, data):
    wrapped = [wrap("http://h/" + t) for t in texts]
    tok = Tokens(wrapped)
    starts, lengths = [], []
    for u, n in enumerate(tok.n.tolist()):
        for i in range(n + 1):
            for j in range(i, n + 1):
                starts.append(int(tok.base[u]) + i)
                lengths.append(j - i)
    starts_a, lengths_a = np.asarray(starts), np.asarray(lengths)
    names = dense(seq_keys(tok.levels, starts_a, lengths_a)).tolist()
    seen: dict[str, int] = {}
    for text, name in zip(tok.text(starts_a, lengths_a), names):
        assert seen.setdefault(text, name) == name
    assert len(set(seen.values())) == len(seen)


@pytest.mark.parametrize("n, bits", [(1, 3), (1000, 20), (5000, 62), (70000, 62), (3000, 45)])
def test_dense_and_pack(n, bits):
    rng = np.random.default_rng(n + bits)
    key = rng.integers(0, 2**bits, size=n, dtype=np.int64)
    key[: n // 3] = key[n // 3: 2 * (n // 3)]
    want = np.unique(key, return_inverse=True)[1].reshape(-1)
    assert np.array_equal(dense(key), want)
    a, b = rng.integers(0, 2**40, size=n), rng.integers(0, 2**40, size=n)
    a[: n // 2] = a[n // 2: 2 * (n // 2)]
    b[: n // 2] = b[n // 2: 2 * (n // 2)]
    named = dense(pack([a, b]))
    pairs = {}
    for x, y, z in zip(a.tolist(), b.tolist(), named.tolist()):
        assert pairs.setdefault((x, y), z) == z
    assert len(set(pairs.values())) == len(pairs)


@pytest.mark.parametrize("n, bits", [(1, 3), (5000, 40), (5000, 62), (70000, 50), (70000, 62)])
def test_sort_keys_is_a_stable_argsort(n, bits):
    """Keys and index packed in one int64 where they fit; wider keys partitioned by their high bits
    first (several and many partitions): either way the order of a stable argsort."""
    rng = np.random.default_rng(n * bits)
    key = rng.integers(0, 2**bits, size=n, dtype=np.int64)
    key[: n // 3] = key[n // 3: 2 * (n // 3)]  # equal keys: their order is the index order
    order, ks = sort_keys(key)
    want = np.argsort(key, kind="stable")
    assert np.array_equal(order, want)
    assert np.array_equal(ks, key[want])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_urllist(), st.sampled_from([0.0, 0.02, 0.5]), st.integers(2, 5))
def test_supports_equal_oracle_for_every_slack(ul, slack, S):
    params = DustParams(S=S, t_low=3, t_high=6, size_slack=slack)
    table = count_supports(ul, params)
    assert table.as_dict("low") == oracle_supports(ul, params, params.t_low)
    assert table.as_dict("high") == oracle_supports(ul, params, params.t_high)


def test_real_samples_equal_oracle(logs_dir):
    """Slices of the NASA TSV and secrepo logs (long alphanumeric runs, scanner junk), defaults."""
    from dustbuster.logs.reader import read_urllist

    for name in ("nasa-ksc-1995-tsv-sample/nasa_19950701.tsv", "secrepo-selflogs/access.log.2022-12-22"):
        ul, _ = read_urllist([logs_dir / name], site="www.example.com")
        part = URLList()
        for url in ul.urls()[:700]:
            part.infos[url] = ul.infos[url]
        P = DustParams()
        table = count_supports(part, P)
        assert table.as_dict("low") == oracle_supports(part, P, P.t_low)
        assert table.as_dict("high") == oracle_supports(part, P, P.t_high)


@SETTINGS
@given(st.lists(url_text, min_size=1, max_size=12), st.integers(1, 40))
def test_tokens_in_slices_are_the_same(texts, chunk):
    """Tokenised a few URLs at a time (the memory bound of a big list): the same ids and offsets."""
    wrapped = [wrap("http://h/" + t) for t in texts]
    whole, sliced = Tokens(wrapped), Tokens(wrapped, chunk_chars=chunk)
    for name in ("tid", "cum", "base", "n", "levels"):
        assert np.array_equal(getattr(whole, name), getattr(sliced, name)), name


@pytest.mark.parametrize("n, bits, part", [(1, 3, 4), (5000, 40, 1 << 21), (5000, 62, 300), (70000, 50, 1000),
                                           (70000, 62, 5000), (3000, 20, 7)])
def test_hashed_parts_group_every_key_once(n, bits, part):
    """Each key's elements in one part, in index order; every element once."""
    from dustbuster.core.urls.substrings import hashed_parts

    rng = np.random.default_rng(n + bits)
    key = rng.integers(0, 2**bits, size=n, dtype=np.int64)
    key[: n // 3] = key[n // 3: 2 * (n // 3)]
    seen: dict[int, list[int]] = {}
    part_of: dict[int, int] = {}
    for p, (order, ks) in enumerate(hashed_parts(key, part)):
        assert np.all(ks[1:] >= ks[:-1])
        assert np.array_equal(ks[1:] == ks[:-1], key[order][1:] == key[order][:-1])  # equal ⇔ equal keys
        for k, i in zip(key[order].tolist(), order.tolist()):
            assert part_of.setdefault(k, p) == p  # a key's elements in one part
            seen.setdefault(k, []).append(i)
    want: dict[int, list[int]] = {}
    for i, k in enumerate(key.tolist()):
        want.setdefault(k, []).append(i)
    assert seen == want


def _spans(tok: Tokens) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """(start, length) of every boundary's prefix and of its suffix, flat as _envelope_ids lays them out."""
    counts = tok.n + 1
    url_of = np.repeat(np.arange(len(tok.n)), counts)
    at = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    start = tok.base[url_of]
    return (start, at), (start + at, tok.n[url_of] - at)


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal ids in ``a`` exactly where equal ids in ``b`` (the names differ, not what they tell)."""
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


@SETTINGS
@given(st.lists(url_text, min_size=1, max_size=14), st.lists(st.integers(0, 14), max_size=4), st.integers(1, 40),
       st.booleans())
def test_kept_token_names_name_a_grown_list_as_a_new_one(texts, cuts, chunk, changed):
    """The list named in appends (a window's list), or changed in between (named anew): the same
    tokens, offsets and equalities as the whole list tokenised at once; each character scanned
    once while the list only grows."""
    from dustbuster.core.urls.substrings import TokenNames

    wrapped = [wrap("http://h/" + t) for t in texts]
    names = TokenNames()
    for cut in sorted(cuts):
        names.update(wrapped[:cut], chunk_chars=chunk)
    if changed and len(wrapped) > 1:
        names.update([wrap("http://other/")] + wrapped[1:], chunk_chars=chunk)  # not the list grown
        names.update(wrapped[:1], chunk_chars=chunk)
    names.update(wrapped, chunk_chars=chunk)
    if not changed:
        assert names.scanned == sum(map(len, wrapped))
    kept, whole = Tokens.named(names), Tokens(wrapped)
    for name in ("cum", "base", "n"):
        assert np.array_equal(getattr(kept, name), getattr(whole, name)), name
    assert kept.joined == whole.joined
    assert _same_partition(kept.tid, whole.tid)
    for k in range(whole.levels.shape[0]):
        assert _same_partition(kept.levels[k], whole.levels[k]), k
    # the prefix and suffix ids kept with them: the envelopes' halves named as a fresh count names them
    (_, _, P, Q), (_, _, kP, kQ) = _envelope_ids(whole), _envelope_ids(kept)
    assert whole.prefix is None and kept.prefix is not None
    assert _same_partition(kP, P) and _same_partition(kQ, Q)
    (ps, pl), (ss, sl) = _spans(whole)
    both = seq_keys(whole.levels, np.r_[ps, ss], np.r_[pl, sl])  # one id space: a prefix may be a suffix
    assert _same_partition(np.r_[kP, kQ], both)


def test_kept_names_when_a_longer_url_adds_levels():
    """Short URLs named first, then one of ~70 tokens and one more short one: the window ids of
    the levels the long URL adds cover the kept URLs too, and every kept id tells what a fresh
    naming of the whole list tells."""
    from dustbuster.core.urls.substrings import TokenNames

    short = [wrap(f"http://h/a{i}") for i in range(5)]
    long = wrap("http://h/" + "/".join(f"x{i % 3}" for i in range(35)))
    names = TokenNames()
    names.update(short)
    before = names.windows.levels.shape[0]
    wrapped = [*short, long, wrap("http://h/a1/x1")]
    names.update(wrapped[:-1])
    names.update(wrapped)
    kept, whole = Tokens.named(names), Tokens(wrapped)
    assert kept.levels.shape == whole.levels.shape and kept.levels.shape[0] > before
    for k in range(whole.levels.shape[0]):
        assert _same_partition(kept.levels[k], whole.levels[k]), k
    (_, _, P, Q), (_, _, kP, kQ) = _envelope_ids(whole), _envelope_ids(kept)
    assert _same_partition(kP, P) and _same_partition(kQ, Q)


def test_supports_counted_with_kept_names_equal_a_fresh_count(tmp_path):
    """Figure 1 over a list that grows by appends, its token ids kept in the list's URLIndex: the
    same supports and statistics as each list counted afresh, and only the new URLs scanned."""
    from dustbuster.core.urls.urlindex import URLIndex
    from dustbuster.logs.reader import read_urllist
    from dustbuster.sim.forum import generate

    log = tmp_path / "forum.log"
    log.write_text("\n".join(generate(6000, 5)) + "\n", encoding="utf-8")
    full, _ = read_urllist([log], site="www.forum.co.il")
    urls, P = full.urls(), DustParams()
    ul = URLList()
    index = URLIndex(ul, P)
    for end in (len(urls) // 2, len(urls) // 2 + 7, len(urls) * 3 // 4, len(urls)):
        for url in urls[len(ul.infos):end]:
            ul.infos[url] = full.infos[url]
        index.refresh()
        kept, fresh = count_supports(ul, P, index=index), count_supports(ul, P)
        assert kept.as_dict("low") == fresh.as_dict("low") and kept.as_dict("high") == fresh.as_dict("high")
        drop = {"detect_seconds"}
        assert {k: v for k, v in kept.stats.items() if k not in drop} == {k: v for k, v in fresh.stats.items() if k not in drop}
    assert index.token_names.scanned == sum(len(wrap(u)) for u in urls)
