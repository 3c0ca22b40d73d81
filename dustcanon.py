"""dustcanon: DustBuster rule sets for crawlers, in one dependency-free file (Python 3.8+).

Copy this file into a crawler, load a site's RuleSet JSON (from the rules topic, ``dustbuster
rules``, ``GET /sites/{site}/rules`` or ``dustbuster mine --json``) and canonize URLs with exactly
the results of the dustbuster service (thesis Figure 5.5; docs/rules.md):

    import dustcanon
    rs = dustcanon.load("forum.test.json")          # or dustcanon.RuleSet(dict_from_json)
    rs.canonize("http://www.forum.test/story?id=5&sid=x")   # -> 'http://forum.test/story_5'

    book = dustcanon.RuleBook()                      # several sites, as the rules topic has them
    book.update("forum.test", doc)                   # doc None = tombstone: forget the site
    book.canonize(url)                           # site found from the URL's host

The service first applies an RFC 3986 normalization (lower-case scheme and host, no default port,
no dot segments, no fragment...).  This file does not (it has no dependencies); pass
``normalize=`` a function to get it, e.g. ``dustbuster.core.normalize.normalize``, or canonicalize URLs
that are already normalized.  Tested against the service's canonizer (tests/test_dustcanon.py).
"""

import json

__all__ = ["RuleSet", "RuleBook", "Rejected", "load", "canonize", "canonicalize"]

_START, _END = "\x02", "\x03"
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


def _boundary(s, k):
    return k <= 0 or k >= len(s) or not (s[k - 1] in _ALNUM and s[k] in _ALNUM)


def _find_aligned(h, n, start):
    if not n:
        for k in range(start, len(h) + 1):
            if _boundary(h, k):
                return k
        return -1
    k = h.find(n, start)
    while k != -1:
        if _boundary(h, k) and _boundary(h, k + len(n)):
            return k
        k = h.find(n, k + 1)
    return -1


def _split(url):
    q = url.find("?")
    if q < 0:
        return url, None
    items = []
    if url[q + 1:]:
        for part in url[q + 1:].split("&"):
            eq = part.find("=")
            items.append((part, None) if eq < 0 else (part[:eq], part[eq + 1:]))
    return url[:q], items


def _join(base, items):
    if not items:
        return base
    return base + "?" + "&".join(n if v is None else n + "=" + v for n, v in items)


class _Substring:
    def __init__(self, r):
        pre = _START if r.get("anchor_start") else ""
        post = _END if r.get("anchor_end") else ""
        self.alpha = pre + r["alpha"] + post
        self.beta = pre + r["beta"] + post
        self.display = r.get("display") or ""

    def apply(self, w):
        a = self.alpha
        if a and a not in w:
            return w
        k = _find_aligned(w, a, 0 if a else 1)
        if k < 0 or (not a and k >= len(w)):
            return w
        return w[:k] + self.beta + w[k + len(a):]


class _Param:
    def __init__(self, r):
        self.name, self.action, self.value = r["name"], r["action"], r.get("value")
        if self.action not in ("remove", "replace"):
            raise ValueError("parameter action must be remove or replace")
        self.display = r.get("display") or ""

    def apply(self, w):
        base, items = _split(w[1:-1])
        if not items:
            return w
        if self.action == "remove":
            kept = [(n, v) for n, v in items if not (n == self.name and v is not None)]
            return w if len(kept) == len(items) else _START + _join(base, kept) + _END
        out = [(n, self.value) if (n == self.name and v is not None and v != self.value) else (n, v) for n, v in items]
        return w if out == items else _START + _join(base, out) + _END


class Rejected(ValueError):
    """A rule set that is not applied (the service's admission checks); ``reason`` is one word."""

    def __init__(self, reason, detail=""):
        ValueError.__init__(self, reason + (": " + detail if detail else ""))
        self.reason = reason


_PROBE_PATHS = ("/", "/index.html", "/a/b/c.html", "/a/b/", "/story?id=1", "/story_1", "/x?a=1&b=2",
                "/search?q=dust&page=2&sid=0a1b2c&utm_source=feed", "/p/1/2/3?x=&y", "/%7Euser/file.txt")


def _version(doc):
    v = doc.get("version", 0)
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v in (float("inf"), float("-inf")):
        raise Rejected("bad_version", "'version' must be a non-negative integer")
    if v != int(v) or not 0 <= v < 2 ** 53:
        raise Rejected("bad_version", "'version' must be a non-negative integer below 2^53")
    return int(v)


class RuleSet:
    """One site's rules in canonization order (a RuleSet document or a ``mine --json`` output).

    Admitted as the service admits it (docs/canonizer.md): every rule ``valid`` (a ``mine``
    document's candidates only with ``unvalidated=True``), no rule that feeds itself, and on probe
    URLs of the site (and the set's sample URLs) canonization converges, gives absolute http(s)
    URLs and never leaves the site's hosts; otherwise :class:`Rejected` is raised."""

    # ma=10 here and below: dustbuster.core.params.DEFAULT_MA, written out (this file imports no package)
    def __init__(self, doc, ma=10, normalize=None, unvalidated=False, site=None):
        if not isinstance(doc, dict):
            raise Rejected("bad_record", "a rule set must be a JSON object")
        lists = [doc.get("param_rules") or [], doc.get("rules") or []]
        if not all(isinstance(x, list) for x in lists):
            raise Rejected("bad_record", "'rules' and 'param_rules' must be lists")
        if sum(map(len, lists)) > 5000:
            raise Rejected("too_many_rules", "more than 5000")
        self.site = doc.get("site") if site is None else site
        self.version = _version(doc)
        self.ma = ma
        self.normalize = normalize
        self.rules = []
        for r in lists[0] + lists[1]:
            if not isinstance(r, dict):
                raise Rejected("bad_rule", "a rule must be a JSON object")
            if r.get("status", "likely") != "valid" and not unvalidated:
                raise Rejected("unvalidated_rule", "%s has status %r" % (r.get("display"), r.get("status", "likely")))
            try:
                rule = _Param(r) if r.get("type") == "parameter" else _Substring(r)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise Rejected("bad_rule", str(exc)) from None
            if isinstance(rule, _Substring) and (rule.alpha.strip(_START + _END) == "" or rule.alpha in rule.beta):
                raise Rejected("self_feeding", rule.display)
            self.rules.append(rule)
        self._check(lists[0] + lists[1])

    def _check(self, raw):
        site = (self.site or "").lower() if isinstance(self.site, str) else ""
        hosts = [site, "www." + site] if "." in site else ["example.com", "www.example.com"]
        urls = [s + "://" + h + p for h in hosts for s in ("http", "https") for p in _PROBE_PATHS]
        for r in raw:
            ev = r.get("evidence")
            for sample in (ev.get("samples") or [])[:5] if isinstance(ev, dict) else []:
                if isinstance(sample, list) and sample and isinstance(sample[0], str):
                    urls.append(sample[0])
        for u in dict.fromkeys(urls):
            out, converged = self._run(u)
            if not converged:
                raise Rejected("non_converging", u)
            before, after = _abs_host(u), _abs_host(out)
            if before is not None and after is None:
                raise Rejected("not_a_url", u + " becomes " + out[:200])
            if site and before and after and _within(before, site) and not _within(after, site):
                raise Rejected("off_site", u + " moves to host " + after)

    def _run(self, url):
        w = _START + url + _END
        for _ in range(self.ma):
            prev = w
            for r in self.rules:
                w = r.apply(w)
            if w == prev:
                return w[1:-1], True
        return w[1:-1], False

    def canonize(self, url):
        """The canonical form of ``url`` (thesis Figure 5.5; at most ``ma`` iterations)."""
        if self.normalize is not None:
            try:
                url = self.normalize(url)
            except Exception:  # an unparseable URL is kept as it is, as the service does
                pass
        if _START in url or _END in url or not self.rules:
            return url
        return self._run(url)[0]

    __call__ = canonize


def _abs_host(url):
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in ("http", "https"):
        return None
    auth = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].rpartition("@")[2]
    host = auth[: auth.find("]") + 1] if auth.startswith("[") else auth.split(":", 1)[0]
    return host.lower() or None


def _within(host, site):
    return host == site or host.endswith("." + site)


class RuleBook:
    """Several sites' rule sets; a URL's site is its host or the nearest parent domain that has one."""

    def __init__(self, ma=10, normalize=None):
        self.ma, self.normalize, self.sites = ma, normalize, {}

    def update(self, site, doc):
        """Apply a rules-topic record (None: a tombstone).  A set that is not admitted, or not newer
        than the one held, raises :class:`Rejected` and the site keeps its current set; the same
        version again changes nothing."""
        site = site.lower()
        if doc is None:
            self.sites.pop(site, None)
            return
        held = self.sites.get(site)
        if held is not None and isinstance(doc, dict):
            v = _version(doc)
            if v == held.version:
                return
            if v < held.version:
                raise Rejected("stale_version", "v%d is older than the held v%d" % (v, held.version))
        self.sites[site] = RuleSet(doc, self.ma, site=site)

    def canonize(self, url, site=None):
        if self.normalize is not None:
            try:
                url = self.normalize(url)
            except Exception:
                pass
        rs = self.sites.get(site.lower()) if site else None
        if rs is None and not site:
            host = _host(url)
            while host and rs is None:
                rs = self.sites.get(host)
                host = host.partition(".")[2]
        return rs.canonize(url) if rs is not None else url


def _host(url):
    s = url.find("://")
    if s < 0:
        return ""
    rest = url[s + 3:]
    end = min([k for k in (rest.find(c) for c in "/?#") if k >= 0] or [len(rest)])
    auth = rest[:end].rpartition("@")[2]
    if auth.startswith("["):
        return auth[: auth.find("]") + 1].lower()
    return auth.split(":", 1)[0].lower()


def load(path, ma=10, normalize=None, unvalidated=False):
    """A :class:`RuleSet` from a JSON file (``unvalidated=True`` for ``mine --json`` candidates)."""
    with open(path, encoding="utf-8") as fh:
        return RuleSet(json.load(fh), ma, normalize, unvalidated)


def canonize(url, doc, ma=10, unvalidated=False):
    """One-shot: canonize ``url`` with the rule set ``doc`` (a dict)."""
    return RuleSet(doc, ma, unvalidated=unvalidated).canonize(url)


#: The name this module had before the project settled on one verb ("canonize", as the papers
#: say); kept so that crawler code written against it keeps working.
canonicalize = canonize
