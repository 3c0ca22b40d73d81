"""More crawler formats, built on the Nutch regexes of dustbuster.core.report.export: Heritrix
canonicalization rules, StormCrawler's URL filters, Nutch's per-scope regex files, and Yandex
``Clean-param`` lines for a site's robots.txt.  Pure functions; ``dustbuster export`` writes them.

**Heritrix** (``org.archive.modules.canonicalize.RegexRule`` beans for a
``RulesCanonicalizationPolicy``): a standalone Spring beans file (the ``beans`` namespace and its
schema location only, so Spring's validating reader loads it alone or through an ``<import>`` from
a job's ``crawler-beans.cxml``, whose stock profile declares no ``util:`` namespace) holding one
``ListFactoryBean`` ``dustbusterRules`` (what ``util:list`` stands for) for the policy's ``rules``
property (:data:`HERITRIX_WIRING`, docs/guide.md).  A rule rewrites only when its ``regex`` matches the *whole* URI
(``Matcher.matches()``), and then the URI becomes ``format`` with Java's ``$n`` groups
(``appendReplacement``); the policy applies its rules once, in order.  So:

* a Nutch regex that matches at most once, at the URL's start (``^…``: substring, pattern and
  query "drop" rules), becomes ``(?:P)([\\s\\S]*)`` with ``format`` = the substitution + ``$k`` (the
  rest of the URI, k = P's groups + 1): the same rewrite as ``replaceAll``;
* a parameter removal ("remove N") removes every ``N=…`` item, which one whole-URI match cannot
  do for any number of items: one bean removes one item (the query's only item with its ``?``,
  else an item with its ``&``), and it is listed ``per_param`` times (default 4) one after the
  other: exact for URLs with at most that many ``N`` items (the file says so; more are removed
  ``per_param`` a round);
* value replacements, scoped replacements, query "drop but K" (two replaceAll passes over
  every item), "sort" and case rules are skipped with the reason;
* the list is repeated MA times (thesis Figure 5.5; Heritrix does not loop), which is exact: a
  round that changes nothing leaves every later round unchanged.

**StormCrawler** (``urlfilters.json``): one ``RegexURLNormalizer`` whose inline
``urlNormalizers`` are the Nutch regexes (StormCrawler applies each with ``replaceAll`` in order,
once), repeated MA times as for Heritrix: exactly the Nutch export's rewrite.  The class names are
StormCrawler's since 3.0 (``org.apache.stormcrawler``); ``package="legacy"`` writes those of the
releases before (``com.digitalpebble.stormcrawler``, :data:`STORM_PACKAGES`): ``URLFilters`` reads
the list under its own class name, so a file with the other package's names configures no filter.

**Nutch, per scope**: a ``nutch-site.xml`` fragment that gives the regex file to the normalizer
scopes named (``urlnormalizer.regex.file.<scope>``: e.g. ``inject``, ``outlink``, ``fetcher``,
``crawldb``), the other scopes keeping the default file; with ``urlnormalizer.loop.count``.

**Yandex Clean-param**: what a site owner can declare in robots.txt: a parameter removal, as
``Clean-param: N1&N2`` (every path) or ``Clean-param: N path/`` for a rule scoped to ``path``
(the prefix ``path/`` never covers a path outside the scope; ``path`` itself without the slash is
left out: Yandex's prefix would also match ``pathX``; the file says so in a ``# partly:`` line).  A
scope whose path holds a character a Clean-param prefix cannot (anything but letters, digits and
``.-/_``; ``*`` is the prefix's wildcard) is skipped.  Everything else is listed as skipped.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Sequence

from dustbuster.core.report.export import Unexpressible, _warn, comment_text, nutch_regexes, query_scope_skip, unexported
from dustbuster.core.params import DEFAULT_MA
from dustbuster.core.model.rules import Rule

PER_PARAM = 4
HERITRIX_RULE = "org.archive.modules.canonicalize.RegexRule"
#: the Spring namespaces of the Heritrix file: the unversioned schema location, which every Spring
#: release maps to its own copy of the schema (META-INF/spring.schemas), read without a network
BEANS_NS = "http://www.springframework.org/schema/beans"
XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"
BEANS_XSD = "http://www.springframework.org/schema/beans/spring-beans.xsd"
#: what a crawl job's crawler-beans.cxml adds to use the export (docs/guide.md shows it in place):
#: the file imported (a path relative to the cxml) and Heritrix's policy given the list.  The
#: policy's ``rules`` replace Heritrix's default rules (RulesCanonicalizationPolicy.getDefaultRules),
#: and FrontierPreparer takes the one UriCanonicalizationPolicy bean by type (@Autowired).
HERITRIX_WIRING = """<import resource="{file}"/>
<bean id="canonicalizationPolicy" class="org.archive.modules.canonicalize.RulesCanonicalizationPolicy">
  <property name="rules" ref="dustbusterRules"/>
</bean>"""
#: StormCrawler's Java package: since 3.0 (Apache), and before (DigitalPebble; the ``legacy`` choice)
STORM_PACKAGES = {"apache": "org.apache.stormcrawler", "legacy": "com.digitalpebble.stormcrawler"}
STORM_NORMALIZER = "org.apache.stormcrawler.filtering.regex.RegexURLNormalizer"
NUTCH_SCOPES = ("inject", "outlink", "fetcher", "crawldb")
#: the characters of a Clean-param path prefix (module docstring); ``*`` is its wildcard
CLEAN_PARAM_PATH = re.compile(r"[A-Za-z0-9.\-/_]*")


def _groups(pattern: str) -> int:
    return re.compile(pattern).groups


def heritrix_rules(rule: Rule, per_param: int = PER_PARAM) -> list[tuple[str, str]]:
    """(regex, format) pairs of one rule as Heritrix RegexRules, applied one after the other;
    raises :class:`Unexpressible` with the reason."""
    query_scope_skip(rule)
    own = rule.heritrix_regexes(per_param)
    if own is not None:
        return own
    out = []
    for pat, sub in nutch_regexes(rule):
        if not pat.startswith(("^", "(?s)^")):
            raise Unexpressible("the rewrite may apply at several places of the URL")
        flags, body = ("(?s)", pat[4:]) if pat.startswith("(?s)") else ("", pat)  # flags stay in front
        out.append((f"{flags}(?:{body})([\\s\\S]*)", sub + f"${_groups(pat) + 1}"))
    return out


def _heritrix_skip(rule: Rule) -> str | None:
    try:
        heritrix_rules(rule)
    except Unexpressible as exc:
        return str(exc)
    return None


def _storm_skip(rule: Rule) -> str | None:
    return unexported([rule], "nutch")[0][1] if unexported([rule], "nutch") else None


def _clean_param_skip(rule: Rule) -> str | None:
    try:
        query_scope_skip(rule)
        rule.clean_param()
    except Unexpressible as exc:
        return str(exc)
    scope = getattr(rule, "scope", "") or ""
    if not CLEAN_PARAM_PATH.fullmatch(scope):
        return (f"a Clean-param path is a prefix of letters, digits and .-/_ (* is a wildcard): the scope {scope} "
                "cannot be written without widening the rule")
    return None


SKIPS = {"heritrix": _heritrix_skip, "stormcrawler": _storm_skip, "clean-param": _clean_param_skip}


def skipped(rules: Sequence[Rule], fmt: str) -> list[tuple[Rule, str]]:
    """The rules ``fmt`` (heritrix, stormcrawler, clean-param) cannot say exactly, with the reason."""
    return [(r, why) for r in rules if (why := SKIPS[fmt](r))]


def _xml_text(text: str) -> str:
    return comment_text(text)


def to_heritrix_xml(site: str, rules: Sequence[Rule], version: int | None = None, ma: int = DEFAULT_MA,
                    per_param: int = PER_PARAM, file: str = "") -> str:
    """A standalone Spring beans file: the ``dustbusterRules`` list (a ``ListFactoryBean``) of
    RegexRule beans, for a RulesCanonicalizationPolicy's ``rules`` (:data:`HERITRIX_WIRING`, with
    ``file`` the name it is saved under).  Only the ``beans`` namespace, with its schema location:
    Spring's XML reader validates against the schema and refuses a root it cannot find a
    declaration for (``cvc-elt.1.a``), and the file needs no namespace the job's cxml lacks."""
    beans = ET.Element("beans", {"xmlns": BEANS_NS, "xmlns:xsi": XSI_NS, "xsi:schemaLocation": f"{BEANS_NS} {BEANS_XSD}"})
    beans.append(ET.Comment(
        f" dustbuster rules for {site}" + (f" (rule set version {version})" if version is not None else "")
        + f": the list repeated {ma} times (thesis Figure 5.5, MA={ma}); a parameter removal is listed"
        f" {per_param} times, exact for URLs with at most {per_param} items of that name. "))
    wiring = HERITRIX_WIRING.format(file=file or "THIS-FILE.xml")
    beans.append(ET.Comment(" in the crawl job's crawler-beans.cxml (the policy's rules replace Heritrix's default "
                            "canonicalization rules):\n" + wiring + "\n"))
    holder = ET.SubElement(beans, "bean", {"id": "dustbusterRules",
                                           "class": "org.springframework.beans.factory.config.ListFactoryBean"})
    lst = ET.SubElement(ET.SubElement(holder, "property", {"name": "sourceList"}), "list")
    bad = skipped(rules, "heritrix")
    for r, why in bad:
        lst.append(ET.Comment(f" skipped: {_xml_text(r.text)}: {_xml_text(why)} "))
    ok = [r for r in rules if all(r is not b for b, _ in bad)]
    for rnd in range(ma):
        for r in ok:
            for regex, fmt in heritrix_rules(r, per_param):
                bean = ET.SubElement(lst, "bean", {"class": HERITRIX_RULE})
                if rnd == 0:
                    bean.append(ET.Comment(" " + _xml_text(r.text) + " "))
                ET.SubElement(bean, "property", {"name": "regex", "value": regex})
                ET.SubElement(bean, "property", {"name": "format", "value": fmt})
    _warn("heritrix", site, bad)
    ET.indent(beans)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(beans, encoding="unicode") + "\n"


def parse_heritrix_xml(text: str) -> list[tuple[str, str]]:
    """The (regex, format) of every RegexRule bean of a :func:`to_heritrix_xml` file, in order."""
    root = ET.fromstring(text)
    out = []
    for bean in root.iter(f"{{{BEANS_NS}}}bean"):
        if bean.get("class") != HERITRIX_RULE:
            continue
        props = {p.get("name"): p.get("value") for p in bean.findall(f"{{{BEANS_NS}}}property")}
        out.append((props["regex"] or "", props["format"] or ""))
    return out


def to_stormcrawler(site: str, rules: Sequence[Rule], version: int | None = None, ma: int = DEFAULT_MA,
                    package: str = "apache") -> dict:
    """``urlfilters.json`` with one RegexURLNormalizer; ``package`` (:data:`STORM_PACKAGES`) names
    the classes of StormCrawler 3.0 and later (``apache``) or of the releases before (``legacy``)."""
    root = STORM_PACKAGES[package]
    bad = skipped(rules, "stormcrawler")
    ok = [r for r in rules if all(r is not b for b, _ in bad)]
    regexes = [{"pattern": p, "substitution": s} for r in ok for p, s in nutch_regexes(r)]
    _warn("stormcrawler", site, bad)
    return {f"{root}.filtering.URLFilters": [
        {"class": f"{root}.filtering.regex.RegexURLNormalizer", "name": f"dustbuster:{site}",
         "params": {"urlNormalizers": regexes * ma}}],
        "x-dustbuster": {"site": site, "version": version, "rounds": ma, "package": root,
                         "skipped_why": [{"rule": r.text, "why": why} for r, why in bad]}}


def to_stormcrawler_json(site: str, rules: Sequence[Rule], version: int | None = None, package: str = "apache") -> str:
    return json.dumps(to_stormcrawler(site, rules, version, package=package), indent=2, ensure_ascii=False) + "\n"


def to_nutch_site_xml(site: str, regex_file: str, scopes: Sequence[str] = NUTCH_SCOPES, ma: int = DEFAULT_MA) -> str:
    """``nutch-site.xml`` properties that give ``regex_file`` (the ``--to nutch`` export) to the
    normalizer scopes named."""
    conf = ET.Element("configuration")
    conf.append(ET.Comment(f" dustbuster rules for {site}: the regex normalizer's file in the scopes "
                           f"{', '.join(scopes)}; other scopes keep urlnormalizer.regex.file "))
    props = [("urlnormalizer.loop.count", str(ma))] + [(f"urlnormalizer.regex.file.{s}", regex_file) for s in scopes]
    for name, value in props:
        p = ET.SubElement(conf, "property")
        ET.SubElement(p, "name").text = name
        ET.SubElement(p, "value").text = value
    ET.indent(conf)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(conf, encoding="unicode") + "\n"


def clean_params(rules: Sequence[Rule]) -> list[tuple[list[str], str]]:
    """(names, path prefix) of the Clean-param lines, the rules :func:`skipped` names left out: one
    line per scope ("" for every path).  A scope ``S`` holds ``S`` itself and the paths under
    ``S/`` (dustbuster.core.urls.scope.in_scope), but a Clean-param path is a bare prefix of
    letters, digits and ``.-/*_``: ``S`` would also take ``Sx``, a path outside the scope (cleaning
    there could merge different pages for the robot), and ``S?`` is no valid prefix.  So a scope
    is written ``S/``, and the page ``S`` itself is left to the site's own declaration
    (:func:`uncovered_pages` says which, in the file)."""
    by_scope: dict[str, list[str]] = {}
    for r in rules:
        if _clean_param_skip(r) is not None:
            continue
        names = by_scope.setdefault(getattr(r, "scope", ""), [])
        names += [n for n in r.clean_param() if n not in names]
    return [(names, scope + "/" if scope else "") for scope, names in by_scope.items()]


def uncovered_pages(rules: Sequence[Rule]) -> list[tuple[Rule, str]]:
    """The written scoped rules whose scope's own page (``S?…``) no Clean-param line covers."""
    out = []
    for r in rules:
        scope = getattr(r, "scope", "")
        if scope and _clean_param_skip(r) is None:
            out.append((r, f"Clean-param: the page {scope} itself (with a query) is not covered: the prefix "
                           f"{scope} would also take {scope}x; declare a canonical link on it"))
    return out


def to_clean_param(site: str, rules: Sequence[Rule], version: int | None = None) -> str:
    bad = skipped(rules, "clean-param")
    out = [f"# dustbuster rules for {site}" + (f" (rule set version {version})" if version is not None else "")
           + ": Clean-param lines for robots.txt (Yandex)"]
    out += [f"# skipped: {r.text}: {why}" for r, why in bad]
    out += [f"# partly: {r.text}: {why}" for r, why in uncovered_pages(rules)]
    out += [f"Clean-param: {'&'.join(names)}" + (f" {prefix}" if prefix else "") for names, prefix in clean_params(rules)]
    _warn("clean-param", site, bad)
    return "\n".join(out) + "\n"


FORMATS = ("heritrix", "stormcrawler", "nutch-site", "clean-param")


def render(fmt: str, site: str, rules: Sequence[Rule], version: int | None = None, regex_file: str = "",
           scopes: Sequence[str] = NUTCH_SCOPES, storm_package: str = "apache", file: str = "") -> str:
    """One of :data:`FORMATS` as text (``file``: the name the Heritrix file is saved under, for the
    wiring its header shows)."""
    if fmt == "heritrix":
        return to_heritrix_xml(site, rules, version, file=file)
    if fmt == "stormcrawler":
        return to_stormcrawler_json(site, rules, version, storm_package)
    if fmt == "nutch-site":
        return to_nutch_site_xml(site, regex_file or f"regex-normalize-{site}.xml", scopes)
    return to_clean_param(site, rules, version)
