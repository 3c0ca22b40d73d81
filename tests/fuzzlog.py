"""A deterministic fuzz log for the feed-versus-mine tests (issue 27, finding 5): real combined-log
lines of tests/data/logs mixed, as bytes, with what real files hold and a reader must judge alike
on every path — invalid UTF-8 inside URLs, lone surrogates encoded as bytes, NULs, CRs (CRLF ends
and bare CRs inside lines), binary junk, truncated lines, blank lines, very long URLs, lines over
the line cap (:data:`dustbuster.core.errors.MAX_LINE_CHARS`), one of them too big for a raw
message, and one long line of binary junk."""

from __future__ import annotations

import random
from pathlib import Path

from tests.conftest import LOGS

SOURCE = LOGS / "semicomplete-apache" / "apache_logs"
SITE = "semicomplete.com"


def _in_url(line: bytes, junk: bytes, rng: random.Random) -> bytes:
    """``junk`` inserted at a random place of the line's request path (the line unchanged if it has none)."""
    start = line.find(b'"GET /')
    if start < 0:
        return line
    start += 6
    end = line.find(b" ", start)
    if end <= start:
        return line
    at = rng.randint(start, end)
    return line[:at] + junk + line[at:]


def fuzz_lines(n: int = 4000, seed: int = 27) -> list[bytes]:
    """``n`` real lines, about a third of them changed, plus a few huge ones; each with its line end."""
    rng = random.Random(seed)
    real = SOURCE.read_bytes().splitlines()[:n]
    out: list[bytes] = []
    for i, line in enumerate(real):
        roll = rng.random()
        end = b"\n"
        if b"/images/" in line and roll < 0.3:  # the same bad byte every time: a DUST-looking variant
            line = line.replace(b"/images/", b"/im\xe1ges/", 1)
        elif roll < 0.04:
            line = _in_url(line, rng.choice([b"\xff", b"\xc3", b"\xe2\x82", b"\x80\x80", b"\xf8\x88\x80\x80\x80"]), rng)
        elif roll < 0.06:
            line = _in_url(line, rng.choice([b"\xed\xa0\x80", b"\xed\xbf\xbf"]), rng)  # U+D800, U+DFFF as bytes
        elif roll < 0.08:
            line = _in_url(line, b"\x00", rng)
        elif roll < 0.10:
            end = b"\r\n"
        elif roll < 0.11:
            line = _in_url(line, b"\r", rng)
        elif roll < 0.13:
            line = bytes(rng.randrange(256) for _ in range(rng.randint(1, 120))).replace(b"\n", b"")
        elif roll < 0.15:
            line = line[: rng.randint(1, len(line))]
        elif roll < 0.16:
            line = b"" if rng.random() < 0.5 else b"   \t "
        elif roll < 0.17:
            line = _in_url(line, b"/x" * rng.randint(700, 1500), rng)  # url_too_long or too_many_tokens
        elif roll < 0.18:
            line = _in_url(line, "é".encode() * rng.randint(5, 40), rng)  # valid UTF-8, not ASCII
        out.append(line + end)
        if i % 600 == 5:  # over the line cap: ASCII text, text with a bad byte late in it
            out.append(_in_url(real[i], b"/a" * 40_000, rng) + b"\n")
            out.append(_in_url(real[i], b"/a" * 40_000 + b"\xff", rng) + b"\n")
    out.append(_in_url(real[0], b"/b" * 700_000, rng) + b"\n")  # too big for a raw message of 1,000,000 bytes
    out.append(bytes(rng.randrange(256) for _ in range(300_000)).replace(b"\n", b"") + b"\n")
    out.append(real[-1])  # the last line without a line end
    return out


def write_fuzz_log(path: Path, n: int = 4000, seed: int = 27) -> Path:
    path.write_bytes(b"".join(fuzz_lines(n, seed)))
    return path
