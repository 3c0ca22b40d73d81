"""Path scopes of the generalised rules (beyond the papers; docs/rules.md "Scopes").

A rule's ``scope`` says where on the site it applies: ``""`` is every URL (the thesis' global
parameter rules, §5.3); otherwise a path that starts with ``/``.  A URL is in scope ``S`` when its
path equals ``S`` or continues it at a segment boundary: ``/wiki`` covers ``/wiki``, ``/wiki/``
and ``/wiki/Start``, not ``/wikipedia``; ``/report/1`` covers one report and what lies below it.
A scope never ends with ``/`` (``/wiki/`` is written ``/wiki``) and ``/`` alone is the global scope
``""``.  Paths are compared as they appear in the log (no decoding).
"""

from __future__ import annotations

from .errors import RuleError


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


def url_in_scope(url: str, scope: str) -> bool:
    return not scope or in_scope(url_path(url), scope)


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
    without a query, fragment or control character."""
    if not isinstance(scope, str):
        raise RuleError(f"a scope must be a string, not {type(scope).__name__}")
    if scope == "":
        return scope
    if not scope.startswith("/") or scope.endswith("/"):
        raise RuleError(f"a scope is '' or a path like /wiki (no trailing /), not {scope!r}")
    if any(c in scope for c in "?#") or any(ord(c) < 0x20 for c in scope):
        raise RuleError(f"bad scope {scope!r}")
    return scope


def scope_text(scope: str) -> str:
    """`` under /wiki`` for a display string, ``""`` for the global scope."""
    return f" under {scope}" if scope else ""
