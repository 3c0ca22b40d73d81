"""Rule-set admission: the checks a consumer makes before it applies a rule set (beyond the
papers; docs/canonizer.md "Admission").

The validator publishes only sets that passed the set-level checks (dustbuster.core.validation.setcheck), but anything
that can write to the rules topic can put a schema-valid set there, and a rule file is whatever
its author made.  Every consumer (the canonizer agents, the HTTP API, ``canonize --from-topic``,
dustcanon.py) therefore admits a set only if

* with trusted keys, it is signed by one of them (dustbuster.core.model.signing: ``unsigned``,
  ``bad_signature``);
* it is the set of the site it is keyed under: its ``site`` field names that site
  (``wrong_site``; a signed set must name one), so a signature vouches for one site only;
* it is a JSON object whose ``version`` is an integer in [0, 2^53), at most :data:`MAX_SKEW_MS`
  ahead of the consumer's clock (``version_from_future``) and newer than the one held (an equal
  version with the same content is the same set read again: kept, not an error; with other
  content, ``version_reused``), whose ``rules`` is a list of at most :data:`MAX_RULES` rules,
  each under :data:`MAX_RULE_CHARS`;
* every rule parses as one of the rule types of docs/rules.md (substring, parameter with its scope,
  query, case, pattern; any other type is refused as ``bad_rule``), its status is ``valid`` (a
  file's ``likely`` candidates only with an explicit ``unvalidated`` switch) and it does not feed
  itself (dustbuster.core.canon.rulecheck: for a pattern rule, α matching its own output again);
* each rule alone, on URLs built from the rule itself (:func:`rule_probes`: its α where it can
  match, its scope), and the whole set on a built-in probe list for the site plus the
  set's own sample URLs: canonization reaches a fixed point within MA iterations, does not break
  the URL (:func:`_broken`: it stays an absolute http(s) URL with a host, gains no space, control
  character or backslash), never moves a URL of the site to a host outside it (a host the set
  covers stays so: the site, the hosts its host rules join to it — any of them in a signed set,
  only the ``www.`` twin in an unsigned one, dustbuster.core.model.hostrules — and their
  subdomains) and never makes an https URL http (``downgrade``).  A rule that keeps URLs well-formed and on the
  site but merges different pages cannot be told here: that is the validator's fetching, and the
  signature's to vouch for.  These
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
from typing import Any, Mapping, Sequence

from dustbuster.core.canon.canonize import Canonizer, canonize
from dustbuster.core.errors import RuleSetRejected
from dustbuster.core.params import DEFAULT_MA
from dustbuster.core.canon.rulecheck import PATTERN_SAMPLES, self_feeding
from dustbuster.core.model.hostrules import covered, set_hosts
from dustbuster.core.model.rules import LEGACY_LISTS, Rule, rules_from_document
from dustbuster.core.model.signing import content_bytes, verify_document
from dustbuster.core.urls.tokens import END, START

MAX_RULES = 5_000
MAX_RULE_CHARS = 4_096
MAX_VERSION = 2**53
#: how far ahead of a consumer's clock a version may be (DUST_MAX_VERSION_SKEW_S): the validator
#: numbers versions by its publish time in ms (dustbuster.core.model.ruleversion), so a version further
#: ahead is a clock a day wrong or a forged record that would make every later real version stale
#: for ever.  A day: a validator whose clock runs ahead (no NTP, a wrong time zone) is still heard,
#: and an unsigned record inside the window holds a site's rules at most that long (signed sets,
#: dustbuster.core.model.signing, leave no such record to a forger).
MAX_SKEW_MS = 86_400_000
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


def probe_urls(site: str, doc: Mapping[str, Any], rules: list[Rule], aliases: Sequence[str] = ()) -> list[str]:
    """The fixed probes for the site's hosts and ``aliases`` (:data:`PROBE_PATHS`) and the set's own
    sample URLs (at most 5 a rule): the whole set is canonized on each."""
    hosts = [*_hosts(site), *(h for h in aliases if h != site)]
    urls = [f"{scheme}://{h}{p}" for h in hosts for scheme in ("http", "https") for p in PROBE_PATHS]
    for r in rules:
        for sample in (r.evidence or {}).get("samples", [])[:5] if isinstance(r.evidence, Mapping) else []:
            if isinstance(sample, (list, tuple)) and sample and isinstance(sample[0], str):
                urls.append(sample[0])
    return list(dict.fromkeys(urls))


def _hosts(site: str) -> list[str]:
    return [site, "www." + site] if site and "." in site else ["example.com", "www.example.com"]


_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


def _tail(core: str) -> str:
    """What follows α in a probe: more path, then a query (a "/" first when α ends in a letter or
    digit, so that α stays token-aligned)."""
    return "/x?sid=1" if core[-1:] in _ALNUM else "x?sid=1"


def _overlaps(head: str, core: str) -> list[str]:
    """α laid over ``head`` (``http://host/``): its start on head's end (α = ``test/secret/``), or
    its end on the host's start (α = ``a.p1`` for ``a.p1.test``); the longest overlap of each."""
    out = []
    k = next((k for k in range(min(len(head), len(core) - 1), 0, -1) if head.endswith(core[:k])), 0)
    if k:
        out.append(head + core[k:])
    scheme, _, hostpart = head.partition("://")
    k = next((k for k in range(min(len(hostpart), len(core)), 0, -1) if core.endswith(hostpart[:k])), 0)
    if k:
        out.append(("" if "://" in core else scheme + "://") + core + hostpart[k:])
    return out


def alpha_probes(site: str, alpha: str) -> list[str]:
    """Probe URLs for a concrete α (internal form: START/END anchors kept): α where it can match, as
    the URL's start when anchored there, else right after the host, inside the path, in the query,
    and laid over ``scheme://host/``; followed by :func:`_tail` unless anchored at the end."""
    start, end = alpha.startswith(START), alpha.endswith(END)
    core = alpha[1 if start else 0: -1 if end else None]
    if not core:
        return []
    tail = "" if end else _tail(core)
    if start:
        return [core + tail]
    h, www = _hosts(site)
    sep = "" if core[0] in "/?&;" else "/"
    out = [f"http://{h}{core}", f"https://{www}/a{sep}{core}", f"http://{h}/a?q=1&{core}"]
    out += _overlaps(f"http://{h}/", core)
    return [u + tail for u in out]


def rule_probes(site: str, rule: Rule, hosts: Sequence[str] = ()) -> list[str]:
    """At most 8 URLs of the site built from ``rule`` itself: for a substring or pattern
    rule, :func:`alpha_probes` of its α (a pattern's placeholder filled with the first sample value
    of its class, dustbuster.core.canon.rulecheck.PATTERN_SAMPLES); for a rule with a path scope or a
    parameter name, URLs under the scope with that parameter (and a query-parameter scope's
    items).  Only absolute http(s) URLs on the
    site's hosts (``hosts``: those its set covers, dustbuster.core.model.hostrules.set_hosts; the
    site alone by default) are kept: what a rule does to them is what admission judges."""
    alpha = getattr(rule, "alpha", None)
    if isinstance(alpha, str):
        ph = getattr(rule, "placeholder", None)
        urls = alpha_probes(site, alpha.replace("{" + ph + "}", PATTERN_SAMPLES[ph][0]) if ph else alpha)
    else:
        scope, name = getattr(rule, "scope", ""), getattr(rule, "name", "a")
        h, www = _hosts(site)
        path, _, fixed = scope.partition("?")  # a query-parameter scope: its items first (in scope)
        q = "".join(i + "&" for i in fixed.split("&") if i)
        urls = [f"http://{h}{path}/x?{q}{name}=1&b=2", f"https://{www}{path}?{q}b=2&{name}=1"]
    homes = tuple(hosts) or (site if site and "." in site else "example.com",)
    return [u for u in dict.fromkeys(urls) if (host := _host(u)) and covered(host, homes)
            and START not in u and END not in u][:8]


def _broken(before: str, after: str) -> str:
    """Why ``after``, the canonical form of the absolute http(s) URL ``before``, is broken ("" when it
    is not): ``not_a_url`` when it is no absolute http(s) URL with a host any more, or gained a space,
    a control character or a backslash (browsers read ``\\`` as ``/``: ``http://evil\\@site/``
    goes to ``evil``)."""
    host = _host(after)
    if host is None:
        return "not_a_url"
    gained = [c for c in after if c <= " " or c in "\x7f\\"]
    if gained and not [c for c in before if c <= " " or c in "\x7f\\"]:
        return "not_a_url"
    return ""


def check_rules(site: str, rules: list[Rule], urls: list[str], ma: int, hosts: Sequence[str] = ()) -> None:
    """Raise RuleSetRejected when the rules misbehave on ``urls``: no fixed point within ``ma``
    iterations (``non_converging``), an absolute http(s) URL broken (``not_a_url``, :func:`_broken`),
    a URL of the site moved to a host outside it (``off_site``; the site's hosts are ``hosts``, those
    its set covers, else the site and its subdomains), an https URL made http
    (``downgrade``: whoever can write a set could otherwise strip TLS from every crawl of the site)."""
    homes = tuple(hosts) or ((site,) if site else ())
    run = Canonizer(rules, ma).canonize if len(rules) > 1 else lambda u: canonize(u, rules, ma)  # one rule: no automaton
    for u in urls:
        res = run(u)
        if not res.converged:
            raise RuleSetRejected("non_converging", f"{u} does not reach a fixed point in {ma} iterations")
        before = _host(u)
        if before is None:
            continue
        why = _broken(u, res.canonical)
        if why:
            raise RuleSetRejected(why, f"{u} becomes {res.canonical[:200]!r}")
        after = _host(res.canonical)
        if homes and after and covered(before, homes) and not covered(after, homes):
            raise RuleSetRejected("off_site", f"{u} moves to host {after!r}")
        if u[:8].lower() == "https://" and res.canonical[:7].lower() == "http://":
            raise RuleSetRejected("downgrade", f"{u} becomes {res.canonical[:200]!r}: a crawler would fetch it "
                                  "without TLS")


def check_each_rule(site: str, rules: list[Rule], ma: int, hosts: Sequence[str] = ()) -> None:
    """Every rule alone on the URLs built from it (:func:`rule_probes`): no rule may break a URL of
    the site or move it off the site's hosts (``hosts``: those the set covers), wherever its α can match."""
    for r in rules:
        check_rules(site, [r], rule_probes(site, r, hosts), ma, hosts)


def screen_rules(site: str, rules: list[Rule], ma: int = DEFAULT_MA) -> tuple[list[Rule], list[tuple[Rule, str]]]:
    """Each rule alone through the probe checks (for applying unvalidated candidates on request):
    the rules that pass, and the others with the reason."""
    ok, bad = [], []
    for r in rules:
        try:
            why = self_feeding(r)
            if why:
                raise RuleSetRejected("self_feeding", why)
            hosts = set_hosts(site, [r])
            check_rules(site, [r], probe_urls(site, {}, [r], hosts) + rule_probes(site, r, hosts), ma, hosts)
            ok.append(r)
        except RuleSetRejected as exc:
            bad.append((r, str(exc)))
    return ok, bad


def check_version(doc: Mapping[str, Any], held: tuple[int, Mapping[str, Any] | None] | None,
                  now_ms: int | None, max_skew_ms: int) -> int | None:
    """``doc``'s version when it may replace the held set, None when it is the held set again.
    ``held``: the held version and document (None: nothing held).  Refused: ``bad_version``;
    ``version_from_future`` more than ``max_skew_ms`` ahead of ``now_ms`` (the consumer's clock in
    ms; None: not checked); ``version_reused``: the held version with other content
    (:func:`~dustbuster.core.model.signing.content_bytes` differ); ``stale_version``: older."""
    version = version_of(doc)
    if now_ms is not None and version > now_ms + max_skew_ms:
        raise RuleSetRejected("version_from_future", f"v{version} is more than {max_skew_ms} ms ahead of "
                              f"this consumer's clock ({now_ms} ms)")
    if held is None or version > held[0]:
        return version
    if version == held[0]:
        if held[1] is not None and content_bytes(doc) != content_bytes(held[1]):
            raise RuleSetRejected("version_reused", f"v{version} is held with other content")
        return None
    raise RuleSetRejected("stale_version", f"v{version} is older than the held v{held[0]}")


def check_site(site: str, doc: Mapping[str, Any], signed: bool = False) -> None:
    """A set is bound to the site it names: its ``site`` field (covered by the signature) must be
    the key it is applied under (``wrong_site``), so one site's set, signed or not, cannot be
    replayed under another key (a parent domain would hand it to every host below it).  A signed
    set must name its site; an unsigned one without the field (a hand-written file) is taken as it
    is keyed."""
    named = doc.get("site")
    if named is None and not signed:
        return
    if not isinstance(named, str) or named.strip().lower() != site.strip().lower():
        raise RuleSetRejected("wrong_site", f"the set is for {named!r:.80}, not for {site!r:.80}")


def admit_rules(site: str, doc: Mapping[str, Any], held_version: int | None = None, ma: int = DEFAULT_MA,
                unvalidated: bool = False, *, held_doc: Mapping[str, Any] | None = None, now_ms: int | None = None,
                max_skew_ms: int = MAX_SKEW_MS, keys: Mapping[str, bytes] | None = None
                ) -> tuple[int, tuple[Rule, ...]] | None:
    """The version and rules of an admissible set; None when ``doc`` is the held version again (the
    same content).  With ``keys`` (key id → raw Ed25519 public key, dustbuster.core.model.signing), the
    set must carry a signature by one of them (``unsigned``, ``bad_signature``), checked first; then
    it must be the set of ``site`` (:func:`check_site`: ``wrong_site``).
    Raises RuleSetRejected("<reason>: <detail>") otherwise (RuleError ``bad_rule`` for a rule that
    does not parse)."""
    if not isinstance(doc, Mapping):
        raise RuleSetRejected("bad_record", "a rule set must be a JSON object")
    if keys:
        verify_document(doc, keys)
    check_site(site, doc, signed=bool(keys))
    held = None if held_version is None else (held_version, held_doc)
    version = check_version(doc, held, now_ms, max_skew_ms)
    if version is None:
        return None
    lists = [doc.get(key) or [] for key in LEGACY_LISTS]  # one list, or the three of mine@1
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
    hosts = set_hosts(site, rules, signed=bool(keys))
    check_each_rule(site, list(rules), ma, hosts)
    check_rules(site, list(rules), probe_urls(site, doc, list(rules), hosts), ma, hosts)
    return version, tuple(rules)


__all__ = ["MAX_RULES", "MAX_RULE_CHARS", "MAX_SKEW_MS", "MAX_VERSION", "PROBE_PATHS", "admit_rules", "alpha_probes",
           "check_each_rule", "check_rules", "check_site", "check_version", "probe_urls", "rule_probes", "screen_rules", "version_of"]
