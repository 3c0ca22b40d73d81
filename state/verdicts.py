"""The validator's memory, in RocksDB: verdicts with their time (for the TTL), and the last
published rule set of each site (so a new version is published only when a verdict changed)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from .rocks import RocksKV


class VerdictStore:
    def __init__(self, path: Path) -> None:
        self.kv = RocksKV(path)

    def get(self, site: str, key: str, ttl_s: float) -> dict | None:
        raw = self.kv.get(f"V{site}\0{key}".encode())
        if raw is None:
            return None
        v = json.loads(raw)
        ttl = ttl_s * float(v.get("ttl_factor", 1.0))  # core.validate.ttl_factor: value-mapping rules expire sooner
        return v if time.time() - v["at"] <= ttl else None

    def put(self, site: str, key: str, verdict: dict) -> None:
        self.kv.write({f"V{site}\0{key}".encode(): json.dumps({**verdict, "at": time.time()}).encode()}, {})

    def ruleset(self, site: str) -> dict | None:
        raw = self.kv.get(f"S{site}".encode())
        return json.loads(raw) if raw else None

    def set_ruleset(self, site: str, rs: dict) -> None:
        self.kv.write({f"S{site}".encode(): json.dumps(rs).encode()}, {})

    def set_candidates(self, site: str, cand: dict) -> None:
        self.kv.write({f"C{site}".encode(): json.dumps(cand).encode()}, {})

    def all_candidates(self) -> list[tuple[str, dict]]:
        return [(k[1:].decode(), json.loads(v)) for k, v in self.kv.scan(b"C")]

    def close(self) -> None:
        self.kv.close()
