"""agents/lograte.py: repeated errors, one line per cause per interval with a count (issue 27, finding 7)."""

from __future__ import annotations

import logging

from dustbuster.agents.lograte import MAX_CAUSES, RepeatFilter, install


class Clock:
    t = 100.0

    def __call__(self) -> float:
        return self.t


def record(msg: str, level: int = logging.ERROR, name: str = "aiokafka", args=()) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, msg, args, None)


def test_one_line_per_cause_per_interval_then_the_count():
    clock = Clock()
    f = RepeatFilter(interval_s=30, clock=clock)
    assert f.filter(record("Unable connect to node with id %s: %s", args=(1, "refused")))
    shown = [f.filter(record("Unable connect to node with id %s: %s", args=(1, "refused"))) for _ in range(2000)]
    assert not any(shown) and f.held_back == 2000
    clock.t += 31
    r = record("Unable connect to node with id %s: %s", args=(1, "refused"))
    assert f.filter(r)
    assert r.getMessage() == "Unable connect to node with id 1: refused [2000 more like this in the last 31s, not logged]"


def test_digits_do_not_make_a_new_cause_but_words_loggers_and_levels_do():
    f = RepeatFilter(clock=Clock())
    assert f.filter(record("retrying in 0.5s"))
    assert not f.filter(record("retrying in 16.0s"))
    assert f.filter(record("another error"))
    assert f.filter(record("retrying in 0.5s", name="dustbuster.agents.ingest"))
    assert f.filter(record("retrying in 0.5s", level=logging.WARNING))


def test_info_and_debug_are_never_held_back():
    f = RepeatFilter(clock=Clock())
    assert all(f.filter(record("window emitted", level=logging.INFO)) for _ in range(100))


def test_the_causes_kept_are_bounded():
    f = RepeatFilter(clock=Clock())
    for i in range(MAX_CAUSES + 50):
        f.filter(record(f"error {'x' * (i % 7)} {chr(65 + i % 26)}{chr(65 + i // 26 % 26)}{chr(65 + i // 676)}"))
    assert len(f.causes) <= MAX_CAUSES


def test_install_puts_one_filter_on_every_handler():
    root = logging.Logger("t")
    root.addHandler(logging.StreamHandler())
    root.addHandler(logging.NullHandler())
    install(root)
    install(root)
    assert all(sum(isinstance(x, RepeatFilter) for x in h.filters) == 1 for h in root.handlers)
