"""Small pure helpers for a URL's query string (thesis §5.3's "inline parameters").

A parameter is an item of the query, which is the part after the first ``?``; items are separated
by ``&``; an item is ``name=value`` (the paper's format) or a bare ``name`` (kept, never a rule
target).  Order and duplicates are preserved; nothing is decoded or re-encoded.
"""

from __future__ import annotations

from typing import Collection

Item = tuple[str, "str | None"]


def split(url: str) -> tuple[str, list[Item] | None]:
    """``(base, items)``; ``items`` is None when the URL has no ``?``."""
    q = url.find("?")
    if q < 0:
        return url, None
    items: list[Item] = []
    query = url[q + 1:]
    if query:
        for part in query.split("&"):
            eq = part.find("=")
            items.append((part, None) if eq < 0 else (part[:eq], part[eq + 1:]))
    return url[:q], items


def join(base: str, items: list[Item] | None) -> str:
    if items is None:
        return base
    if not items:
        return base  # an emptied query loses its '?'
    return base + "?" + "&".join(n if v is None else f"{n}={v}" for n, v in items)


def remove_param(url: str, name: str, values: Collection[str] = ()) -> str:
    """Drop every ``name=...`` item (only those whose value is one of ``values`` when given); a
    query left empty loses its ``?``."""
    base, items = split(url)
    if not items:
        return url
    if values:
        kept = [(n, v) for n, v in items if not (n == name and v is not None and v in values)]
    else:
        kept = [(n, v) for n, v in items if not (n == name and v is not None)]
    if len(kept) == len(items):
        return url
    return join(base, kept)


def replace_param(url: str, name: str, value: str) -> str:
    """Set the value of every ``name=...`` item to ``value``."""
    base, items = split(url)
    if not items:
        return url
    changed = False
    out: list[Item] = []
    for n, v in items:
        if n == name and v is not None and v != value:
            out.append((n, value))
            changed = True
        else:
            out.append((n, v))
    return join(base, out) if changed else url
