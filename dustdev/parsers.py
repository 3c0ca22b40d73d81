"""The reference parsers as a parser table, for the tests and benchmarks that compare the fast paths
(:mod:`dustbuster.logs.fastparse`) with them.  Both are read off the format table
(:data:`dustbuster.logs.formats.TABLE`): a new format needs no entry here."""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator

from dustbuster.logs.formats import PARSERS, TABLE
from dustbuster.logs.record import Context, LogRecord

#: the parsers as written in dustbuster.logs.parsers: the specification of what a line means
#: (docs/semantics.md)
REFERENCE_PARSERS: dict[str, Callable[[str, Context], LogRecord]] = {f.name: f.parser for f in TABLE}


@contextlib.contextmanager
def reference_parsers() -> Iterator[None]:
    """While the context lasts, ``dustbuster.logs.formats.PARSERS`` are the reference parsers (no
    fast path): what the tests and benchmarks compare the fast paths with.  Not thread-safe."""
    saved = dict(PARSERS)
    PARSERS.update(REFERENCE_PARSERS)
    try:
        yield
    finally:
        PARSERS.update(saved)
