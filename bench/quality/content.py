"""Real text from this machine for the quality sites: the installed Debian packages' descriptions,
copyright files and changelog entries (/usr/share/doc), and the common licences
(/usr/share/common-licenses).  Deterministic for a given machine: packages sorted, choices seeded.

Standard library only (the app scripts import it from their own virtual environment)."""

from __future__ import annotations

import gzip
import random
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

DOC = Path("/usr/share/doc")
LICENSES = Path("/usr/share/common-licenses")
_ENTRY = re.compile(r"^(\S+) \(([^)]+)\) [^;]*; urgency=\S+\s*$", re.M)


@dataclass
class Package:
    name: str
    version: str
    section: str
    summary: str
    description: str
    homepage: str = ""
    copyright: str = ""
    changes: list[tuple[str, str, str]] = field(default_factory=list)  #: (version, author line, text)


def _dpkg() -> list[list[str]]:
    fmt = "${Package}\\t${Version}\\t${Section}\\t${Homepage}\\t${Description}\\n@@end@@\\n"
    out = subprocess.run(["dpkg-query", "-W", "-f", fmt], capture_output=True, text=True, check=True).stdout
    return [rec.strip("\n").split("\t", 4) for rec in out.split("\n@@end@@\n") if rec.count("\t") >= 4]


def _changelog(name: str, limit: int = 6) -> list[tuple[str, str, str]]:
    p = DOC / name / "changelog.Debian.gz"
    if not p.exists():
        return []
    try:
        text = gzip.open(p, "rt", encoding="utf-8", errors="replace").read(200_000)
    except OSError:
        return []
    heads = list(_ENTRY.finditer(text))
    out = []
    for i, m in enumerate(heads[:limit]):
        body = text[m.end(): heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        lines = [ln for ln in body.splitlines() if ln.strip()]
        author = next((ln.strip()[3:] for ln in lines if ln.startswith(" -- ")), "")
        items = "\n".join(ln.rstrip() for ln in lines if not ln.startswith(" -- "))
        out.append((m.group(2), author, items.strip()))
    return out


def packages(limit: int | None = None, seed: int = 0, min_words: int = 25) -> list[Package]:
    """Installed packages with a long enough description, sorted by name (a seeded sample of
    ``limit`` of them when given)."""
    out = []
    for name, version, section, home, desc in sorted(_dpkg()):
        summary, _, rest = desc.partition("\n")
        long = "\n".join(" " if ln.strip() == "." else ln.strip() for ln in rest.splitlines())
        if len(long.split()) < min_words:
            continue
        cp = DOC / name / "copyright"
        text = cp.read_text(encoding="utf-8", errors="replace")[:4000] if cp.is_file() else ""
        out.append(Package(name, version, section.split("/")[-1] or "misc", summary.strip(), long.strip(), home, text))
    if limit is not None and limit < len(out):
        out = sorted(random.Random(seed).sample(out, limit), key=lambda p: p.name)
    for p in out:
        p.changes = _changelog(p.name)
    return out


def licences() -> dict[str, str]:
    """Name → text of the common licences (symbolic links resolved, each text once)."""
    out: dict[str, str] = {}
    seen: set[Path] = set()
    for p in sorted(LICENSES.iterdir()):
        real = p.resolve()
        if real in seen or not real.is_file():
            continue
        seen.add(real)
        out[p.name] = real.read_text(encoding="utf-8", errors="replace")
    return out


def words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]{4,}", text)


__all__ = ["Package", "licences", "packages", "words"]
