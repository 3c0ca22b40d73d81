"""dustcanon: DustBuster rule sets for crawlers, in one dependency-free file (Python 3.8+).

Copy this file into a crawler, load a site's RuleSet JSON (the rules topic, ``dustbuster rules``,
``GET /sites/{site}/rules``, ``mine --json``) and canonize URLs exactly as the service (Fig. 5.5):
    rs = dustcanon.load("forum.test.json", keys=[PUBLIC_KEY])   # or dustcanon.RuleSet(doc)
    rs.canonize("http://www.forum.test/story?id=5&sid=x")   # -> 'http://forum.test/story_5'
    book = dustcanon.RuleBook(keys=[PUBLIC_KEY]); book.update("forum.test", doc); book.canonize(url)
``keys``: the validator's public keys (docs/canonizer.md "Signed rule sets"); ``normalize=``: a function
(``dustbuster.core.urls.normalize.normalize``) or none.  As the service (tests/test_dustcanon.py).

>>> doc = {"site": "forum.test", "version": 1, "rules": [
...     {"type": "parameter", "name": "sid", "action": "remove", "status": "valid"},
...     {"type": "substring", "alpha": "http://www.", "beta": "http://", "anchor_start": True,
...      "anchor_end": False, "status": "valid"}]}
>>> RuleSet(doc).canonize("http://www.forum.test/story?id=5&sid=9")
'http://forum.test/story?id=5'
>>> book = RuleBook()
>>> book.update("forum.test", doc)
>>> book.canonize("http://www.forum.test/a?sid=1")            # the site found from the host
'http://forum.test/a'
>>> book.update("other.test", doc)                             # a set applies only to the site it names
Traceback (most recent call last):
  ...
dustcanon.Rejected: wrong_site: the set is for 'forum.test', not for 'other.test'
"""

import base64  # the standard library only (tests/test_layout.py)
import hashlib
import json
import re
import time

__all__ = ["RuleSet", "RuleBook", "Rejected", "load", "canonize", "canonicalize", "ed25519_verify"]

_START, _END = "\x02", "\x03"
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


def _boundary(s, k):
    return k <= 0 or k >= len(s) or not (s[k - 1] in _ALNUM and s[k] in _ALNUM)


def _find_aligned(h, n, start):
    if not n:
        return next((k for k in range(start, len(h) + 1) if _boundary(h, k)), -1)
    k = h.find(n, start)
    while k != -1:
        if _boundary(h, k) and _boundary(h, k + len(n)):
            return k
        k = h.find(n, k + 1)
    return -1


def _split(url):
    """(base, items) of a URL's query as dustbuster.core.urls.query.split: items None without a "?"."""
    q = url.find("?")
    parts = url[q + 1 :].split("&") if q >= 0 and url[q + 1 :] else []
    return (url, None) if q < 0 else (url[:q], [tuple(p.split("=", 1)) if "=" in p else (p, None) for p in parts])


def _join(base, items):
    return base + "?" + "&".join(n if v is None else n + "=" + v for n, v in items) if items else base


def _split_url(url):
    """(head, path, tail) as dustbuster.core.urls.scope.split_url: scheme://authority, path, ?query."""
    q = url.find("?")
    body, tail = (url, "") if q < 0 else (url[:q], url[q:])
    sep = body.find("://")
    slash = body.find("/", sep + 3) if sep >= 0 else -1
    return ("", body, tail) if sep < 0 else (body, "", tail) if slash < 0 else (body[:slash], body[slash:], tail)


def _in_scope(url, scope):
    """dustbuster.core.urls.scope.url_in_scope: the path is the scope's path or continues it at a "/",
    and the query fixes each name=value the scope names (one value per name: no other)."""
    s, path, got = scope.partition("?")[0], _split_url(url)[1], {}
    for n, v in [it for it in _split(url.partition("#")[0])[1] or () if it[1] is not None]:
        got[n] = v if got.setdefault(n, v) == v else None
    return (not s or (path.startswith(s) and (len(path) == len(s) or path[len(s)] == "/"))) and all(
        got.get(n) == v for n, v in _fixed(scope)
    )


def _fixed(scope):
    return [tuple(i.split("=", 1)) for i in scope.partition("?")[2].split("&") if i]


def _scope(r, query=True):
    s = r.get("scope") or ""
    p, q, f = s.partition("?") if isinstance(s, str) else ("", "", "")
    n = [i.partition("=") for i in f.split("&")] if q else []
    if s and not (
        isinstance(s, str)
        and (p[:1] == "/" != p[-1] if p else q)
        and "#" not in s
        and min(s) >= " "
        and (query or not q)
        and (
            not q
            or [x[0] for x in n] == sorted({x[0] for x in n})
            and all(a and e and "?" not in v and not any(c in a for c in "&=?#") for a, e, v in n)
        )
    ):
        raise ValueError("a scope is '' or a path like /wiki (no trailing /), then ?name=value&..., not %r" % (s,))
    return s


def _name(n):
    return n if isinstance(n, str) and n and not any(c in n for c in "&=?#") else _fail("bad parameter name %r" % (n,))


def _fail(why):
    raise ValueError(why)


class _Rule:
    """What the rule types share: a display text, no self-feeding, a rewrite of the plain URL."""

    def __init__(self, r):
        self.display, self.kind = r.get("display") or "", r.get("type", "substring")

    def feeds(self):
        return False  # no rule type but substring and pattern rules can feed itself

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
        k = _find_aligned(w, a, 0 if a else 1) if a in w else -1
        if k < 0 or (not a and k >= len(w)):
            return w
        return w[:k] + self.beta + w[k + len(a) :]


class _Param(_Rule):
    """Remove parameter ``name`` or set its value (thesis 5.3), on URLs whose path is in ``scope``."""

    def __init__(self, r):
        _Rule.__init__(self, r)
        self.name, self.action, self.value, self.scope = _name(r["name"]), r["action"], r.get("value"), _scope(r)
        values = r.get("values") or []
        if (
            self.action not in ("remove", "replace")
            or (self.action == "replace" and not isinstance(self.value, str))
            or self.name in dict(_fixed(self.scope))
            or not isinstance(values, list)
            or (values and self.action != "remove")
            or not all(isinstance(v, str) and "&" not in v and "#" not in v for v in values)
            or len(set(values)) != len(values)
        ):
            raise ValueError("a parameter rule removes (some 'values' only, when given) or replaces (with a value) "
                             "a name its scope does not fix")
        self.values = frozenset(values)

    def rewrite(self, url):
        base, items = _split(url)
        if not items or not _in_scope(url, self.scope):
            return url
        if self.action == "remove":
            gone = lambda n, v: n == self.name and v is not None and (not self.values or v in self.values)  # noqa: E731
            return _join(base, [(n, v) for n, v in items if not gone(n, v)])
        return _join(base, [(n, self.value) if (n == self.name and v is not None) else (n, v) for n, v in items])


class _Query(_Rule):
    """Under ``scope``: drop the query but the ``keep`` parameters (only the ``only`` ones when
    given: a closed list), or sort its items by name."""

    def __init__(self, r):
        _Rule.__init__(self, r)
        self.scope, self.action, keep, only = _scope(r), r["action"], r.get("keep") or [], r.get("only") or []
        if (
            self.action not in ("drop", "sort")
            or not isinstance(keep, list)
            or not isinstance(only, list)
            or (self.action == "sort" and (keep or only))
            or (self.action == "drop" and not set(dict(_fixed(self.scope))) <= set(keep))
            or set(only) & (set(keep) | set(dict(_fixed(self.scope))))
        ):
            raise ValueError("a query rule drops (keeping 'keep' and its scope's names; only 'only' when given) "
                             "or sorts the query")
        self.keep = [_name(n) for n in keep]
        self.only = [_name(n) for n in only]  # the closed list dropped: any other name stays

    def rewrite(self, url):
        body, hash_, frag = url.partition("#")  # a fragment stays out of the query
        if "?" not in body or not _in_scope(body, self.scope):
            return url
        base, items = _split(body)
        if self.action == "drop" and self.only:
            kept = [(n, v) for n, v in items if n not in self.only]
        elif self.action == "drop":
            kept = [(n, v) for n, v in items if n in self.keep]
        else:
            kept = sorted(items, key=lambda it: it[0])
        return _join(base, kept) + hash_ + frag


#: type -> its path rewrite (path, length of the scope), for the rules that rewrite the path under a path scope
_PATH = {
    "case": lambda p, k: p[:k] + re.sub("%[0-9a-f]{2}", lambda m: m.group(0).upper(), p[k:].lower()),
    "trailing_slash": lambda p, k: p[:-1] if p[-1:] == "/" and p[-2:-1] not in ("", "/") else p,
}


class _Path(_Rule):
    """Under ``scope`` a rewrite of the path (:data:`_PATH`): the case rule lower-cases it below the scope."""

    def __init__(self, r):
        _Rule.__init__(self, r)
        self.scope, self.path = _scope(r, query=False), _PATH[r.get("type")]

    def rewrite(self, url):
        head, path, tail = _split_url(url)
        ok = head and path.startswith(self.scope) and path[len(self.scope) :][:1] in ("", "/")  # core.scope.in_scope
        return head + self.path(path, len(self.scope)) + tail if ok else url  # (case: percent-escapes stay upper)


_CLASSES = {
    "digits": r"[0-9]+",
    "hex": r"(?=[a-f]*[0-9])(?=[0-9]*[a-f])[0-9a-f]+|(?=[A-F]*[0-9])(?=[0-9]*[A-F])[0-9A-F]+",
    "word": r"[A-Za-z0-9]+",
}
_PH = re.compile(r"\{(" + "|".join(_CLASSES) + r")\}")
_SAMPLES = {"digits": ("7", "20"), "hex": ("0a", "3F"), "word": ("x", "7", "a1")}


class _Pattern(_Substring):
    """A substring rule with one typed placeholder {digits}/{hex}/{word} (dustbuster.core.model.pattern): the
    first token-aligned match (matches may overlap) whose rewrite differs from it is rewritten."""

    def __init__(self, r):
        _Substring.__init__(self, r)
        found, copied, ph = _PH.findall(self.alpha), _PH.findall(self.beta), _PH.search(self.alpha)
        if len(found) != 1 or (copied and copied != found) or self.alpha == self.beta:
            raise ValueError("a pattern rule has one placeholder in alpha, beta copies it or none")
        self.cls, edge = found[0], "(?<![A-Za-z0-9])(?P<v>%s)(?![A-Za-z0-9])" % _CLASSES[found[0]]
        body = re.escape(self.alpha[: ph.start()]) + edge + re.escape(self.alpha[ph.end() :])
        self.regex = re.compile(
            ("(?<![A-Za-z0-9])" if self.alpha[:1] in _ALNUM else "")
            + body
            + ("(?![A-Za-z0-9])" if self.alpha[-1:] in _ALNUM else "")
        )

    def feeds(self):
        """As dustbuster.core.canon.rulecheck: an output holds a new match that rewrites differently."""
        return any(self.apply(o) != o for o in (_PH.sub(v, self.beta) for v in _SAMPLES[self.cls]))

    def apply(self, w):
        k = int(w[:1] == _START)  # unanchored: from the path on, past scheme://authority (as the core)
        m = self.regex.search(w, 0 if self.alpha[:1] == _START else k + len(_split_url(w[k:])[0]))
        while m is not None:
            out = _PH.sub(lambda _: m.group("v"), self.beta)  # noqa: B023 - sub calls it at once, with this m
            if out != m.group(0):
                return w[: m.start()] + out + w[m.end() :]
            m = self.regex.search(w, m.start() + 1)
        return w


_PLAIN = re.compile(r"(?:[A-Za-z0-9._~:!$'()*,;@-]|%(?![2][Ff35]|[3][Ff])[0-9A-Fa-f]{2})"
                    r"(?:[A-Za-z0-9._~:!$'()*,;@/-]|%(?![2][Ff35]|[3][Ff])[0-9A-Fa-f]{2})*")


class _QueryPath(_Rule):
    """``scope?name=X`` -> ``prefix X``, the rest of the query kept (dustbuster.core.model.ruletypes.querypath):
    on a URL whose path is ``scope`` with ``name`` once and a value that reads the same in a path."""

    def __init__(self, r):
        _Rule.__init__(self, r)
        self.scope, self.name, self.prefix = r["scope"], r["name"], r["prefix"]
        for p in (self.scope, self.prefix):
            if not isinstance(p, str) or p[:1] != "/" or "//" in p or any(c in p for c in "?#&= \t\r\n"):
                raise ValueError("a query_path rule's scope and prefix are paths, not %r" % (p,))
        if not isinstance(self.name, str) or not re.fullmatch(r"[^&=?#/\s]+", self.name):
            raise ValueError("bad parameter name %r" % (self.name,))

    def rewrite(self, url):
        head, path, tail = _split_url(url)
        if not head or path != self.scope or not tail:
            return url
        query, hash_, frag = tail[1:].partition("#")
        items, key = query.split("&"), self.name + "="
        hits = [k for k, it in enumerate(items) if it.startswith(key) or it == self.name]
        value = items[hits[0]][len(key) :] if len(hits) == 1 else ""
        if not _PLAIN.fullmatch(value) or any(seg in (".", "..") for seg in value.split("/")):
            return url
        rest = [it for k, it in enumerate(items) if k != hits[0] and it]
        return head + self.prefix + value + ("?" + "&".join(rest) if rest else "") + hash_ + frag


#: every rule type, in canonization order (each core type's ``rank``, dustbuster.core.model.ruletype.REGISTRY)
_TYPES = dict(parameter=_Param, query=_Query, case=_Path, trailing_slash=_Path, substring=_Substring,
              query_path=_QueryPath, pattern=_Pattern)


def _rule(r):
    """The rule of one JSON object; ValueError (KeyError, TypeError) when it is not one."""
    return (_TYPES.get(r.get("type", "substring")) or _fail("unknown rule type %r" % (r.get("type"),)))(r)


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


_PROBE_PATHS = (
    "/",
    "/index.html",
    "/a/b/c.html",
    "/a/b/",
    "/story?id=1",
    "/story_1",
    "/x?a=1&b=2",
    "/search?q=dust&page=2&sid=0a1b2c&utm_source=feed",
    "/p/1/2/3?x=&y",
    "/%7Euser/file.txt",
)


def _version(doc):  # an integer in [0, 2^53), 0 when absent
    v = 0 if doc.get("version") is None else doc["version"]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 <= v < 2**53 and v == int(v)):
        raise Rejected("bad_version", "'version' must be a non-negative integer below 2^53")
    return int(v)


class RuleSet:
    """One site's rules in canonization order (a RuleSet document or a ``mine --json`` output),
    admitted as the service admits it (docs/canonizer.md "Admission"; a ``mine`` document's
    candidates only with ``unvalidated=True``), or :class:`Rejected`.  ma=10: DEFAULT_MA."""

    def __init__(self, doc, ma=10, normalize=None, unvalidated=False, site=None, keys=None, signed=False):
        if not isinstance(doc, dict):
            raise Rejected("bad_record", "a rule set must be a JSON object")
        if keys:
            _verify(doc, _keys(keys))
        keys = keys or signed  # verified here or by the caller (RuleBook): its host rules may join any alias
        self.doc = doc
        lists = [doc.get(key) or [] for key in ("param_rules", "general_rules", "rules")]
        if not all(isinstance(x, list) for x in lists):
            raise Rejected("bad_record", "'rules', 'param_rules' and 'general_rules' must be lists")
        if sum(map(len, lists)) > 5000:
            raise Rejected("too_many_rules", "more than 5000")
        self.site, self.version, self.ma, self.normalize = (
            doc.get("site") if site is None else site,
            _version(doc),
            ma,
            normalize,
        )
        self.rules = [self._admit(r, unvalidated) for r in lists[0] + lists[1] + lists[2]]
        site = (self.site or "").lower() if isinstance(self.site, str) else ""
        self.hosts = _set_hosts(site, self.rules, bool(keys))  # the site, then the aliases its host rules join
        if "param_rules" in doc or "general_rules" in doc or str(doc.get("schema")).startswith("dustbuster/mine@"):
            self.rules.sort(key=lambda r: (list(_TYPES).index(r.kind), getattr(r, "action", "") == "sort"))
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
        homes = self.hosts or ((site,) if site else ())
        hosts += [h for h in homes[1:] if h not in hosts]
        for r in self.rules:  # each rule alone on URLs built from it (dustbuster.core.canon.admission.rule_probes)
            _verdict([r], _rule_probes(hosts, r, homes), homes, self.ma)
        urls = [s + "://" + h + p for h in hosts for s in ("http", "https") for p in _PROBE_PATHS]
        for ev in (r.get("evidence") for r in raw):
            urls += [
                x[0]
                for x in ((ev.get("samples") or [])[:5] if isinstance(ev, dict) else [])
                if isinstance(x, list) and x and isinstance(x[0], str)
            ]
        _verdict(self.rules, dict.fromkeys(urls), homes, self.ma)

    def canonize(self, url):
        """The canonical form of ``url`` (thesis Figure 5.5; at most ``ma`` iterations)."""
        url = _normalized(self.normalize, url)
        return url if _START in url or _END in url or not self.rules else _run(self.rules, url, self.ma)[0]

    __call__ = canonize


def _normalized(normalize, url):
    try:
        return url if normalize is None else normalize(url)
    except Exception:  # noqa: BLE001 - an unparseable URL is kept as it is, as the service does
        return url


def _abs_host(url):  # the host of an absolute http(s) URL, lower case; None when ``url`` is not one
    return (_host(url) or None) if url.partition("://")[0].lower() in ("http", "https") else None


def _within(host, site):
    return host == site or host.endswith("." + site)


def _covered(host, homes):
    return any(_within(host, h) for h in homes)


_ORIGIN = re.compile(r"(?i)https?://([a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?|\[[0-9a-f:.]+\])(?::\d{1,5})?/\Z")


def _origin_host(text):
    m = _ORIGIN.match(text, 1) if text[:1] == _START else None
    return m.group(1).lower() if m else None


def _set_hosts(site, rules, signed):
    """The hosts a set covers, as dustbuster.core.model.hostrules.set_hosts: the site, then each host
    a host rule (``^scheme://host/`` → ``^scheme://host2/``) joins to a covered host — any host in a
    signed set, only the ``www.`` twin in an unsigned one."""
    pairs = [(_origin_host(r.alpha), _origin_host(r.beta)) for r in rules if type(r) is _Substring]
    pairs = [(a, b) for a, b in pairs if a and b]
    hosts, grew = ([site] if site else []), bool(site)
    while grew:
        grew = False
        for a, b in pairs:
            for new, old in ((b, a), (a, b)):
                if _covered(new, hosts) or not _covered(old, hosts):
                    continue
                if signed or any(new == "www." + h or h == "www." + new for h in hosts):
                    hosts.append(new)
                    grew = True
    return tuple(hosts)


def _verdict(rules, urls, homes, ma):
    """Rejected when ``rules`` do not converge on a URL, break it, move it off the site or make an
    https URL http (as the core)."""
    bad = lambda x: any(c <= " " or c in "\x7f\\" for c in x)  # noqa: E731
    for u in urls:
        out, converged = _run(rules, u, ma)
        before, after = _abs_host(u), _abs_host(out)
        if not converged:
            raise Rejected("non_converging", u)
        if before is not None and (after is None or (bad(out) and not bad(u))):
            raise Rejected("not_a_url", u + " becomes " + out[:200])
        if homes and before and after and _covered(before, homes) and not _covered(after, homes):
            raise Rejected("off_site", u + " moves to host " + after)
        if before is not None and u[:8].lower() == "https://" and out[:7].lower() == "http://":
            raise Rejected("downgrade", u + " becomes " + out[:200])


def _rule_probes(hosts, r, homes=()):
    """At most 8 URLs of the site from rule ``r``, as dustbuster.core.canon.admission.rule_probes builds them."""
    h, a = hosts[0], getattr(r, "alpha", "")
    a = a.replace("{%s}" % r.cls, _SAMPLES[r.cls][0]) if isinstance(r, _Pattern) else a
    start, end = a[:1] == _START, a[-1:] == _END
    core, head = a[int(start) : len(a) - int(end)], "http://%s/" % h
    if not isinstance(r, _Substring):
        name = getattr(r, "name", "a")
        p, q = r.scope.partition("?")[0], "".join(i + "&" for i in r.scope.partition("?")[2].split("&") if i)
        urls = ["http://%s%s/x?%s%s=1&b=2" % (h, p, q, name), "https://%s%s?%sb=2&%s=1" % (hosts[1], p, q, name)]
    elif core and not start:
        urls = [
            head[:-1] + core,
            "https://%s/a%s%s" % (hosts[1], "" if core[0] in "/?&;" else "/", core),
            "http://%s/a?q=1&%s" % (h, core),
        ]
        k = next((k for k in range(min(len(head), len(core) - 1), 0, -1) if head.endswith(core[:k])), 0)
        urls += [head + core[k:]] if k else []
        k = next((k for k in range(min(len(head) - 7, len(core)), 0, -1) if core.endswith(head[7 : 7 + k])), 0)
        urls += [("" if "://" in core else "http://") + core + head[7 + k :]] if k else []
    else:
        urls = [core] if core else []
    tail = "" if end or not isinstance(r, _Substring) else "/x?sid=1" if core[-1:] in _ALNUM else "x?sid=1"
    urls = dict.fromkeys(u + tail for u in urls)
    return [u for u in urls if _abs_host(u) and _covered(_abs_host(u), homes or (h,)) and _START not in u and _END not in u][:8]


def _bound(site, doc, signed):
    """Rejected ``wrong_site`` unless ``doc`` names ``site`` (a signed set must name one)."""
    named = doc.get("site")
    if (named is not None or signed) and (not isinstance(named, str) or named.strip().lower() != site.strip()):
        raise Rejected("wrong_site", "the set is for %r, not for %r" % (named, site))


class RuleBook:
    """Several sites' rule sets; a URL's site is its host or the nearest parent domain that has one.
    ``keys``: trusted public keys (base64 or PEM; several for a rotation), a set must be signed by
    one; a version more than ``max_skew_s`` ahead of ``clock()`` in ms is refused."""

    def __init__(self, ma=10, normalize=None, keys=None, clock=time.time, max_skew_s=86400):
        self.ma, self.normalize, self.sites, self.clock, self.skew = ma, normalize, {}, clock, max_skew_s * 1000
        self.aliases = {}
        self.keys = _keys(keys)

    def update(self, site, doc):
        """Apply a rules-topic record (None: a tombstone), or raise :class:`Rejected` and keep the
        site's set; the same version again changes nothing (``version_reused``: other content)."""
        site = site.lower()
        if doc is None:
            if self.keys:  # a tombstone cannot be signed: a signed set with no rules removes a site's rules
                raise Rejected("unsigned_deletion", "a tombstone for %r carries no signature" % site)
            self.sites.pop(site, None)
            self._index()
            return
        if self.keys and isinstance(doc, dict):
            _verify(doc, self.keys)
        if isinstance(doc, dict):
            _bound(site, doc, bool(self.keys))
        held, v = self.sites.get(site), _version(doc) if isinstance(doc, dict) else None
        if v is not None and v > self.clock() * 1000 + self.skew:
            raise Rejected("version_from_future", "v%d is ahead of this consumer's clock" % v)
        if held is not None and v is not None and v <= held.version:
            if v < held.version:
                raise Rejected("stale_version", "v%d is older than the held v%d" % (v, held.version))
            if _content(doc) != _content(held.doc):
                raise Rejected("version_reused", "v%d is held with other content" % v)
            return
        self.sites[site] = RuleSet(doc, self.ma, site=site, signed=bool(self.keys))
        self._index(site, held.hosts[1:] if held is not None else (), self.sites[site].hosts[1:])

    def _index(self, site=None, old=(), new=()):
        """alias host -> site (RuleSet.hosts), looked up after every site's own host; the first site in
        sort order wins a host two sets claim.  Rebuilt only when a site gives up a host it held."""
        if site is None or any(self.aliases.get(h) == site for h in old if h not in new):
            self.aliases = {}
            for name in sorted(self.sites):
                for h in self.sites[name].hosts[1:]:
                    self.aliases.setdefault(h, name)
            return
        for h in new:
            if h not in self.aliases or site < self.aliases[h]:
                self.aliases[h] = site

    def canonize(self, url, site=None):
        url = _normalized(self.normalize, url)
        rs = self.sites.get(site.lower()) if site else None
        if rs is None and not site:
            aliases = self.aliases
            for table in (self.sites, aliases) if aliases else (self.sites,):
                host = _host(url)
                while host and rs is None:
                    rs = self.sites.get(host if table is self.sites else aliases.get(host, ""))
                    rs = rs if rs is not None and rs.rules else None  # an empty set hides no parent's rules
                    host = host.partition(".")[2]
        return rs.canonize(url) if rs is not None else url


def _host(url):
    """The host of ``url`` (after ``scheme://``, without user and port), lower case; "" if none."""
    scheme, sep, rest = url.partition("://")
    auth = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].rpartition("@")[2]
    return (auth[: auth.find("]") + 1] if auth.startswith("[") else auth.split(":", 1)[0]).lower() if sep else ""


def load(path, ma=10, normalize=None, unvalidated=False, keys=None):
    """A :class:`RuleSet` from a JSON file (``unvalidated``: ``mine --json`` candidates; ``keys``)."""
    with open(path, encoding="utf-8") as fh:
        return RuleSet(json.load(fh), ma, normalize, unvalidated, keys=keys)


def canonize(url, doc, ma=10, unvalidated=False):  # one-shot: canonize ``url`` with the rule set ``doc`` (a dict)
    return RuleSet(doc, ma, unvalidated=unvalidated).canonize(url)


# ---- signed rule sets (dustbuster.core.model.signing): Ed25519 verification from RFC 8032 §5.1
def _content(doc):
    """The bytes a signature covers: the document but "signature" and "__faust", sorted, compact."""
    return json.dumps(
        {k: v for k, v in doc.items() if k not in ("signature", "__faust")},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=True,
    ).encode("ascii")


def _keys(texts):
    """Key id (SHA-256 of the raw key, 16 hex digits) -> raw 32-byte key, from base64 or PEM texts."""
    out = {}
    for t in [texts] if isinstance(texts, str) else texts or ():
        raw = base64.b64decode("".join(x for x in t.strip().splitlines() if not x.startswith("-----")))
        raw = raw[12:] if len(raw) == 44 and raw[:12] == bytes.fromhex("302a300506032b6570032100") else raw
        if len(raw) != 32:
            raise ValueError("an Ed25519 public key has 32 bytes, not %d" % len(raw))
        out[hashlib.sha256(raw).hexdigest()[:16]] = raw
    return out


def _verify(doc, keys):
    sig = doc.get("signature")
    if sig is None:
        raise Rejected("unsigned", "a trusted key is configured and the set carries no signature")
    kid = sig.get("key_id") if isinstance(sig, dict) and sig.get("alg") == "ed25519" else None
    try:
        ok = kid in keys and ed25519_verify(keys[kid], _content(doc), base64.b64decode(sig.get("sig"), validate=True))
    except (TypeError, ValueError):  # binascii.Error is a ValueError
        ok = False
    if not ok:
        raise Rejected("bad_signature", "not signed by a trusted key (key id %r)" % (kid,))


_P, _L = 2**255 - 19, 2**252 + 27742317777372353535851937790883648493  # the field prime, the group order
_D, _I = -121665 * pow(121666, _P - 2, _P) % _P, pow(2, (_P - 1) // 4, _P)  # d = -121665/121666, sqrt(-1)


def _add(a, b):
    """Point addition in extended coordinates (X, Y, Z, T), RFC 8032 §5.1.4."""
    A, B = (a[1] - a[0]) * (b[1] - b[0]) % _P, (a[1] + a[0]) * (b[1] + b[0]) % _P
    C, D = 2 * a[3] * b[3] * _D % _P, 2 * a[2] * b[2] % _P
    E, F, G, H = B - A, D - C, D + C, B + A
    return E * F % _P, G * H % _P, F * G % _P, E * H % _P


def _mul(s, p):
    q = (0, 1, 1, 0)
    while s:
        q, p, s = (_add(q, p) if s & 1 else q), _add(p, p), s >> 1
    return q


def _point(b):
    """The point encoded by 32 bytes (RFC 8032 §5.1.3), x2 = (y^2 - 1) / (d y^2 + 1); None when none."""
    sign, y = int.from_bytes(b, "little") >> 255, int.from_bytes(b, "little") & ((1 << 255) - 1)
    x2 = (y * y - 1) * pow(_D * y * y + 1, _P - 2, _P) % _P
    x = pow(x2, (_P + 3) // 8, _P)
    x = x if (x * x - x2) % _P == 0 else x * _I % _P
    if y >= _P or (x * x - x2) % _P or (x == 0 and sign):
        return None
    x = _P - x if x & 1 != sign else x
    return x, y, 1, x * y % _P


_B = _point((4 * pow(5, _P - 2, _P) % _P).to_bytes(32, "little"))  # the base point: y = 4/5, x even


def ed25519_verify(public, message, signature):
    """True when ``signature`` (64 bytes) is ``public``'s (32 bytes) Ed25519 signature of ``message``
    (RFC 8032 §5.1.7, as OpenSSL checks it: S below the group order, R' = [S]B - [k]A encodes to R)."""
    A = _point(public) if len(public) == 32 and len(signature) == 64 else None
    s = int.from_bytes(signature[32:], "little")
    if A is None or s >= _L:
        return False
    k = int.from_bytes(hashlib.sha512(signature[:32] + public + message).digest(), "little") % _L
    X, Y, Z, _ = _add(_mul(s, _B), _mul(k, (_P - A[0], A[1], A[2], _P - A[3])))
    zi = pow(Z, _P - 2, _P)
    return (Y * zi % _P | (X * zi % _P & 1) << 255).to_bytes(32, "little") == signature[:32]


canonicalize = canonize  # the name this module had before the project settled on "canonize"; kept for crawlers
