"""Rule-set admission: the checks a consumer makes before it applies a rule set (beyond the
papers; docs/canonizer.md "Admission").

The validator publishes only sets that passed the set-level checks (dustbuster.core.setcheck), but anything
that can write to the rules topic can put a schema-valid set there, and a rule file is whatever
its author made.  Every consumer (the canonizer agents, the HTTP API, ``canonize --from-topic``,
dustcanon.py) therefore admits a set only if

* it is a JSON object whose ``version`` is an integer in [0, 2^53) and newer than the one held
  (an equal version is the same set read again: kept, not an error), whose ``rules`` is a list of
  at most :data:`MAX_RULES` rules, each under :data:`MAX_RULE_CHARS`;
* every rule parses as one of the rule types of docs/rules.md (substring, parameter with its scope,
  query, case, pattern; any other type is refused as ``bad_rule``), its status is ``valid`` (a
  file's ``likely`` candidates only with an explicit ``unvalidated`` switch) and it does not feed
  itself (dustbuster.core.rulecheck: for a pattern rule, α matching its own output again);
* on a built-in probe list for the site plus the set's own sample URLs, canonization reaches a
  fixed point within MA iterations, produces an absolute http(s) URL, and never moves a URL of the
  site to a host outside it (a host that is the site or one of its subdomains stays so).  These
  checks see every type alike, through the canonizer: a pattern rule that rewrites the host away
  from the site, or two pattern rules that undo each other, are caught like substring rules; case
  and query rules never change the host nor break a URL (alone they fail only by not parsing; with
  other rules they can still take part in a cycle).

Otherwise :func:`admit_rules` raises :class:`~dustbuster.core.errors.RuleSetRejected` with a one-word reason
(or RuleError, reason ``bad_rule``, for a rule that does not parse); the
caller keeps the previous set, counts and logs the rejection.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from .canonize import Canonizer
from .errors import RuleSetRejected
from .params import DEFAULT_MA
from .rulecheck import self_feeding
from .rules import Rule, rules_from_document

MAX_RULES = 5_000
MAX_RULE_CHARS = 4_096
MAX_VERSION = 2**53
#: paths and queries that probe a rule set for growth, off-site moves and non-URLs; the site's
#: own sample URLs (evidence.samples) are added
PROBE_PATHS = ("/", "/index.html", "/a/b/c.html", "/a/b/", "/story?id=1", "/story_1", "/x?a=1&b=2",
               "/search?q=dust&page=2&sid=0a1b2c&utm_source=feed", "/p/1/2/3?x=&y", "/%7Euser/file.txt")


def version_of(doc: Mapping[str, Any]) -> int:
    v = doc.get("version", 0)
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not math.isfinite(v)):
        raise RuleSetRejected("bad_version", f"'version' must be a non-negative integer, not {v!r:.40}")
    if v != int(v) or not 0 <= v < MAX_VERSION:
        raise RuleSetRejected("bad_version", f"'version' must be a non-negative integer below 2^53, not {v!r:.40}")
    return int(v)


def _host(url: str) -> str | None:
    """The host of an absolute http(s) URL, lower case; None when ``url`` is not one."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in ("http", "https"):
        return None
    auth = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].rpartition("@")[2]
    host = auth[: auth.find("]") + 1] if auth.startswith("[") else auth.split(":", 1)[0]
    return host.lower() or None


def _within(host: str, site: str) -> bool:
    return host == site or host.endswith("." + site)


def probe_urls(site: str, doc: Mapping[str, Any], rules: list[Rule]) -> list[str]:
    hosts = [site, "www." + site] if site and "." in site else ["example.com", "www.example.com"]
    urls = [f"{scheme}://{h}{p}" for h in hosts for scheme in ("http", "https") for p in PROBE_PATHS]
    for r in rules:
        for sample in (r.evidence or {}).get("samples", [])[:5] if isinstance(r.evidence, Mapping) else []:
            if isinstance(sample, (list, tuple)) and sample and isinstance(sample[0], str):
                urls.append(sample[0])
    return list(dict.fromkeys(urls))


def check_rules(site: str, rules: list[Rule], urls: list[str], ma: int) -> None:
    """Raise RuleError when the rules misbehave on ``urls`` (non-convergence, non-URLs, off-site)."""
    canon = Canonizer(rules, ma)
    for u in urls:
        res = canon.canonize(u)
        if not res.converged:
            raise RuleSetRejected("non_converging", f"{u} does not reach a fixed point in {ma} iterations")
        before, after = _host(u), _host(res.canonical)
        if before is not None and after is None:
            raise RuleSetRejected("not_a_url", f"{u} becomes {res.canonical[:200]!r}")
        if site and before and after and _within(before, site) and not _within(after, site):
            raise RuleSetRejected("off_site", f"{u} moves to host {after!r}")


def screen_rules(site: str, rules: list[Rule], ma: int = DEFAULT_MA) -> tuple[list[Rule], list[tuple[Rule, str]]]:
    """Each rule alone through the probe checks (for applying unvalidated candidates on request):
    the rules that pass, and the others with the reason."""
    ok, bad = [], []
    for r in rules:
        try:
            why = self_feeding(r)
            if why:
                raise RuleSetRejected("self_feeding", why)
            check_rules(site, [r], probe_urls(site, {}, [r]), ma)
            ok.append(r)
        except RuleSetRejected as exc:
            bad.append((r, str(exc)))
    return ok, bad


def admit_rules(site: str, doc: Mapping[str, Any], held_version: int | None = None, ma: int = DEFAULT_MA,
                unvalidated: bool = False) -> tuple[int, tuple[Rule, ...]] | None:
    """The version and rules of an admissible set; None when ``doc`` is the held version again.
    Raises RuleError("<reason>: <detail>") otherwise."""
    if not isinstance(doc, Mapping):
        raise RuleSetRejected("bad_record", "a rule set must be a JSON object")
    version = version_of(doc)
    if held_version is not None and version <= held_version:
        if version == held_version:
            return None
        raise RuleSetRejected("stale_version", f"v{version} is older than the held v{held_version}")
    lists = [doc.get(key) or [] for key in ("rules", "param_rules", "general_rules")]
    if not all(isinstance(x, list) for x in lists):
        raise RuleSetRejected("bad_record", "'rules', 'param_rules' and 'general_rules' must be lists")
    if sum(map(len, lists)) > MAX_RULES:
        raise RuleSetRejected("too_many_rules", f"more than {MAX_RULES}")
    rules = rules_from_document(doc)
    for r in rules:
        if len(r.text) > MAX_RULE_CHARS:
            raise RuleSetRejected("rule_too_long", f"{r.text[:80]}…")
        if r.status != "valid" and not unvalidated:
            raise RuleSetRejected("unvalidated_rule", f"{r.text} has status {r.status!r}")
        why = self_feeding(r)
        if why:
            raise RuleSetRejected("self_feeding", f"{r.text} ({why})")
    check_rules(site, list(rules), probe_urls(site, doc, list(rules)), ma)
    return version, tuple(rules)


__all__ = ["MAX_RULES", "MAX_RULE_CHARS", "PROBE_PATHS", "admit_rules", "check_rules", "probe_urls", "screen_rules",
           "version_of"]
