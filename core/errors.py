"""The project's one error root and its per-area subclasses.

Every error raised on purpose by dustbuster code derives from :class:`DustError`, so callers
can catch one class.  Areas subclass it; an error that a retry may cure sets ``retriable``
(the aiokafka convention).
"""

from __future__ import annotations


#: the longest excerpt of a rejected line or value that a reject record carries (characters)
REJECT_EXCERPT_CHARS = 1000
#: the line cap: a log line longer than this (characters, its line end excluded) is rejected as
#: ``oversized_line`` unparsed, by ``dustbuster mine`` and by the streaming ingest alike
#: (DUST_MAX_LINE_BYTES defaults to it; ``dustbuster feed`` sends such a line cut to one character more)
MAX_LINE_CHARS = 65536
#: the longest excerpt of an exception's text in a reject record's detail (characters)
ERROR_DETAIL_CHARS = 200
#: the longest excerpt of an exception's text in a logged or printed warning (characters)
WARNING_DETAIL_CHARS = 300


class DustError(Exception):
    """Root of every dustbuster error."""

    retriable = False


class ConfigError(DustError):
    """Bad parameters or settings (caught before any work starts)."""


class ParseError(DustError):
    """A log line, rule file or record could not be parsed."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


class RuleError(DustError):
    """A rule or rule set is malformed (bad JSON form, impossible anchors...)."""

    reason = "bad_rule"


class RuleSetRejected(RuleError):
    """A consumer does not admit a rule set (dustbuster.core.canon.admission); ``reason`` is one word."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


class MiningProcessLost(DustError):
    """The second process of a two-process mining (core/mining/parallel.py) ended without sending
    its result: killed (out of memory?) or exited.  One process can mine the same list instead."""


class StateError(DustError):
    """Persistent state is unreadable or inconsistent."""


class StreamError(DustError):
    """Kafka / streaming failures."""

    retriable = True
