"""Strict JSON for untrusted input: :func:`loads_strict` parses and :func:`check_json_value`
checks a parsed value, raising nothing but :class:`dustbuster.core.errors.ParseError` with a reason.

Python's parser accepts ``NaN``/``Infinity``, turns ``1e400`` into ``inf``, builds integers of
thousands of digits and recurses until RecursionError on deep nesting; none of that is JSON a
record of ours carries, and each of them would crash a consumer downstream.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from dustbuster.core.errors import ParseError

#: the deepest JSON nesting any of our records needs (a rule's evidence is the deepest: ~4)
MAX_JSON_DEPTH = 32
#: numbers a record may carry: finite floats, integers of 64 bits (min-hashes are unsigned 64-bit)
MAX_JSON_INT = 2**64
_SURROGATE = re.compile("[\ud800-\udfff]")


def _no_constant(name: str) -> Any:
    raise ParseError("non_finite_number", f"{name} is not a JSON number")


def loads_strict(text: str | bytes, max_depth: int = MAX_JSON_DEPTH, surrogates: bool = True) -> Any:
    """``json.loads`` for untrusted input that raises nothing but :class:`ParseError` (reason
    ``bad_json``, ``too_deep``, ``non_finite_number``, ``number_out_of_range``, or with
    ``surrogates=False`` ``bad_encoding`` for a string holding a lone surrogate)."""
    try:
        obj = json.loads(text, parse_constant=_no_constant)
    except ParseError:
        raise
    except RecursionError:
        raise ParseError("too_deep", f"JSON nested deeper than {max_depth}") from None
    except (ValueError, TypeError) as exc:  # UnicodeDecodeError is a ValueError
        raise ParseError("bad_json", str(exc)[:200]) from None
    check_json_value(obj, max_depth, surrogates)
    return obj


def check_json_value(obj: Any, max_depth: int = MAX_JSON_DEPTH, surrogates: bool = True) -> None:
    """Raise ParseError unless ``obj`` (parsed JSON) is at most ``max_depth`` deep, every number
    in it is finite and, for integers, below 2**64 in magnitude, and (``surrogates=False``) no
    string or key holds a lone surrogate.  Iterative: no recursion."""
    stack = [(obj, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            if d > max_depth:
                raise ParseError("too_deep", f"JSON nested deeper than {max_depth}")
            if not surrogates and any(has_surrogate(k) for k in v):
                raise ParseError("bad_encoding", "a lone surrogate in a JSON key")
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            if d > max_depth:
                raise ParseError("too_deep", f"JSON nested deeper than {max_depth}")
            stack.extend((x, d + 1) for x in v)
        elif isinstance(v, str):
            if not surrogates and has_surrogate(v):
                raise ParseError("bad_encoding", "a lone surrogate in a JSON string")
        elif isinstance(v, float):
            if not math.isfinite(v):
                raise ParseError("non_finite_number", "a number overflows to infinity (or is NaN)")
        elif isinstance(v, int) and not isinstance(v, bool) and not -MAX_JSON_INT < v < MAX_JSON_INT:
            raise ParseError("number_out_of_range", "an integer of more than 64 bits")


def has_surrogate(text: str) -> bool:
    """A lone UTF-16 surrogate (JSON's ``"\\ud800"``): not text, cannot be encoded as UTF-8."""
    return not text.isascii() and _SURROGATE.search(text) is not None
