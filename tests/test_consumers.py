"""Each export loaded into its consumer's own code rewrites the harness URLs as canonize does with
the rules the export says it carries (the file lists the others as skipped, and ``dustbuster export
-o`` counts them).

The consumers, as far as each can be had here:

* **Heritrix** 3.4.0-20220727 (``org.archive.heritrix:heritrix-modules`` and ``-commons``, Spring
  5.3.20, from Maven Central: deploy/crawlers/pom.xml): Spring's ``FileSystemXmlApplicationContext``
  (what a job's ``PathSharingContext`` is) loads a ``crawler-beans.cxml`` holding the wiring that
  docs/guide.md shows, which imports the exported file; ``RulesCanonicalizationPolicy.canonicalize``
  rewrites (tests/java/HeritrixPolicyRun.java).
* **StormCrawler** 1.18 (``com.digitalpebble.stormcrawler:storm-crawler-core``, Maven Central; the
  ``org.apache.stormcrawler`` 3.x artifacts are not served to us): ``URLFilters`` built from the
  ``--storm-package legacy`` export (tests/java/StormFiltersRun.java).  The default export differs
  from it only in the two class names (checked), and 3.x's ``URLFilters``/``RegexURLNormalizer``
  are the same code under the new package (apache/stormcrawler, core/.../filtering/regex/
  RegexURLNormalizer.java: inline ``urlNormalizers``, ``replaceAll`` in order, once).
* **Nutch**: the core jar is on Maven Central but the ``urlnormalizer-regex`` plugin is not;
  tests/java/NutchRegexRun.java repeats the plugin's reading and rewriting and
  ``URLNormalizers.normalize``'s loop (the file cites the source), with the loop count the
  ``--to nutch-site`` export sets.
* **ClearURLs**: the add-on is no package; tests/js/clearurls_port.js is a port, function by
  function, of its rule application (the file cites the source), run in Node with the WHATWG
  ``URL``/``URLSearchParams`` the add-on uses.  ClearURLs rewrites the whole query of a URL it
  cleans (``encodeURIComponent`` of every value): the URL it gives is the canonical one once both
  are decoded (:func:`decoded_key`), which is the documented fix (docs/exports.md).
* **Clean-param**: no robot's code exists to run; Yandex's documented reading
  (tests/test_crawlerexport.py ``_clean_param_apply``).

The URLs: every URL of three real logs (tests/data/logs: semicomplete, monitorware, secrepo) and
of the simulator's log (dustbuster.sim.site.SimSite with its wiki and trap families: scoped, file
scoped and query-scoped parameter rules), with the rules mined from each log and kept by the
validator's fetch-free checks (dustbuster.core.canon.rulecheck.check_static).
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import re
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl

import pytest

from dustbuster.core import Canonizer
from dustbuster.core.model.rules import Rule
from dustbuster.core.report.crawlerexport import BEANS_NS, HERITRIX_WIRING, PER_PARAM, STORM_PACKAGES
from dustbuster.core.report.export import comment_text
from dustbuster.core.urls.scope import split_url
from tests.conftest import ROOT
from tests.realruns import LOGS, RUNS
from tests.test_crawlerexport import _clean_param_apply

SIM_LINES = 5000
JAVA = ROOT / "tests" / "java"
NODE_PORT = ROOT / "tests" / "js" / "clearurls_port.js"
FORMATS = ("nutch", "heritrix", "stormcrawler", "clearurls", "clean-param")


def b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def unb64(s: str) -> str:
    return base64.b64decode(s).decode()


def decoded_key(url: str) -> tuple:
    """The key that gives a page one key whether or not ClearURLs re-encoded its query: the URL
    before the query, and the query as its (name, value) items percent-decoded (``+`` a space) in
    order, a name without ``=`` read as an empty value (Python's ``urllib.parse.parse_qsl`` with
    ``keep_blank_values``: what a form-decoding server reads)."""
    head, path, tail = split_url(url)
    return head + path, parse_qsl(tail[1:], keep_blank_values=True) if tail else None


@dataclass
class Corpus:
    name: str
    site: str
    rules: list[Rule]
    urls: list[str]
    dir: Path = Path()
    summary: dict[str, str] = field(default_factory=dict)


def _mined(name: str, site: str, ul) -> Corpus:
    from dustbuster.core.canon.rulecheck import check_static
    from dustbuster.core.mining.mine import mine

    urls = list(ul)
    r = mine(ul)
    kept, _ = check_static(r.param_rules() + r.substring_rules() + list(r.general), urls)
    return Corpus(name, site, kept, urls)


def _corpora() -> list[Corpus]:
    from dustbuster.core.urls.urllist import URLList
    from dustbuster.logs.formats import PARSERS
    from dustbuster.logs.reader import read_urllist
    from dustbuster.logs.record import Context
    from dustbuster.core.model.rules import rule_from_json
    from dustbuster.sim.site import SimSite
    from dustbuster.sim.wiki import WIKI_TRUTH

    out = []
    for name in ("semicomplete", "monitorware", "secrepo"):
        files, site = RUNS[name]
        ul, _ = read_urllist([LOGS / f for f in files], site=site)
        out.append(_mined(name, site, ul))
    ul = URLList()
    for line in SimSite(wiki=True, traps=True).log_lines(SIM_LINES, seed=5):
        rec = PARSERS["vhost"](line, Context())
        if rec.status < 400:
            ul.add(rec.url, rec.status, rec.size)
    sim = _mined("simulator", "forum.test", ul)
    # and the wiki's valid rule, whose scope fixes a query value: every format skips it
    sim.rules.append(rule_from_json(WIKI_TRUTH["valid"][0]))
    out.append(sim)
    return out


def _export(c: Corpus, fmt: str, path: Path, *extra: str, key: str = "") -> None:
    """``dustbuster export`` as a user runs it, its summary line kept in ``c.summary[key or fmt]``."""
    from dustbuster.cli import main

    path.parent.mkdir(parents=True, exist_ok=True)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = main(["export", "--rules", str(c.dir / "rules.json"), "--site", c.site, "--to", fmt, "-o", str(path),
                   *extra])
    assert rc == 0, err.getvalue()
    c.summary[key or fmt] = err.getvalue()


@pytest.fixture(scope="module")
def corpora(tmp_path_factory) -> list[Corpus]:
    """The corpora, each with its rule file and every export written by the CLI under ``c.dir``."""
    from dustbuster.core.model.rules import ruleset_document

    root = tmp_path_factory.mktemp("consumers")
    out = _corpora()
    for c in out:
        c.dir = root / c.name
        c.dir.mkdir()
        doc = ruleset_document(c.site, 7, [dict(r.to_json(), status="valid") for r in c.rules])
        (c.dir / "rules.json").write_text(json.dumps(doc))
        _export(c, "nutch", c.dir / "nutch" / "regex-normalize.xml")
        _export(c, "nutch-site", c.dir / "nutch" / "nutch-site.xml", "--regex-file", "regex-normalize.xml")
        _export(c, "heritrix", c.dir / "heritrix" / "dust-canon-beans.xml")
        for pkg in STORM_PACKAGES:
            _export(c, "stormcrawler", c.dir / f"storm-{pkg}" / "urlfilters.json", "--storm-package", pkg,
                    key="stormcrawler" if pkg == "apache" else f"stormcrawler {pkg}")
        _export(c, "clearurls", c.dir / "clearurls" / "clearurls.json")
        _export(c, "clean-param", c.dir / "clean-param" / "robots.txt")
    return out


# ------------------------------------------------------------------ what each file declares


def _comments(path: Path) -> list[str]:
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    root = ET.fromstring(path.read_text(), parser=parser)
    return [el.text or "" for el in root.iter() if el.tag is ET.Comment]


def declared(c: Corpus, fmt: str) -> tuple[set[str], set[str]]:
    """(the texts of the rules the file says it skips, the texts of the rules it says it carries)."""
    texts = {r.text for r in c.rules}
    if fmt in ("nutch", "heritrix"):
        path = c.dir / fmt / ("regex-normalize.xml" if fmt == "nutch" else "dust-canon-beans.xml")
        notes = _comments(path)
        skip = {t for t in texts if any(n.startswith(f" skipped: {comment_text(t)}: ") for n in notes)}
        carry = {t for t in texts if f" {comment_text(t)} " in notes}
        return skip, carry
    if fmt == "stormcrawler":
        doc = json.loads((c.dir / "storm-apache" / "urlfilters.json").read_text())
        skip = {s["rule"] for s in doc["x-dustbuster"]["skipped_why"]}
        return skip, texts - skip
    if fmt == "clearurls":
        doc = json.loads((c.dir / "clearurls" / "clearurls.json").read_text())
        skip = set(doc["x-dustbuster"]["skipped"])
        return skip, texts - skip
    lines = (c.dir / "clean-param" / "robots.txt").read_text().splitlines()
    skip = {t for t in texts if any(line.startswith(f"# skipped: {t}: ") for line in lines)}
    return skip, texts - skip


def carried(c: Corpus, fmt: str) -> list[Rule]:
    skip, _ = declared(c, fmt)
    return [r for r in c.rules if r.text not in skip]


def test_every_skipped_rule_is_declared_and_counted(corpora):
    """Each rule is in the file as carried or as skipped with its reason, never both, and the
    summary of ``export -o`` counts the skipped ones."""
    seen = {}
    for c in corpora:
        assert c.rules, c.name
        for fmt in FORMATS:
            skip, carry = declared(c, fmt)
            texts = {r.text for r in c.rules}
            assert skip | carry == texts and not skip & carry, (c.name, fmt, texts - skip - carry, skip & carry)
            said = re.search(r"wrote (\d+) of (\d+) rules(?: \((\d+) skipped)?", c.summary[fmt])
            assert said, (c.name, fmt, c.summary[fmt])
            assert (int(said[1]), int(said[2]), int(said[3] or 0)) == (len(texts) - len(skip), len(texts), len(skip)), \
                (c.name, fmt, c.summary[fmt])
            seen[fmt] = seen.get(fmt, 0) + len(skip)
    assert all(seen[f] > 0 for f in FORMATS), seen  # the corpora exercise every format's skipping


# ------------------------------------------------------------------ running the consumers


def _write_urls(job: Path, urls: list[str]) -> None:
    (job / "urls.b64").write_text("".join(b64(u) + "\n" for u in urls))


def _read_out(job: Path) -> list[str]:
    return [line for line in (job / "out.b64").read_text().splitlines()]


def _mismatches(pairs) -> list:
    return [(u, got, want) for u, got, want in pairs if got != want]


def _heritrix_cxml(wiring: str) -> str:
    """A job's cxml as Heritrix's stock profile starts it (profile-crawler-beans.cxml: the beans and
    context namespaces with their 3.0 schema locations, annotation-config), with ``wiring``."""
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<beans xmlns="{BEANS_NS}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"\n'
            '       xmlns:context="http://www.springframework.org/schema/context"\n'
            f'       xsi:schemaLocation="{BEANS_NS} http://www.springframework.org/schema/beans/spring-beans-3.0.xsd\n'
            '         http://www.springframework.org/schema/context '
            'http://www.springframework.org/schema/context/spring-context-3.0.xsd">\n'
            ' <context:annotation-config/>\n' + wiring + "\n</beans>\n")


@pytest.fixture(scope="module")
def jvm_runs(corpora) -> dict[str, str | None]:
    """Nutch's, Heritrix's and StormCrawler's runs over every corpus, started together (the JVMs'
    start-up and the regexes are the tests' time; two cores run them side by side): consumer →
    None when it ran, else why it could not (its test skips with that reason)."""
    import shutil

    from dustdev.crawlerlibs import Unavailable, classpath, ensure_libs

    if shutil.which("java") is None:
        return dict.fromkeys(("nutch", "heritrix", "stormcrawler"), "no java on PATH (Debian: default-jdk-headless)")
    root = corpora[0].dir.parent
    wiring = HERITRIX_WIRING.format(file="dust-canon-beans.xml")
    storm_jobs = []
    for c in corpora:
        _write_urls(c.dir / "nutch", c.urls)
        (c.dir / "heritrix" / "crawler-beans.cxml").write_text(_heritrix_cxml(wiring))
        _write_urls(c.dir / "heritrix", c.urls)
        for pkg in STORM_PACKAGES:
            _write_urls(c.dir / f"storm-{pkg}", c.urls)
            storm_jobs.append(f"{c.name}/storm-{pkg}")
    commands = {"nutch": [str(JAVA / "NutchRegexRun.java"), *(str(c.dir / "nutch") for c in corpora)]}
    why: dict[str, str | None] = {}
    try:
        ensure_libs()
        commands["heritrix"] = ["-cp", classpath("heritrix"), str(JAVA / "HeritrixPolicyRun.java"),
                                *(str(c.dir / "heritrix") for c in corpora)]
        commands["stormcrawler"] = ["-cp", classpath("stormcrawler", root), str(JAVA / "StormFiltersRun.java"),
                                    str(root), *storm_jobs]
    except Unavailable as exc:
        why["heritrix"] = why["stormcrawler"] = f"the crawlers' jars cannot be had here: {exc}"
    procs = {name: subprocess.Popen(["java", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for name, args in commands.items()}
    for name, proc in procs.items():
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, (name, err[-4000:])
        why[name] = None
    return why


def _ran(jvm_runs: dict[str, str | None], consumer: str) -> None:
    if jvm_runs[consumer]:
        pytest.skip(jvm_runs[consumer])


def test_nutch_export_through_nutchs_regex_normalizer(corpora, jvm_runs):
    _ran(jvm_runs, "nutch")
    for c in corpora:
        canon = Canonizer(carried(c, "nutch"))
        got = [unb64(x) for x in _read_out(c.dir / "nutch")]
        bad = _mismatches((u, g, canon(u)) for u, g in zip(c.urls, got))
        assert len(got) == len(c.urls) and not bad, (c.name, len(bad), bad[:5])


def test_heritrix_export_loads_in_spring_and_canonicalizes_as_canonize(corpora, jvm_runs):
    """Spring loaded each job's cxml, with the wiring docs/guide.md shows, and the policy it built
    rewrites as the canonizer, within the bound the file states (a removal exact for URLs with at
    most PER_PARAM items of its name)."""
    import textwrap

    guide = (ROOT / "docs" / "guide.md").read_text()
    blocks = [textwrap.dedent(b) for b in re.findall(r"```xml\n(.*?)```", guide, re.S) if "dustbusterRules" in b]
    assert blocks and blocks[0].strip() == HERITRIX_WIRING.format(file="dust-canon-beans.xml")
    _ran(jvm_runs, "heritrix")
    for c in corpora:
        rules = carried(c, "heritrix")
        canon = Canonizer(rules)
        got = [unb64(x) for x in _read_out(c.dir / "heritrix")]
        removed = [r.name for r in rules if getattr(r, "action", "") == "remove"]
        within = [not any(u.count(f"{n}=") > PER_PARAM for n in removed) for u in c.urls]
        bad = _mismatches((u, g, canon(u)) for u, g, ok in zip(c.urls, got, within) if ok)
        assert len(got) == len(c.urls) and not bad, (c.name, len(bad), bad[:5])


def test_stormcrawler_export_through_stormcrawlers_url_filters(corpora, jvm_runs):
    """The legacy file through StormCrawler 1.18 rewrites as the canonizer; the default file is the
    same with 3.x's class names, which 1.18 does not read (no filter: every URL as it came)."""
    for c in corpora:
        docs = {pkg: (c.dir / f"storm-{pkg}" / "urlfilters.json").read_text() for pkg in STORM_PACKAGES}
        assert docs["legacy"].replace(STORM_PACKAGES["legacy"], STORM_PACKAGES["apache"]) == docs["apache"]
    _ran(jvm_runs, "stormcrawler")
    for c in corpora:
        canon = Canonizer(carried(c, "stormcrawler"))
        got = [unb64(x) for x in _read_out(c.dir / "storm-legacy")]
        bad = _mismatches((u, g, canon(u)) for u, g in zip(c.urls, got))
        assert len(got) == len(c.urls) and not bad, (c.name, len(bad), bad[:5])
        assert [unb64(x) for x in _read_out(c.dir / "storm-apache")] == c.urls


def _clearurls(jobs: list[Path]) -> None:
    import shutil

    if shutil.which("node") is None:
        pytest.skip("no node on PATH (Debian: nodejs)")
    r = subprocess.run(["node", str(NODE_PORT), *map(str, jobs)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]


def test_clearurls_export_through_clearurls_rule_application(corpora):
    """Keyed on the decoded query, ClearURLs' URL is the canonical one (in the browser's spelling)
    for every URL; as text, not where it removed a field from a query whose values it re-encodes."""
    jobs = []
    for c in corpora:
        job = c.dir / "clearurls"
        canon = Canonizer(carried(c, "clearurls"))
        (job / "urls.b64").write_text("".join(f"{b64(u)} {b64(canon(u))}\n" for u in c.urls))
        jobs.append(job)
    _clearurls(jobs)
    spelt = 0
    for c, job in zip(corpora, jobs):
        rows = [tuple(map(unb64, line.split())) for line in _read_out(job)]
        assert len(rows) == len(c.urls)
        bad = [(u, got, href) for u, (got, href) in zip(c.urls, rows)
               if got.startswith("!error") or decoded_key(got) != decoded_key(href)]
        assert not bad, (c.name, len(bad), bad[:5])
        spelt += sum(got != href for got, href in rows)
    assert spelt > 0  # the re-encoding docs/exports.md describes happens on the harness URLs


def test_clearurls_gives_one_page_two_spellings_unless_decoded(tmp_path):
    """The add-on's own path (the port): removing utm_source re-encodes id's value; the same page
    reached without utm_source keeps its spelling.  Decoded, the two are one key, the canonical
    URL's."""
    from dustbuster.core import ParamRule
    from dustbuster.core.report.export import to_clearurls_json

    rules = [ParamRule("utm_source", "remove")]
    (tmp_path / "clearurls.json").write_text(to_clearurls_json("h.com", rules))
    links = ["http://h.com/about?id=licenses:bsd&utm_source=feed", "http://h.com/about?id=licenses:bsd"]
    canon = Canonizer(rules)
    (tmp_path / "urls.b64").write_text("".join(f"{b64(u)} {b64(canon(u))}\n" for u in links))
    _clearurls([tmp_path])
    (tracked, href), (plain, _) = [tuple(map(unb64, line.split())) for line in _read_out(tmp_path)]
    assert tracked == "http://h.com/about?id=licenses%3Absd" and plain == href == "http://h.com/about?id=licenses:bsd"
    assert decoded_key(tracked) == decoded_key(plain) == decoded_key(canon(links[0]))
    assert "decoded" in json.loads((tmp_path / "clearurls.json").read_text())["x-dustbuster"]["keying"]


def test_clean_param_as_a_robot_reads_it(corpora):
    """Every URL: the robot's reading of the lines equals canonize with the rules written, except
    on a scope's own page, which the file declares uncovered (``# partly:``): there only the
    site-wide lines apply."""
    for c in corpora:
        text = (c.dir / "clean-param" / "robots.txt").read_text()
        rules = carried(c, "clean-param")
        partly = {r.scope for r in rules if f"# partly: {r.text}: " in text}
        canon, sitewide = Canonizer(rules), Canonizer([r for r in rules if not r.scope])
        for u in c.urls:
            want = (sitewide if split_url(u)[1] in partly else canon)(u)
            assert _clean_param_apply(text, u) == want, (c.name, u)
