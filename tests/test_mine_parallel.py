"""``dustbuster mine --jobs N``: a log's ranges read by several processes and Figure 1 counted in a
second one give the one-process run's document, rule for rule (every log of tests/data/logs and a
generated forum log), and the one-process read's URL list, counts, rejects and cap."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from dustbuster.cli import main
from dustbuster.core.mining.mine import mine, unsafe_flags
from dustbuster.core.mining.parallel import _Pending, mine_two
from dustbuster.core.params import DustParams
from dustbuster.core.urls.urllist import URLList
from dustbuster.logs import parread
from dustbuster.logs.reader import RejectSink, read_urllist
from dustbuster.logs.sitecap import SiteCap
from dustbuster.sim.forum import generate

LOGS = Path(__file__).parent / "data" / "logs"
REAL = sorted(p for p in LOGS.rglob("*") if p.is_file() and p.suffix not in (".md",))


@pytest.fixture(scope="module")
def forum_log(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("forum") / "forum.log"
    lines = list(generate(6000, 5))
    lines[100] = "garbage line"  # a reject, with its line number
    lines[4000] = lines[4000].replace('"GET ', '"GET http://x.test') + " \udcff"  # a byte not UTF-8: to the line loop
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogateescape")
    return path


def _doc(capsys, *args: str) -> dict:
    assert main(["mine", *args, "--json", "-q"]) == 0
    doc = json.loads(capsys.readouterr().out)
    doc["stats"] = {k: v for k, v in doc["stats"].items() if not k.endswith("seconds")}
    return doc


def _site(path: Path) -> list[str]:
    return [] if "heritrix" in str(path) or "cdx" in str(path) else ["--site", "www.example.com"]


@pytest.mark.parametrize("log", REAL, ids=lambda p: p.name)
def test_jobs_give_the_same_document_on_every_real_log(capsys, monkeypatch, log):
    monkeypatch.setattr(parread, "RANGE_BYTES", 64 << 10)  # several ranges even for a small log
    one = _doc(capsys, str(log), *_site(log))
    two = _doc(capsys, str(log), *_site(log), "--jobs", "2")
    assert json.dumps(one, sort_keys=False) == json.dumps(two, sort_keys=False)


def test_jobs_give_the_same_document_on_a_forum_log(capsys, monkeypatch, forum_log):
    monkeypatch.setattr(parread, "RANGE_BYTES", 100 << 10)
    args = [str(forum_log), "--site", "www.forum.co.il"]
    one = _doc(capsys, *args)
    for jobs in ("2", "3"):
        assert json.dumps(_doc(capsys, *args, "--jobs", jobs)) == json.dumps(one)
    capped = _doc(capsys, *args, "--max-urls-per-site", "300")
    assert capped["stats"]["sample"]["sampled"]
    assert json.dumps(_doc(capsys, *args, "--max-urls-per-site", "300", "--jobs", "2")) == json.dumps(capped)


@pytest.mark.parametrize("cap_n", [0, 40, 300])
def test_ranges_read_as_one_process(monkeypatch, forum_log, cap_n):
    monkeypatch.setattr(parread, "RANGE_BYTES", 50 << 10)
    got = []
    for jobs in (1, 2, 4):
        rejects, cap = io.StringIO(), SiteCap(cap_n)
        ul, stats = read_urllist([forum_log, forum_log], site="www.forum.co.il", jobs=jobs,
                                 rejects=RejectSink(rejects), cap=cap)
        got.append((list(ul.infos.items()), list(ul.errors), stats.to_dict(), rejects.getvalue(), cap.to_dict()))
    assert got[0][3].count("\t") >= 6  # the rejects of both copies, with their line numbers
    assert got[1] == got[0] and got[2] == got[0]


def test_ranges_cover_the_file_in_whole_lines(forum_log):
    data = forum_log.read_bytes()
    cuts = parread.ranges(forum_log, 7000)
    assert cuts[0][0] == 0 and cuts[-1][1] == len(data) and len(cuts) > 10
    assert all(a[1] == b[0] and data[b[0] - 1:b[0]] == b"\n" for a, b in zip(cuts, cuts[1:]))


@pytest.mark.parametrize("parsed", [False, True], ids=["unparsed", "parsed"])
def test_mine_two_is_mine(forum_log, parsed):
    """The same result, rule for rule and statistic for statistic, whether the thesis' parameter
    rules are mined here (no parse given) or in the other process (a window's kept parse)."""
    from dustbuster.core.urls.urlindex import URLIndex

    ul, _ = read_urllist([forum_log], site="www.forum.co.il")
    for stage in ("detect", "eliminate"):
        for params in (DustParams(), DustParams(language="paper")):
            index = URLIndex(ul, params) if parsed else None
            one, two = mine(ul, params, stage), mine_two(ul, params, stage, index=index)
            assert json.dumps(two.to_json()["rules"]) == json.dumps(one.to_json()["rules"])
            assert two.detected == one.detected and two.kept == one.kept and two.eliminated_by == one.eliminated_by
            assert two.param_kept == one.param_kept and two.param_candidates == one.param_candidates
            assert list(two.stats) == list(one.stats)


def test_a_first_window_names_its_sequences_in_the_child_and_keeps_them(forum_log, monkeypatch):
    """A window's first two-process mine: the child names the list's windows, prefixes and
    suffixes and sends them back, and they are kept (nothing left to name here); the next mine,
    of the list grown, names only the appended URLs before it forks; both equal ``mine``."""
    from dustbuster.core.urls.keptwindows import KeptWindows
    from dustbuster.core.urls.urlindex import URLIndex

    named: list[int] = []  # URLs each call in this process names (the child's calls are its own)
    extend = KeptWindows.extend

    def spy(self, tid, base):
        named.append(len(base) - self._urls)
        return extend(self, tid, base)

    monkeypatch.setattr(KeptWindows, "extend", spy)

    full, _ = read_urllist([forum_log], site="www.forum.co.il")
    urls, params = full.urls(), DustParams()
    ul = URLList()
    for url in urls[:len(urls) * 3 // 4]:
        ul.infos[url] = full.infos[url]
    index = URLIndex(ul, params)
    for grown in (False, True):
        if grown:
            for url in urls[len(urls) * 3 // 4:]:
                ul.infos[url] = full.infos[url]
            index.refresh()
        named.clear()
        two = mine_two(ul, params, index=index, unsafe_urls=ul.test_urls())
        assert index.token_names.windows.behind(len(ul)) == 0
        assert sum(named) == (len(urls) - len(urls) * 3 // 4 if grown else 0), named
        one = mine(ul, params)
        one.unsafe = unsafe_flags(one, ul.test_urls())
        assert json.dumps(two.to_json()["rules"]) == json.dumps(one.to_json()["rules"])


def test_mine_two_flags_what_unsafe_flags_flags():
    logs = sorted((Path(__file__).parent / "data" / "logs" / "secrepo-selflogs").glob("access.log.*"))
    ul, _ = read_urllist(logs, site="www.secrepo.com")
    urls = ul.test_urls()
    for stage in ("detect", "eliminate"):
        for params in (DustParams(), DustParams(language="paper")):
            one, two = mine(ul, params, stage), mine_two(ul, params, stage, unsafe_urls=urls)
            want = unsafe_flags(one, urls)
            assert want, "the log's candidates include unsafe ones: the check compares something"
            assert list(two.unsafe.items()) == list(want.items())


def test_pending_list_waits_once():
    calls = []
    p = _Pending(lambda: calls.append(1) or [1, 2, 3])
    assert len(p) == 3 and list(p) == [1, 2, 3] and 2 in p and p[0] == 1 and list(reversed(p)) == [3, 2, 1]
    assert calls == [1]
