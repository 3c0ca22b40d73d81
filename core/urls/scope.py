"""Path scopes of the generalised rules (beyond the papers; docs/rules.md "Scopes").

A rule's ``scope`` says where on the site it applies: ``""`` is every URL (the thesis' global
parameter rules, §5.3); otherwise a path that starts with ``/``.  A URL is in scope ``S`` when its
path equals ``S`` or continues it at a segment boundary: ``/wiki`` covers ``/wiki``, ``/wiki/``
and ``/wiki/Start``, not ``/wikipedia``; ``/report/1`` covers one report and what lies below it.
A scope never ends with ``/`` (``/wiki/`` is written ``/wiki``) and ``/`` alone is the global scope
``""``.  Paths are compared as they appear in the log (no decoding).

**Query-parameter scopes** (beyond the papers): a scope may also fix the values of named
query parameters, written after the path as a query: ``/index.php?title=Special:UserLogin``,
``?do=edit`` (every path), ``/w?action=history&uselang=en``.  A URL is in such a scope when its
path is in the path part and, for every ``name=value`` of the scope, its query has an item
``name=value`` and no item ``name=`` with another value (a repeated name with two values is in no
scope of that name: which one the server reads is its own business).  Values are compared as they
appear (no decoding); names are unique and sorted in the scope's text, so equal scopes are equal
strings.  Wiki engines name the page and the tool in the query (``index.php?title=…&action=…``,
``doku.php?id=…&do=…``): the scope a parameter is a no-op in is often one value of another one.
:func:`url_in_scope` is the one membership test: rules apply through it, and the validator draws
its samples among the URLs a rule changes, so only among URLs in its scope.
"""

from __future__ import annotations

from dustbuster.core.errors import RuleError


def split_url(url: str) -> tuple[str, str, str]:
    """``(head, path, tail)`` of an absolute URL: ``scheme://authority``, the path (``""`` when
    the URL has none), ``?query`` or ``""``.  A string without ``://`` is all path and query."""
    q = url.find("?")
    body, tail = (url, "") if q < 0 else (url[:q], url[q:])
    sep = body.find("://")
    if sep < 0:
        return "", body, tail
    slash = body.find("/", sep + 3)
    if slash < 0:
        return body, "", tail
    return body[:slash], body[slash:], tail


def url_path(url: str) -> str:
    return split_url(url)[1]


def in_scope(path: str, scope: str) -> bool:
    """True when ``path`` lies in ``scope`` (module docstring)."""
    if not scope:
        return True
    if not path.startswith(scope):
        return False
    return len(path) == len(scope) or path[len(scope)] == "/"


def parse_scope(scope: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """``(path part, ((name, value), ...))`` of a scope (module docstring); no checks."""
    path, q, query = scope.partition("?")
    if not q:
        return scope, ()
    return path, tuple((n, v) for n, _, v in (item.partition("=") for item in query.split("&")))


def make_scope(path: str, fixed: "tuple[tuple[str, str], ...] | list[tuple[str, str]]" = ()) -> str:
    """The scope text of a path part and fixed parameter values (names sorted)."""
    if not fixed:
        return path
    return path + "?" + "&".join(f"{n}={v}" for n, v in sorted(fixed))


def query_fixed(url: str, fixed: "tuple[tuple[str, str], ...]") -> bool:
    """True when the URL's query fixes every ``(name, value)`` (module docstring)."""
    body = url.partition("#")[0]
    q = body.find("?")
    if q < 0:
        return False
    seen: dict[str, str] = {}
    for part in body[q + 1:].split("&"):
        name, eq, value = part.partition("=")
        if eq and seen.setdefault(name, value) != value:
            seen[name] = "\x00"  # two values: in no scope of this name
    return all(seen.get(n) == v for n, v in fixed)


def url_in_scope(url: str, scope: str) -> bool:
    """True when ``url`` lies in ``scope`` (path part and fixed parameters, module docstring)."""
    if not scope:
        return True
    if "?" not in scope:
        return in_scope(url_path(url), scope)
    path, fixed = parse_scope(scope)
    return in_scope(url_path(url), path) and query_fixed(url, fixed)


def scope_covers(outer: str, inner: str) -> bool:
    """True when every URL of scope ``inner`` lies in ``outer``: the path part within outer's and
    every fixed value of outer fixed by inner too."""
    op, of = parse_scope(outer)
    ip, inf = parse_scope(inner)
    return in_scope(ip, op) and set(of) <= set(inf)


def scope_ancestors(scope: str) -> list[str]:
    """The scopes that cover ``scope`` along its path, widest first, ending with ``scope``: for a
    path scope :func:`scopes_of`; for ``P?K`` the scopes ``S?K`` of every path scope S of P (the
    same fixed values, wider paths)."""
    path, fixed = parse_scope(scope)
    return [make_scope(s, fixed) for s in scopes_of(path)]


#: the deepest scope mined (segments): deeper paths get the scopes of their first 16 segments
MAX_SCOPE_DEPTH = 16


def scopes_of(path: str) -> list[str]:
    """Every scope that covers ``path``, widest first: ``""``, then ``/a``, ``/a/b``, ... and the
    path itself (without a trailing ``/``).  ``/a/b/c`` → ``["", "/a", "/a/b", "/a/b/c"]``.  A
    prefix that reaches an empty segment (``//a``, ``/a//b``) is no scope, nor anything below it; at most
    :data:`MAX_SCOPE_DEPTH` segments deep (a deeper path is covered by its ancestors only)."""
    out = [""]
    k = path.find("/", 1)
    while k > 0 and len(out) <= MAX_SCOPE_DEPTH:
        if path[k - 1] == "/":
            return out  # an empty segment: nothing below it is a scope
        out.append(path[:k])
        k = path.find("/", k + 1)
    whole = path.rstrip("/")
    if whole and whole != out[-1] and len(out) <= MAX_SCOPE_DEPTH and "//" not in whole:
        out.append(whole)
    return out


def check_scope(scope: str) -> str:
    """The scope, or RuleError: ``""`` or a path starting with ``/``, not ending with ``/``,
    without a fragment or control character; then optionally ``?name=value&…`` (names not empty,
    unique and sorted, no ``&=?#`` in a name, no ``&#?`` in a value)."""
    if not isinstance(scope, str):
        raise RuleError(f"a scope must be a string, not {type(scope).__name__}")
    if scope == "":
        return scope
    path, q, query = scope.partition("?")
    if path and (not path.startswith("/") or path.endswith("/")):
        raise RuleError(f"a scope is '' or a path like /wiki (no trailing /), not {scope!r}")
    if "#" in scope or any(ord(c) < 0x20 for c in scope) or (q and not query):
        raise RuleError(f"bad scope {scope!r}")
    if q:
        _, fixed = parse_scope(scope)
        names = [n for n, _ in fixed]
        if (any(not n or any(c in n for c in "&=?#") or "?" in v for n, v in fixed)
                or names != sorted(set(names)) or any("=" not in it for it in query.split("&"))):
            raise RuleError(f"bad query-parameter scope {scope!r} (name=value items, names unique and sorted)")
    return scope


def scope_names(scope: str) -> frozenset[str]:
    """The parameter names a scope fixes (empty for a path scope)."""
    return frozenset(n for n, _ in parse_scope(scope)[1])


def scope_text(scope: str) -> str:
    """`` under /wiki`` (`` where do=edit`` for ``?do=edit``) for a display string, ``""`` for the
    global scope."""
    if not scope:
        return ""
    return f" under {scope}" if not scope.startswith("?") else f" where {scope[1:]}"
