"""One URL's record (:class:`dustbuster.core.urllist.URLInfo`) as stored: packed with its id for the
streaming engine's key-value store, and as JSON for the URL changelog topic."""

from __future__ import annotations

import marshal

from .urllist import URLInfo


def enc_info(uid: int, info: URLInfo) -> bytes:
    """The stored value of a URL: its id and its record (marshal)."""
    return marshal.dumps((uid, info.hits, info.lo, info.hi, sorted(info.digests or ()), sorted(info.sketches or ()),
                          info.first_seen, info.last_seen))


def dec_info(raw: bytes) -> tuple[int, URLInfo]:
    """(id, record) of a stored value written by :func:`enc_info`."""
    uid, hits, lo, hi, dig, sk, first, last = marshal.loads(raw)
    return uid, URLInfo(hits, lo, hi, set(dig) if dig else None, {tuple(x) for x in sk} if sk else None, first, last)


def info_to_json(info: URLInfo) -> dict:
    """A URL's record as the URL changelog's JSON (short keys)."""
    return {"h": info.hits, "lo": info.lo, "hi": info.hi, "d": sorted(info.digests or ()),
            "k": sorted(list(x) for x in (info.sketches or ())), "f": info.first_seen, "l": info.last_seen}


def info_from_json(obj: dict) -> URLInfo:
    """The record of :func:`info_to_json`'s JSON."""
    return URLInfo(int(obj.get("h", 0)), obj.get("lo"), obj.get("hi"), set(obj["d"]) if obj.get("d") else None,
                   {tuple(x) for x in obj["k"]} if obj.get("k") else None, obj.get("f"), obj.get("l"))
