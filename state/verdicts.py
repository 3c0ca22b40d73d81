"""The validator's memory, in RocksDB: verdicts with their time (for the TTL), the last published
rule set of each site (so a new version is published only when a verdict changed), and each site's
last candidate set with what its round decided (so a round runs only when something changed).

A valid or refuted verdict is kept for the TTL (``DUST_VERDICT_TTL_S``, shorter for rule types
that expire sooner: ``ttl_factor``).  An undecided one is kept too — for a back-off that starts at
``DUST_UNDECIDED_RETRY_S`` and doubles with each undecided try in a row, up to the TTL — so a rule
the site cannot decide today is not fetched again every window (ours, beyond the papers).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from .rocks import RocksKV

#: the first back-off of an undecided verdict (seconds; DUST_UNDECIDED_RETRY_S's default)
UNDECIDED_RETRY_S = 900.0
#: a verdict's lifetime when none is given (seconds; DUST_VERDICT_TTL_S's default)
VERDICT_TTL_S = 86400.0


class VerdictStore:
    def __init__(self, path: Path) -> None:
        self.kv = RocksKV(path)
        self._key_every_set()

    def _key_every_set(self) -> None:
        """A candidate set stored without its key (by a version before keys) gets the empty key,
        which no round has: the revalidation timer then runs it once, and the key is written."""
        keyed = {k[1:] for k in self.kv.scan_keys(b"K")}
        missing: dict[bytes, bytes | None] = {b"K" + k[1:]: b"" for k in self.kv.scan_keys(b"C") if k[1:] not in keyed}
        if missing:
            self.kv.write(missing, {})

    def get(self, site: str, key: str, ttl_s: float) -> dict | None:
        """The verdict of ``key`` while it holds: ``ttl_s`` (times its ``ttl_factor``) after it was
        decided, an undecided one until its back-off (``retry_s``) ran out."""
        v = self.stored(site, key)
        if v is None:
            return None
        if v.get("valid") is None and "retry_s" in v:
            ttl = float(v["retry_s"])
        else:
            ttl = ttl_s * float(v.get("ttl_factor", 1.0))  # core.validate.ttl_factor: value-mapping rules expire sooner
        return v if time.time() - v["at"] <= ttl else None

    def stored(self, site: str, key: str) -> dict | None:
        """The verdict of ``key`` as stored, expired or not."""
        raw = self.kv.get(f"V{site}\0{key}".encode())
        return json.loads(raw) if raw is not None else None

    def put(self, site: str, key: str, verdict: dict, retry_s: float = UNDECIDED_RETRY_S,
            ttl_s: float = VERDICT_TTL_S) -> None:
        """Keep a verdict; an undecided one with its back-off: ``retry_s`` · 2^(k−1) after its k-th
        undecided try in a row, at most ``ttl_s``."""
        extra: dict = {}
        if verdict.get("valid") is None:
            before = self.stored(site, key)
            tries = int(before.get("undecided_tries", 0)) + 1 if before and before.get("valid") is None else 1
            extra = {"undecided_tries": tries, "retry_s": min(ttl_s, retry_s * 2 ** (tries - 1))}
        self.kv.write({f"V{site}\0{key}".encode(): json.dumps({**verdict, **extra, "at": time.time()}).encode()}, {})

    def ruleset(self, site: str) -> dict | None:
        raw = self.kv.get(f"S{site}".encode())
        return json.loads(raw) if raw else None

    def set_ruleset(self, site: str, rs: dict) -> None:
        self.kv.write({f"S{site}".encode(): json.dumps(rs).encode()}, {})

    def set_candidates(self, site: str, cand: dict, key: str | None = None) -> None:
        """The site's newest candidate set, and its key (agents/validator.py ``candidates_key``)."""
        puts: dict[bytes, bytes | None] = {f"C{site}".encode(): json.dumps(cand).encode()}
        if key is not None:
            puts[f"K{site}".encode()] = key.encode()
        self.kv.write(puts, {})

    def candidate_keys(self) -> list[tuple[str, str]]:
        """(site, key of its newest candidate set) of every site with one (small: no set is read)."""
        return [(k[1:].decode(), v.decode()) for k, v in self.kv.scan(b"K")]

    def candidates(self, site: str) -> dict | None:
        raw = self.kv.get(f"C{site}".encode())
        return json.loads(raw) if raw else None

    def all_candidates(self) -> list[tuple[str, dict]]:
        return [(k[1:].decode(), json.loads(v)) for k, v in self.kv.scan(b"C")]

    def set_round(self, site: str, done: dict) -> None:
        """What the site's last round decided: its candidates' key and the verdict keys it used."""
        self.kv.write({f"R{site}".encode(): json.dumps(done).encode()}, {})

    def last_round(self, site: str) -> dict | None:
        raw = self.kv.get(f"R{site}".encode())
        return json.loads(raw) if raw else None

    def close(self) -> None:
        self.kv.close()
