"""dustcanon: DustBuster rule sets for crawlers, in one dependency-free file (Python 3.8+).

Copy this file into a crawler, load a site's RuleSet JSON (the rules topic, ``dustbuster rules``,
``GET /sites/{site}/rules``, ``mine --json``) and canonize URLs exactly as the service (Fig. 5.5):

    import dustcanon
    rs = dustcanon.load("forum.test.json")          # or dustcanon.RuleSet(dict_from_json)
    rs.canonize("http://www.forum.test/story?id=5&sid=x")   # -> 'http://forum.test/story_5'

    book = dustcanon.RuleBook()                      # several sites, as the rules topic has them
    book.update("forum.test", doc)                   # doc None = tombstone: forget the site
    book.canonize(url)                           # site found from the URL's host

The service first applies an RFC 3986 normalization (lower-case scheme and host, no default port,
no dot segments, no fragment...).  This file does not: pass ``normalize=`` a function to get it
(``dustbuster.core.normalize.normalize``), or canonize normalized URLs.  Every rule type of docs/rules.md is applied as the service applies
it (substring, parameter with its path scope, query drop/keep/sort, case, pattern); a rule of any
other type is refused (``Rejected("bad_rule")``).  Tested against the service (tests/test_dustcanon.py).
"""

import json
import re

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
    """(base, items) of a URL's query as dustbuster.core.query.split: items None without a "?"."""
    q = url.find("?")
    if q < 0:
        return url, None
    parts = url[q + 1:].split("&") if url[q + 1:] else []
    return url[:q], [tuple(p.split("=", 1)) if "=" in p else (p, None) for p in parts]


def _join(base, items):
    return base + "?" + "&".join(n if v is None else n + "=" + v for n, v in items) if items else base


def _split_url(url):
    """(head, path, tail) as dustbuster.core.scope.split_url: scheme://authority, path, ?query."""
    q = url.find("?")
    body, tail = (url, "") if q < 0 else (url[:q], url[q:])
    sep = body.find("://")
    if sep < 0:
        return "", body, tail
    slash = body.find("/", sep + 3)
    return (body, "", tail) if slash < 0 else (body[:slash], body[slash:], tail)


def _in_scope(path, scope):
    """A path lies in scope S when it is S or continues it at a "/" ("" covers every path)."""
    return not scope or (path.startswith(scope) and (len(path) == len(scope) or path[len(scope)] == "/"))


def _scope(r):
    s = r.get("scope") or ""
    if s and not (isinstance(s, str) and s[0] == "/" != s[-1] and not any(c in s for c in "?#") and min(s) >= " "):
        raise ValueError("a scope is '' or a path like /wiki (no trailing /), not %r" % (s,))
    return s


def _name(n):
    if not isinstance(n, str) or not n or any(c in n for c in "&=?#"):
        raise ValueError("bad parameter name %r" % (n,))
    return n


class _Rule:
    """What the rule types share: a display text, no self-feeding, a rewrite of the plain URL."""

    def __init__(self, r):
        self.display = r.get("display") or ""

    def feeds(self):
        return False

    def apply(self, w):  # w is the wrapped URL ^url$ (sentinels \x02, \x03)
        out = self.rewrite(w[1:-1])
        return w if out == w[1:-1] else w[0] + out + w[-1]


class _Substring(_Rule):
    """alpha -> beta: the first token-aligned occurrence of alpha becomes beta (WWW 2007 Def. 3.1)."""

    def __init__(self, r):
        _Rule.__init__(self, r)
        pre, post = _START if r.get("anchor_start") else "", _END if r.get("anchor_end") else ""
        self.alpha, self.beta = pre + r["alpha"] + post, pre + r["beta"] + post

    def feeds(self):
        return self.alpha.strip(_START + _END) == "" or self.alpha in self.beta

    def apply(self, w):
        a = self.alpha
        if a and a not in w:
            return w
        k = _find_aligned(w, a, 0 if a else 1)
        if k < 0 or (not a and k >= len(w)):
            return w
        return w[:k] + self.beta + w[k + len(a):]


class _Param(_Rule):
    """Remove parameter ``name`` or set its value (thesis 5.3), on URLs whose path is in ``scope``."""

    def __init__(self, r):
        _Rule.__init__(self, r)
        self.name, self.action, self.value, self.scope = _name(r["name"]), r["action"], r.get("value"), _scope(r)
        if self.action not in ("remove", "replace") or (self.action == "replace" and not isinstance(self.value, str)):
            raise ValueError("a parameter rule removes or replaces (with a value)")

    def rewrite(self, url):
        base, items = _split(url)
        if not items or not _in_scope(_split_url(url)[1], self.scope):
            return url
        if self.action == "remove":
            return _join(base, [(n, v) for n, v in items if not (n == self.name and v is not None)])
        return _join(base, [(n, self.value) if (n == self.name and v is not None) else (n, v) for n, v in items])


class _Query(_Rule):
    """Under ``scope``: drop the query but the ``keep`` parameters, or sort its items by name."""

    def __init__(self, r):
        _Rule.__init__(self, r)
        self.scope, self.action, keep = _scope(r), r["action"], r.get("keep") or []
        if self.action not in ("drop", "sort") or not isinstance(keep, list) or (self.action == "sort" and keep):
            raise ValueError("a query rule drops (keeping 'keep') or sorts the query")
        self.keep = [_name(n) for n in keep]

    def rewrite(self, url):
        body, hash_, frag = url.partition("#")  # a fragment stays out of the query
        head, path, tail = _split_url(body)
        if not tail or not _in_scope(path, self.scope):
            return url
        base, items = _split(body)
        kept = [(n, v) for n, v in items if n in self.keep] if self.action == "drop" else sorted(items, key=lambda it: it[0])
        return _join(base, kept) + hash_ + frag


class _Case(_Rule):
    """Under ``scope`` the site case-folds paths: lower-case the path below the scope."""

    def __init__(self, r):
        _Rule.__init__(self, r)
        self.scope = _scope(r)

    def rewrite(self, url):
        head, path, tail = _split_url(url)
        if not head or not _in_scope(path, self.scope):
            return url
        low = re.sub("%[0-9a-f]{2}", lambda m: m.group(0).upper(), path[len(self.scope):].lower())
        return head + path[:len(self.scope)] + low + tail  # percent-escapes stay upper-case


_CLASSES = {"digits": r"[0-9]+",
            "hex": r"(?=[a-f]*[0-9])(?=[0-9]*[a-f])[0-9a-f]+|(?=[A-F]*[0-9])(?=[0-9]*[A-F])[0-9A-F]+",
            "word": r"[A-Za-z0-9]+"}
_PH = re.compile(r"\{(" + "|".join(_CLASSES) + r")\}")
_SAMPLES = {"digits": ("7", "20"), "hex": ("0a", "3F"), "word": ("x", "7", "a1")}


class _Pattern(_Substring):
    """A substring rule with one typed placeholder {digits}/{hex}/{word} (dustbuster.core.pattern): the
    first token-aligned match (matches may overlap) whose rewrite differs from it is rewritten."""

    def __init__(self, r):
        _Substring.__init__(self, r)
        found, copied, ph = _PH.findall(self.alpha), _PH.findall(self.beta), _PH.search(self.alpha)
        if len(found) != 1 or (copied and copied != found) or self.alpha == self.beta:
            raise ValueError("a pattern rule has one placeholder in alpha, beta copies it or none")
        self.cls, edge = found[0], "(?<![A-Za-z0-9])(?P<v>%s)(?![A-Za-z0-9])" % _CLASSES[found[0]]
        body = re.escape(self.alpha[:ph.start()]) + edge + re.escape(self.alpha[ph.end():])
        self.regex = re.compile(("(?<![A-Za-z0-9])" if self.alpha[:1] in _ALNUM else "") + body
                                + ("(?![A-Za-z0-9])" if self.alpha[-1:] in _ALNUM else ""))

    def feeds(self):
        """As dustbuster.core.rulecheck: an output holds a new match that rewrites differently."""
        return any(self.apply(o) != o for o in (_PH.sub(v, self.beta) for v in _SAMPLES[self.cls]))

    def apply(self, w):
        k = int(w[:1] == _START)  # unanchored: from the path on, past scheme://authority (as the core)
        m = self.regex.search(w, 0 if self.alpha[:1] == _START else k + len(_split_url(w[k:])[0]))
        while m is not None:
            out = _PH.sub(lambda _: m.group("v"), self.beta)
            if out != m.group(0):
                return w[:m.start()] + out + w[m.end():]
            m = self.regex.search(w, m.start() + 1)
        return w


_TYPES = {"substring": _Substring, "parameter": _Param, "query": _Query, "case": _Case, "pattern": _Pattern}
_ORDER = {_Param: 0, _Query: 1, _Case: 2, _Substring: 3, _Pattern: 4}  # dustbuster.core.rules.TYPE_ORDER


def _rule(r):
    """The rule of one JSON object; ValueError (KeyError, TypeError) when it is not one."""
    kind = r.get("type", "substring")
    if kind not in _TYPES:
        raise ValueError("unknown rule type %r" % (kind,))
    return _TYPES[kind](r)


def _run(rules, url, ma):
    """Thesis Figure 5.5: apply the rules in order until an iteration changes nothing or MA ran."""
    w = _START + url + _END
    for _ in range(ma):
        prev = w
        for r in rules:
            w = r.apply(w)
        if w == prev:
            return w[1:-1], True
    return w[1:-1], False


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
    if (isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v in (float("inf"), float("-inf"))
            or v != int(v) or not 0 <= v < 2 ** 53):
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
        lists = [doc.get(key) or [] for key in ("param_rules", "general_rules", "rules")]
        if not all(isinstance(x, list) for x in lists):
            raise Rejected("bad_record", "'rules', 'param_rules' and 'general_rules' must be lists")
        if sum(map(len, lists)) > 5000:
            raise Rejected("too_many_rules", "more than 5000")
        self.site = doc.get("site") if site is None else site
        self.version = _version(doc)
        self.ma = ma
        self.normalize = normalize
        self.rules = [self._admit(r, unvalidated) for r in lists[0] + lists[1] + lists[2]]
        if "param_rules" in doc or "general_rules" in doc:  # a mine document: canonization order by type
            self.rules.sort(key=lambda r: (_ORDER[type(r)], getattr(r, "action", "") == "sort"))
        self._check(lists[0] + lists[1] + lists[2])

    @staticmethod
    def _admit(r, unvalidated):
        if not isinstance(r, dict):
            raise Rejected("bad_rule", "a rule must be a JSON object")
        if r.get("status", "likely") != "valid" and not unvalidated:
            raise Rejected("unvalidated_rule", "%s has status %r" % (r.get("display"), r.get("status", "likely")))
        try:
            rule = _rule(r)
        except (KeyError, TypeError, ValueError, AttributeError, re.error) as exc:
            raise Rejected("bad_rule", str(exc)) from None
        if rule.feeds():
            raise Rejected("self_feeding", rule.display)
        return rule

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
            out, converged = _run(self.rules, u, self.ma)
            if not converged:
                raise Rejected("non_converging", u)
            before, after = _abs_host(u), _abs_host(out)
            if before is not None and after is None:
                raise Rejected("not_a_url", u + " becomes " + out[:200])
            if site and before and after and _within(before, site) and not _within(after, site):
                raise Rejected("off_site", u + " moves to host " + after)

    def canonize(self, url):
        """The canonical form of ``url`` (thesis Figure 5.5; at most ``ma`` iterations)."""
        if self.normalize is not None:
            try:
                url = self.normalize(url)
            except Exception:  # an unparseable URL is kept as it is, as the service does
                pass
        if _START in url or _END in url or not self.rules:
            return url
        return _run(self.rules, url, self.ma)[0]

    __call__ = canonize


def _abs_host(url):
    """The host of an absolute http(s) URL, lower case; None when ``url`` is not one."""
    return (_host(url) or None) if url.partition("://")[0].lower() in ("http", "https") else None


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
    """The host of ``url`` (after ``scheme://``, without user and port), lower case; "" if none."""
    scheme, sep, rest = url.partition("://")
    auth = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].rpartition("@")[2]
    return (auth[: auth.find("]") + 1] if auth.startswith("[") else auth.split(":", 1)[0]).lower() if sep else ""


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
