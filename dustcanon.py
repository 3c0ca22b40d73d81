"""dustcanon: DustBuster rule sets for crawlers, in one dependency-free file (Python 3.8+).

Copy this file into a crawler, load a site's RuleSet JSON (from the rules topic, ``dustbuster
rules``, ``GET /sites/{site}/rules`` or ``dustbuster mine --json``) and canonize URLs with exactly
the results of the dustbuster service (thesis Figure 5.5; docs/rules.md):

    import dustcanon
    rs = dustcanon.load("forum.test.json")          # or dustcanon.RuleSet(dict_from_json)
    rs.canonicalize("http://www.forum.test/story?id=5&sid=x")   # -> 'http://forum.test/story_5'

    book = dustcanon.RuleBook()                      # several sites, as the rules topic has them
    book.update("forum.test", doc)                   # doc None = tombstone: forget the site
    book.canonicalize(url)                           # site found from the URL's host

The service first applies an RFC 3986 normalization (lower-case scheme and host, no default port,
no dot segments, no fragment...).  This file does not (it has no dependencies); pass
``normalize=`` a function to get it, e.g. ``dust.normalize.normalize``, or canonicalize URLs
that are already normalized.  Tested against the service's canonizer (tests/test_dustcanon.py).
"""

import json

__all__ = ["RuleSet", "RuleBook", "load", "canonicalize"]

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


class RuleSet:
    """One site's rules in canonization order (a RuleSet document or a ``mine --json`` output)."""

    def __init__(self, doc, ma=10, normalize=None):
        if not isinstance(doc, dict):
            raise ValueError("a rule set must be a JSON object")
        raw = list(doc.get("param_rules") or []) + list(doc.get("rules") or [])
        self.site = doc.get("site")
        self.version = doc.get("version")
        self.ma = ma
        self.normalize = normalize
        self.rules = [(_Param(r) if r.get("type") == "parameter" else _Substring(r))
                      for r in raw if r.get("status") != "invalid"]

    def canonicalize(self, url):
        """The canonical form of ``url`` (thesis Figure 5.5; at most ``ma`` iterations)."""
        if self.normalize is not None:
            try:
                url = self.normalize(url)
            except Exception:  # an unparseable URL is kept as it is, as the service does
                pass
        if _START in url or _END in url or not self.rules:
            return url
        w = _START + url + _END
        for _ in range(self.ma):
            prev = w
            for r in self.rules:
                w = r.apply(w)
            if w == prev:
                break
        return w[1:-1]

    __call__ = canonicalize


class RuleBook:
    """Several sites' rule sets; a URL's site is its host or the nearest parent domain that has one."""

    def __init__(self, ma=10, normalize=None):
        self.ma, self.normalize, self.sites = ma, normalize, {}

    def update(self, site, doc):
        if doc is None:
            self.sites.pop(site.lower(), None)
        else:
            self.sites[site.lower()] = RuleSet(doc, self.ma)

    def canonicalize(self, url, site=None):
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
        return rs.canonicalize(url) if rs is not None else url


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


def load(path, ma=10, normalize=None):
    """A :class:`RuleSet` from a JSON file."""
    with open(path, encoding="utf-8") as fh:
        return RuleSet(json.load(fh), ma, normalize)


def canonicalize(url, doc, ma=10):
    """One-shot: canonicalize ``url`` with the rule set ``doc`` (a dict)."""
    return RuleSet(doc, ma).canonicalize(url)
