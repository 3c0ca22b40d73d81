"""Heritrix, StormCrawler, Nutch-per-scope and Yandex Clean-param exports (dustbuster.core.report.crawlerexport),
checked with their engines' regex semantics, as the Nutch export is (tests/test_export.py):

* Heritrix's RegexRule: ``Matcher.matches()`` on the whole URI, then ``appendReplacement`` of the
  format (Java's ``$n``), each rule once, in order (RulesCanonicalizationPolicy);
* StormCrawler's RegexURLNormalizer: ``Matcher.replaceAll`` of each regex in order, once.

Python's ``re.fullmatch`` and ``re.sub`` read the exported patterns as Java does (the patterns use
only constructs both read alike); the replacement is interpreted with Java's rules.
"""

from __future__ import annotations

import json
import re

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dustbuster.core import Canonizer, ParamRule, SubstringRule
from dustbuster.core.report.crawlerexport import (PER_PARAM, clean_params, parse_heritrix_xml, skipped, to_clean_param,
                                           to_heritrix_xml, to_nutch_site_xml, to_stormcrawler)
from dustbuster.core.canon.rulecheck import self_feeding
from dustbuster.core.model.pattern import PatternRule
from dustbuster.core.model.scopedrules import CaseRule, QueryRule
from tests.test_export import NEW_CASES, exportable, java_replace_all, trajectory, urls_new

R = SubstringRule.from_parts


def _expand(m: re.Match, fmt: str) -> str:
    """Java's appendReplacement of ``fmt`` after a match of the whole input (Matcher.matches())."""
    out, i = [], 0
    while i < len(fmt):
        c = fmt[i]
        if c == "\\":
            out.append(fmt[i + 1])
            i += 2
        elif c == "$":
            j = i + 2
            while j < len(fmt) and fmt[j].isdigit() and int(fmt[i + 1:j + 1]) <= m.re.groups:
                j += 1
            out.append(m.group(int(fmt[i + 1:j])) or "")
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def heritrix_apply(beans: list[tuple[str, str]], url: str) -> str:
    for regex, fmt in beans:
        m = re.fullmatch(regex, url)
        if m:
            url = _expand(m, fmt)
    return url


def storm_apply(doc: dict, url: str) -> str:
    (f,) = doc["org.apache.stormcrawler.filtering.URLFilters"]
    for r in f["params"]["urlNormalizers"]:
        url = java_replace_all(r["pattern"], r["substitution"], url)
    return url


def heritrix(rules) -> list[tuple[str, str]]:
    return parse_heritrix_xml(to_heritrix_xml("h.com", rules, 1))


def few_items(u: str, rules) -> bool:
    """Heritrix's removal is exact for at most PER_PARAM items of a name, on every URL passed through."""
    names = [r.name for r in rules if isinstance(r, ParamRule)]
    return all(v.count(f"{n}=") <= PER_PARAM for v in trajectory(u, rules) for n in names)


def odd_head(u: str, rules) -> bool:
    """A URL passed through whose text before its first '://' holds '/', '?' or '#' (a rule wrote text in
    front of the scheme): the exported pattern rules then read the head differently from
    dustbuster.core.model.pattern — the Nutch export too (tests/test_export.py's regexes, found here)."""
    return any("://" in v and re.search(r"[/?#]", v.split("://", 1)[0]) for v in trajectory(u, rules))


heritrix_ok = exportable.filter(lambda r: not skipped([r], "heritrix"))


@settings(max_examples=400, deadline=None)
@given(st.lists(heritrix_ok, max_size=8), st.lists(urls_new, max_size=6))
def test_heritrix_export_rewrites_exactly_as_canonizer(rules, us):
    c, beans = Canonizer(rules), heritrix(rules)
    for u in us:
        if "\x02" in u or "\x03" in u or "\n" in u or not few_items(u, rules) or odd_head(u, rules):
            continue
        if not c.canonize(u).converged:  # a growing set: refused by admission before any export
            continue  # (tests/test_export.py test_a_growing_rule_set_is_refused_before_any_export)
        assert heritrix_apply(beans, u) == c(u), (u, [r.text for r in rules])


@settings(max_examples=400, deadline=None)
@given(st.lists(exportable, max_size=8), st.lists(urls_new, max_size=6))
def test_stormcrawler_export_rewrites_exactly_as_canonizer(rules, us):
    # only sets admission lets through are exported: no rule that feeds itself (an empty α such as
    # '"" → "/a"' writes before a bare '?#' where the Java regex and the canonizer disagree)
    assume(all(self_feeding(r) is None for r in rules))
    c, doc = Canonizer(rules), to_stormcrawler("h.com", rules, 1)
    json.dumps(doc)
    for u in us:
        if "\x02" in u or "\x03" in u or "\n" in u or odd_head(u, rules):
            continue
        if not c.canonize(u).converged:  # a growing set: refused by admission before any export
            continue  # (tests/test_export.py test_a_growing_rule_set_is_refused_before_any_export)
        assert storm_apply(doc, u) == c(u), (u, [r.text for r in rules])


def test_heritrix_and_stormcrawler_cases():
    for rule, us in NEW_CASES:
        if skipped([rule], "heritrix"):
            continue
        for u in us:
            assert heritrix_apply(heritrix([rule]), u) == Canonizer([rule])(u), (rule.text, u)
            assert storm_apply(to_stormcrawler("h.com", [rule]), u) == Canonizer([rule])(u), (rule.text, u)
    sid = [ParamRule("sid", "remove")]
    many = "http://h.com/p?" + "&".join(f"sid={i}" for i in range(PER_PARAM * 10 + 2)) + "&a=1"
    assert heritrix_apply(heritrix(sid), many) != Canonizer(sid)(many)  # PER_PARAM a round, 10 rounds: the bound
    for u in ("http://h.com/p?sid=1", "http://h.com/p?a=1&sid=2&b", "http://h.com/p?sid=1&", "http://h.com/p?&sid=1",
              "http://h.com/x&sid=1/p?sid=2&sid=3"):
        assert heritrix_apply(heritrix(sid), u) == Canonizer(sid)(u), u


def test_each_export_says_what_it_skips_and_why(caplog):
    rules = [CaseRule("/w"), QueryRule("/l", "sort"), ParamRule("o", "replace", "1"), QueryRule("", "drop", ("q",)),
             R("/old/", "/"), ParamRule("sid", "remove"), ParamRule("utm", "remove", scope="/blog"), QueryRule("/s", "drop"),
             PatternRule("/{digits}/print", "/{digits}")]
    h = {r.text: why for r, why in skipped(rules, "heritrix")}
    assert set(h) == {r.text for r in rules[:4]}
    assert "one whole-URI match" in h[rules[2].text] and "item by item" in h[rules[3].text]
    with caplog.at_level("WARNING"):
        xml = to_heritrix_xml("h.com", rules, 7)
        storm = to_stormcrawler("h.com", rules, 7)
        clean = to_clean_param("h.com", rules, 7)
    assert xml.count("<!-- skipped: ") == 4 and "version 7" in xml
    assert len(parse_heritrix_xml(xml)) == 10 * (1 + PER_PARAM * 2 + 1 + 1)  # MA rounds
    assert {s["rule"] for s in storm["x-dustbuster"]["skipped_why"]} == {rules[0].text, rules[1].text}
    assert len(storm["org.apache.stormcrawler.filtering.URLFilters"][0]["params"]["urlNormalizers"]) == 10 * 8
    assert clean.count("# skipped: ") == len(rules) - 2
    assert "Clean-param: sid\n" in clean and "Clean-param: utm /blog/\n" in clean
    assert any("heritrix export of h.com" in m for m in caplog.messages)


def test_clean_param_groups_names_by_scope():
    rules = [ParamRule("sid", "remove"), ParamRule("utm_source", "remove"), ParamRule("ref", "remove", scope="/a"),
             ParamRule("sid", "remove")]
    assert clean_params(rules) == [(["sid", "utm_source"], ""), (["ref"], "/a/")]
    assert to_clean_param("h.com", rules).splitlines()[2:] == ["Clean-param: sid&utm_source", "Clean-param: ref /a/"]
    assert to_clean_param("h.com", rules).splitlines()[1].startswith("# partly: remove ref=* under /a: ")


def _clean_param_apply(text: str, url: str) -> str:
    """Clean-param as a robot reads it: each line's parameters dropped from a URL whose path and
    query start with the line's prefix (no prefix: every URL)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    target = parts.path + ("?" + parts.query if parts.query else "")
    drop: set[str] = set()
    for line in text.splitlines():
        if line.startswith("Clean-param: "):
            names, _, prefix = line[len("Clean-param: "):].partition(" ")
            if not prefix or target.startswith(prefix):
                drop |= set(names.split("&"))
    items = [i for i in parts.query.split("&") if i and i.split("=", 1)[0] not in drop]
    return url.split("?", 1)[0] + ("?" + "&".join(items) if items else "")


def test_clean_param_matches_canonize_on_file_and_query_scopes():
    """Clean-param as a robot applies it equals canonize with the rules it writes, except on the
    pages it declares uncovered: a scope that is a file (``/w/index.php``) is written
    ``/w/index.php/`` and the page itself is declared (``# partly:``), never cleaned over-wide;
    a rule whose scope fixes a query value is declared skipped and not written as well."""
    from dustbuster.core import Canonizer

    rules = [ParamRule("search", "remove", scope="/w/index.php", status="valid"),
             ParamRule("returnto", "remove", scope="/w/index.php?title=Special:UserLogin", status="valid"),
             ParamRule("sid", "remove", status="valid"), ParamRule("ref", "remove", scope="/blog", status="valid")]
    text = to_clean_param("h.com", rules)
    lines = [line for line in text.splitlines() if line.startswith("Clean-param: ")]
    assert all("?title=" not in line for line in lines) and text.count("# skipped: ") == 1
    assert text.count("# partly: ") == 2 and "the page /w/index.php itself" in text
    written = [r for r in rules if "?" not in r.scope]
    uncovered = {r.scope for r in written if r.scope}
    c = Canonizer(written)
    urls = ["http://h.com/w/index.php?title=A&search=x&sid=1", "http://h.com/w/index.php/B?search=x",
            "http://h.com/w/index.phpx?search=x", "http://h.com/w/index.php?title=Special:UserLogin&returnto=X",
            "http://h.com/blog?ref=1&a=2", "http://h.com/blog/post?ref=1", "http://h.com/blogs?ref=1", "http://h.com/?sid=3"]
    for u in urls:
        path = u.split("://", 1)[1].split("/", 1)[1].split("?", 1)[0]
        if "/" + path in uncovered:  # declared in the file: the page itself gets the site-wide lines only
            assert _clean_param_apply(text, u) == Canonizer([r for r in written if not r.scope])(u), u
            continue
        assert _clean_param_apply(text, u) == c(u), u


def test_nutch_site_xml_names_the_file_per_scope():
    xml = to_nutch_site_xml("h.com", "regex-normalize-h.com.xml", ("outlink", "fetcher"))
    assert "<name>urlnormalizer.regex.file.outlink</name>" in xml and "<name>urlnormalizer.regex.file.fetcher</name>" in xml
    assert "<name>urlnormalizer.loop.count</name>\n    <value>10</value>" in xml
    assert "inject" not in xml


# ------------------------------------------------------------------ the JVM itself

JAVA_SETS = [([rule], us) for rule, us in NEW_CASES] + [
    ([ParamRule("sid", "remove"), ParamRule("utm", "remove", scope="/blog"), R("/old/", "/"), QueryRule("/s", "drop"),
      PatternRule("/{digits}/print", "/{digits}"), R("^http://www.h.com/", "^http://h.com/")],
     ["http://www.h.com/old/a?sid=1&x=2&sid=3", "http://h.com/blog/x?utm=1&sid=2&a", "http://h.com/blogs?utm=1",
      "http://www.h.com/s/q?x=1&sid=2", "http://h.com/item/17/print?sid=1", "http://h.com/p?sid=1&sid=2&sid=3&sid=4",
      "http://h.com/a&sid=1/b?sid=2", "http://h.com/p?&sid=1", "http://h.com/p?sid=1&", "http://h.com/é/old/x?sid=ü"]),
]


def test_exports_run_by_the_jvm_rewrite_as_canonizer(tmp_path):
    """Heritrix's and StormCrawler's (and Nutch's) regex semantics checked by Java itself, not an emulation."""
    import base64
    import shutil
    import subprocess

    import pytest

    from dustbuster.core.report.export import parse_nutch_xml, to_nutch_xml
    from tests.conftest import ROOT

    if shutil.which("java") is None:
        pytest.skip("no java on PATH (Debian: default-jdk-headless): the emulated Java semantics are tested above")
    b64 = lambda s: base64.b64encode(s.encode()).decode()  # noqa: E731
    lines, want = [], []
    for rules, us in JAVA_SETS:
        c = Canonizer(rules)
        storm = [(r["pattern"], r["substitution"]) for r in
                 to_stormcrawler("h.com", rules)["org.apache.stormcrawler.filtering.URLFilters"][0]["params"]["urlNormalizers"]]
        nutch10 = parse_nutch_xml(to_nutch_xml("h.com", rules)) * 10  # Nutch's loop, unrolled
        sets = [("replaceall", storm), ("replaceall", nutch10)]
        if not skipped(rules, "heritrix"):
            sets.append(("heritrix", heritrix(rules)))
        for mode, pairs in sets:
            lines.append(f"set {mode}")
            lines += [f"rule {b64(p)} {b64(f)}" for p, f in pairs]
            for u in us:
                lines.append(f"url {b64(u)}")
                want.append((mode, [r.text for r in rules], u, c(u)))
    r = subprocess.run(["java", str(ROOT / "tests" / "java" / "DustRegexCheck.java")], input="\n".join(lines) + "\n",
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    got = [base64.b64decode(x).decode() for x in r.stdout.split()]
    assert len(got) == len(want) > 100
    for (mode, texts, u, expected), out in zip(want, got):
        assert out == expected, (mode, texts, u)


def test_xml_comments_hold_no_double_dash_at_any_run_of_dashes():
    """Hypothesis found '"" → "---a"': replacing '--' once left '- --' in a comment, and no XML
    parser (Nutch's, Spring's) reads such a file at all."""
    import xml.etree.ElementTree as ET

    from dustbuster.core.report.export import comment_text, to_nutch_xml

    assert comment_text("---a--") == "- - -a- -" and "--" not in comment_text("-" * 7)
    rules = [R("", "---a"), ParamRule("o", "replace", "--1", scope="/a"), CaseRule("/w---")]
    for xml in (to_nutch_xml("h.com", rules), to_heritrix_xml("h.com", rules)):
        ET.fromstring(xml)
        assert "- - -a" in xml


def test_heritrix_file_is_a_standalone_spring_beans_file():
    """Spring validates a beans file against its schema: without a schema location it refuses the
    root (cvc-elt.1.a), and a job's stock crawler-beans.cxml declares no util: namespace; so the
    file has the beans namespace only, with its location, and a ListFactoryBean (what util:list
    stands for); its header shows the wiring docs/guide.md gives.  Loaded by Spring itself:
    tests/test_consumers.py."""
    import xml.etree.ElementTree as ET

    from dustbuster.core.report.crawlerexport import BEANS_NS, BEANS_XSD, HERITRIX_WIRING, XSI_NS

    xml = to_heritrix_xml("h.com", [ParamRule("sid", "remove"), CaseRule("/w")], 3, file="dust.xml")
    root = ET.fromstring(xml)
    assert root.tag == f"{{{BEANS_NS}}}beans" and root.get(f"{{{XSI_NS}}}schemaLocation") == f"{BEANS_NS} {BEANS_XSD}"
    assert "util:" not in xml and "springframework.org/schema/util" not in xml
    (holder,) = root.findall(f"{{{BEANS_NS}}}bean")
    assert holder.get("id") == "dustbusterRules"
    assert holder.get("class") == "org.springframework.beans.factory.config.ListFactoryBean"
    assert HERITRIX_WIRING.format(file="dust.xml") in xml and xml.count("<!-- skipped: ") == 1
    assert parse_heritrix_xml(xml) == heritrix([ParamRule("sid", "remove")]) and len(parse_heritrix_xml(xml)) == 10 * PER_PARAM


def test_stormcrawler_package_names_new_and_legacy():
    """URLFilters reads the filters listed under its own class name (Configurable.configure): the
    file names one package's classes throughout."""
    from dustbuster.core.report.crawlerexport import STORM_PACKAGES

    rules = [ParamRule("sid", "remove")]
    texts = {}
    for pkg, root in STORM_PACKAGES.items():
        doc = to_stormcrawler("h.com", rules, 1, package=pkg)
        (f,) = doc[f"{root}.filtering.URLFilters"]
        assert f["class"] == f"{root}.filtering.regex.RegexURLNormalizer" and doc["x-dustbuster"]["package"] == root
        texts[pkg] = json.dumps(doc)
        assert [p for p in STORM_PACKAGES.values() if p in texts[pkg]] == [root]
    assert texts["legacy"].replace(STORM_PACKAGES["legacy"], STORM_PACKAGES["apache"]) == texts["apache"]
    assert storm_apply(to_stormcrawler("h.com", rules), "http://h.com/p?sid=1&a=2") == "http://h.com/p?a=2"


def test_clean_param_skips_a_scope_it_cannot_write_as_a_prefix():
    """A Clean-param path holds letters, digits and .-/_ (and * as a wildcard): a scope with any
    other character is skipped with the reason, never written."""
    rules = [ParamRule("a", "remove", scope="/~user"), ParamRule("b", "remove", scope="/x*y"),
             ParamRule("c", "remove", scope="/p%20q"), ParamRule("d", "remove", scope="/ok-1.2_x/A9")]
    text = to_clean_param("h.com", rules)
    assert text.count("# skipped: ") == 3 and sum(line.startswith("Clean-param: ") for line in text.splitlines()) == 1
    assert "Clean-param: d /ok-1.2_x/A9/\n" in text and "# partly: remove d=* under /ok-1.2_x/A9: " in text
    assert [r.name for r, _ in skipped(rules, "clean-param")] == ["a", "b", "c"]


def test_export_cli_storm_package_and_clean_param_summary(tmp_path, capsys):
    """``--storm-package legacy`` writes the older class names; ``export -o`` counts the skipped
    rules and the ones written only in part (Clean-param's ``# partly:`` lines)."""
    from dustbuster.cli import main

    doc = {"site": "h.com", "version": 3, "rules": [
        {"type": "parameter", "name": "sid", "action": "remove", "status": "valid"},
        {"type": "parameter", "name": "ref", "action": "remove", "scope": "/w/index.php", "status": "valid"},
        {"type": "parameter", "name": "o", "action": "replace", "value": "1", "status": "valid"}]}
    f = tmp_path / "rules.json"
    f.write_text(json.dumps(doc))
    out = tmp_path / "urlfilters.json"
    assert main(["export", "--rules", str(f), "--site", "h.com", "--to", "stormcrawler", "--storm-package", "legacy",
                 "-o", str(out)]) == 0
    assert "com.digitalpebble.stormcrawler.filtering.URLFilters" in json.loads(out.read_text())
    assert "wrote 3 of 3 rules of h.com" in capsys.readouterr().err
    robots = tmp_path / "robots.txt"
    assert main(["export", "--rules", str(f), "--site", "h.com", "--to", "clean-param", "-o", str(robots)]) == 0
    err = capsys.readouterr().err
    assert "wrote 2 of 3 rules (1 skipped, 1 partly covered: the file says which and why)" in err
    text = robots.read_text()
    assert text.count("# skipped: ") == 1 and text.count("# partly: ") == 1
    heritrix_file = tmp_path / "dust-canon-beans.xml"
    assert main(["export", "--rules", str(f), "--site", "h.com", "--to", "heritrix", "-o", str(heritrix_file)]) == 0
    assert '<import resource="dust-canon-beans.xml"/>' in heritrix_file.read_text()
