"""Benchmark of reading logs: µs per line for each format, next to a minimal
baseline on the same file in the same run.

Files (written to bench/out/parse/, ``--copies`` times over):

* ``combined``: the real combined logs of tests/data/logs (semicomplete.com, secrepo.com: 22,077
  lines, scanner junk and 404s included);
* ``common``: monitorware-twiki's real common log + the combined lines cut after the size;
* ``vhost``: the synthetic forum log of dustbuster.sim.forum (vhost + combined, 50,000 lines);
* ``jsonl``: the combined lines that parse, as nginx-style JSON objects (time, remote_addr, host,
  method, url, protocol, status, size, referer, user_agent: ~400 bytes a line);
* ``jsonl, records``: the same records in the short form dustbuster's own tools write (absolute
  url, status, size, method: ~110 bytes a line).

Measured for each, interleaved, ``--repeat`` times, medians, in CPU seconds of this process (one
core; the machine may be shared, and CPU time is what the parsing costs):

* ``floor``: read the file, decode each line and one ``str.split(" ")`` picking URL, status and
  size (for JSON lines ``json.loads`` + three ``get`` instead): what any reader must do at least;
* ``reader``: ``dustbuster.logs.reader.iter_records`` (what ``dustbuster mine`` does: read, decode, parse,
  every line counted), with the parsers in use;
* ``reader, reference parsers``: the same with ``dustdev.parsers.REFERENCE_PARSERS`` (before);
* ``parser``: the format's parser alone on the decoded lines in memory (fast path + fallback);
* ``parse_lines``: the streaming ingest's batch parser (batches of 500 lines, format sniffed per batch).

    .venv/bin/python bench/bench_parse.py [--repeat 5] [--copies 2]

Prints a Markdown table and writes bench/out/bench_parse.json.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
LOGS = ROOT / "tests" / "data" / "logs"
sys.path.insert(0, str(ROOT))

COMBINED = ["semicomplete-apache/apache_logs", "secrepo-selflogs/access.log.2018-12-15",
            "secrepo-selflogs/access.log.2021-10-22_to_2021-10-27", "secrepo-selflogs/access.log.2022-12-22"]
COMMON = ["monitorware-twiki/access_log"]
SITE = "www.example.com"
#: field index of URL, status and size after line.split(" ") (vhost: one more field first)
SPLIT_AT = {"common": 6, "combined": 6, "vhost": 7}


def _real(files: list[str]) -> list[str]:
    out: list[str] = []
    for f in files:
        out += (LOGS / f).read_text(encoding="utf-8", errors="replace").splitlines()
    return out


def _as_json(m: re.Match, short: bool) -> str | None:
    req = m.group(5).split(" ")
    if len(req) != 3 or not req[1].startswith("/"):
        return None
    status, size = int(m.group(6)), None if m.group(7) == "-" else int(m.group(7))
    if short:
        return json.dumps({"url": f"http://{SITE}{req[1]}", "status": status, "size": size, "method": req[0]})
    return json.dumps({"time": m.group(4), "remote_addr": m.group(1), "host": SITE, "method": req[0],
                       "url": req[1], "protocol": req[2], "status": status, "size": size,
                       "referer": m.group(8), "user_agent": m.group(9)})


def corpus_lines() -> dict[str, tuple[str, list[str]]]:
    """name -> (format, lines)"""
    from dustbuster.sim.forum import generate
    from dustbuster.logs.parsers import _RE_COMBINED

    combined = _real(COMBINED)
    matches = [_RE_COMBINED.match(ln) for ln in combined]
    common = _real(COMMON) + [ln[:m.end(7)] if m else ln for ln, m in zip(combined, matches)]
    return {"common": ("common", common), "combined": ("combined", combined),
            "vhost": ("vhost", list(generate(50_000, 1))),
            "jsonl": ("jsonl", [j for j in (_as_json(m, False) for m in matches if m) if j]),
            "jsonl, records": ("jsonl", [j for j in (_as_json(m, True) for m in matches if m) if j])}


def write_corpus(copies: int, limit: int | None = None) -> dict[str, tuple[str, Path]]:
    """Each corpus ``copies`` times over (its first ``limit`` lines only, when given) in bench/out/parse/."""
    d = OUT / ("parse" if limit is None else "parse-small")
    d.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, (fmt, lines) in corpus_lines().items():
        path = d / (name.replace(", ", "-") + ".log")
        path.write_text("\n".join(lines[:limit] * copies) + "\n", encoding="utf-8")
        paths[name] = (fmt, path)
    return paths


def floor(path: Path, fmt: str) -> int:
    """Read, decode, one split: the least a line costs."""
    k = SPLIT_AT.get(fmt, 6)
    n = 0
    with open(path, "rb") as fh:
        for raw in fh:
            f = raw.decode("utf-8").rstrip("\r\n").split(" ")
            if len(f) > k + 3:
                f[k], f[k + 2], f[k + 3]
            n += 1
    return n


def floor_json(path: Path) -> int:
    n = 0
    with open(path, "rb") as fh:
        for raw in fh:
            obj = json.loads(raw.decode("utf-8"))
            obj.get("url"), obj.get("status"), obj.get("size")
            n += 1
    return n


def reader(path: Path, fmt: str) -> int:
    from dustbuster.logs.reader import ReadStats, iter_records

    stats = ReadStats()
    for _ in iter_records([path], fmt, SITE, stats=stats):
        pass
    return stats.lines


def reader_reference(path: Path, fmt: str) -> int:
    from dustdev.parsers import reference_parsers

    with reference_parsers():
        return reader(path, fmt)


def parser(lines: list[str], fmt: str) -> int:
    from dustbuster.logs.formats import PARSERS
    from dustbuster.logs.record import Context, Skip
    from dustbuster.core.errors import ParseError

    parse, ctx = PARSERS[fmt], Context(SITE)
    for line in lines:
        try:
            parse(line, ctx)
        except (Skip, ParseError):
            pass
    return len(lines)


def batches(lines: list[str], fmt: str) -> int:
    from dustbuster.logs.reader import parse_lines

    for i in range(0, len(lines), 500):
        parse_lines(lines[i:i + 500], SITE)
    return len(lines)


def variants(path: Path, fmt: str, lines: list[str]) -> dict:
    return {
        "floor": (lambda: floor_json(path)) if fmt == "jsonl" else (lambda: floor(path, fmt)),
        "reader": lambda: reader(path, fmt),
        "reader, reference parsers": lambda: reader_reference(path, fmt),
        "parser": lambda: parser(lines, fmt),
        "parse_lines": lambda: batches(lines, fmt),
    }


def run(copies: int, repeat: int, limit: int | None = None) -> dict:
    paths = write_corpus(copies, limit)
    lines = {name: p.read_text(encoding="utf-8").splitlines() for name, (_, p) in paths.items()}
    runs: dict[str, dict[str, list[float]]] = {name: {} for name in paths}
    for _ in range(repeat):
        for name, (fmt, path) in paths.items():
            for variant, fn in variants(path, fmt, lines[name]).items():
                t0 = time.process_time()
                n = fn()
                runs[name].setdefault(variant, []).append((time.process_time() - t0) / n * 1e6)
    return {"lines": {name: len(v) for name, v in lines.items()}, "repeat": repeat, "clock": "process CPU time",
            "us_per_line": {name: {k: statistics.median(v) for k, v in r.items()} for name, r in runs.items()},
            "runs": runs, "counts": _counts(paths)}


def _counts(paths: dict[str, tuple[str, Path]]) -> dict:
    from dustbuster.logs.reader import ReadStats, iter_records

    out = {}
    for name, (fmt, p) in paths.items():
        st = ReadStats()
        sum(1 for _ in iter_records([p], fmt, SITE, stats=st))
        out[name] = st.to_dict()
    return out


def table(res: dict) -> str:
    rows = ["| format | lines | floor µs/line | reader µs/line | reader lines/s | reader / floor "
            "| before (reference parsers) µs/line | speed-up | parser alone µs/line | parse_lines µs/line |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, u in res["us_per_line"].items():
        ref = u["reader, reference parsers"]
        rows.append(f"| {name} | {res['lines'][name]:,} | {u['floor']:.2f} | {u['reader']:.2f} | "
                    f"{1e6 / u['reader']:,.0f} | {u['reader'] / u['floor']:.2f}× | {ref:.2f} | "
                    f"{ref / u['reader']:.1f}× | {u['parser']:.2f} | {u['parse_lines']:.2f} |")
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--copies", type=int, default=2)
    ap.add_argument("--lines", type=int, help="at most this many lines of each corpus (default all)")
    ap.add_argument("--small", action="store_true", help="500 lines a corpus, one run: CI's check that it runs")
    ap.add_argument("--out", type=Path, default=OUT / "bench_parse.json", help="the JSON results")
    a = ap.parse_args()
    if a.small:
        a.lines, a.repeat, a.copies = 500, 1, 1
    res = run(a.copies, a.repeat, a.lines)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(res, indent=1))
    print(f"medians of {a.repeat} interleaved runs, CPU time of one process (one core); floor: split "
          "(JSON lines: json.loads)\n")
    print(table(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
