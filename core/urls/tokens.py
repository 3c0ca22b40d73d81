"""URL tokens (WWW 2007 paper §3).

A URL is a string over an alphabet of tokens: maximal runs of alphanumeric characters and single
non-alphanumeric characters.  Every URL starts with the special token ``^`` and ends with ``$``.

Choices (docs/semantics.md):

* "alphanumeric" means ASCII ``[A-Za-z0-9]``; every other character, including each byte of a
  percent-escape's ``%`` and any non-ASCII character, is a one-character token (``%2F`` is the
  tokens ``%`` and ``2F``).
* Internally the sentinels are the control characters ``\\x02`` (``^``) and ``\\x03`` (``$``),
  which never occur in accepted URLs, so a literal ``^`` or ``$`` in a URL is never confused with
  an anchor.  :func:`display` renders them as ``^`` and ``$``.
* Matching is token-aligned: a substring occurs in a URL only where it starts and ends on token
  boundaries ("story" does not occur in "/mystory_1").
"""

from __future__ import annotations

import re

START = "\x02"
END = "\x03"
_TOKEN_RE = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9]", re.DOTALL)
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


def wrap(url: str) -> str:
    """The internal form ``^url$`` of a URL."""
    return START + url + END


def tokenize(s: str) -> list[str]:
    """Tokens of ``s`` (no sentinels are added; call :func:`wrap` first for a whole URL)."""
    return _TOKEN_RE.findall(s)


def is_boundary(s: str, k: int) -> bool:
    """True when character position ``k`` of ``s`` lies between two tokens (or at an end)."""
    if k <= 0 or k >= len(s):
        return True
    return not (s[k - 1] in _ALNUM and s[k] in _ALNUM)


def token_count(s: str) -> int:
    return len(_TOKEN_RE.findall(s))


def find_aligned(haystack: str, needle: str, start: int = 0) -> int:
    """First token-aligned occurrence of ``needle`` in ``haystack`` at or after ``start``, or -1.

    The empty needle occurs at every token boundary.
    """
    if not needle:
        for k in range(start, len(haystack) + 1):
            if is_boundary(haystack, k):
                return k
        return -1
    n = len(needle)
    k = haystack.find(needle, start)
    while k != -1:
        if is_boundary(haystack, k) and is_boundary(haystack, k + n):
            return k
        k = haystack.find(needle, k + 1)
    return -1


def display(internal: str) -> str:
    """Human form: sentinels shown as ``^`` and ``$``."""
    return internal.replace(START, "^").replace(END, "$")


def shrink_key(s: str) -> tuple[int, tuple[str, ...]]:
    """Order key for the paper's α > β (§5.3): more tokens, then lexicographically later tokens."""
    toks = tokenize(s)
    return (len(toks), tuple(toks))


def shrinks(alpha: str, beta: str) -> bool:
    """True when the rule alpha → beta shrinks the URL (alpha > beta in the paper's order)."""
    return shrink_key(alpha) > shrink_key(beta)
