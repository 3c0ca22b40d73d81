"""One URL's record (:class:`dustbuster.core.urls.urllist.URLInfo`) as stored: one JSON object, the same
bytes in the streaming engine's key-value store and in the URL changelog topic, so a record is
encoded once per message (orjson: ~0.5 µs).  Short keys: ``i`` the URL's id in its site (first-seen
order), ``h`` hits, ``lo``/``hi`` the size interval, ``d`` digests, ``k`` sketches, ``f``/``l``
first and last seen (unix seconds).  A changelog record without ``i`` (written by an older version)
still decodes."""

from __future__ import annotations

import orjson

from dustbuster.core.urls.urllist import URLInfo


def info_to_json(info: URLInfo, uid: int | None = None) -> dict:
    """A URL's record as a JSON object (short keys; ``i`` when the id is given)."""
    obj = {"h": info.hits, "lo": info.lo, "hi": info.hi, "d": sorted(info.digests) if info.digests else [],
           "k": sorted(list(x) for x in info.sketches) if info.sketches else [], "f": info.first_seen,
           "l": info.last_seen}
    if uid is not None:
        obj["i"] = uid
    return obj


def info_from_json(obj: dict) -> URLInfo:
    """The record of :func:`info_to_json`'s JSON."""
    return URLInfo(int(obj.get("h", 0)), obj.get("lo"), obj.get("hi"), set(obj["d"]) if obj.get("d") else None,
                   {tuple(x) for x in obj["k"]} if obj.get("k") else None, obj.get("f"), obj.get("l"))


def enc_info(uid: int, info: URLInfo) -> bytes:
    """The stored value of a URL (and its changelog record): its id and its record."""
    return orjson.dumps(info_to_json(info, uid))


def dec_info(raw: bytes) -> tuple[int, URLInfo]:
    """(id, record) of a value written by :func:`enc_info`; raises ValueError on anything else."""
    obj = orjson.loads(raw)
    if not isinstance(obj, dict) or not isinstance(obj.get("i"), int):
        raise ValueError("not a URL record")
    return obj["i"], info_from_json(obj)
