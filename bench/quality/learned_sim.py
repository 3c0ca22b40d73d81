"""The learned canonizer's evaluation on the simulator (issue 15, docs/learned.md), as on the apps.

The simulated forum (`dustbuster sim-site`) on a free loopback port writes one access log; as in
the seq2seq paper's split (§3.1: the first 15,000 crawled pages train, the next 5,000 test), its
first half is the train log, the next quarter the validate log, the last quarter the held-out test
log.  Then exactly the apps' steps: the test log's content truth, `validate` (b), and
bench/quality/learnedstage.py's stage — training truth within the budget, model, candidates,
`validate --candidates` (c), and `eval` with the model alone (a).

  .venv/bin/python bench/quality/learned_sim.py [--lines 8000]   # bench/out/quality/sim/, docs/learned.md
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))  # dustdev/ (not installed)
sys.path.insert(0, str(HERE))

from learnedstage import learned_stage  # noqa: E402
from run import dust  # noqa: E402

HOST = "forum.test"


@dataclass
class SimApp:
    out: Path
    host: str = HOST


def split(log: Path, out: Path) -> dict[str, Path]:
    lines = log.read_bytes().splitlines(keepends=True)
    cuts = {"train": (0, len(lines) // 2), "validate": (len(lines) // 2, 3 * len(lines) // 4),
            "test": (3 * len(lines) // 4, len(lines))}
    logs = {}
    for run, (a, b) in cuts.items():
        logs[run] = out / f"{run}.log"
        logs[run].write_bytes(b"".join(lines[a:b]))
    return logs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=8000, help="log lines of the simulator (default %(default)s)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "quality" / "sim"))
    ap.add_argument("--no-doc", action="store_true")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    steps = out / "steps.log"
    steps.write_text("")
    t0 = time.perf_counter()
    from dustdev.devsim import start_sim_site, write_sites

    sim, port = start_sim_site(ROOT)
    try:
        log = out / "sim.log"
        subprocess.run([sys.executable, "-m", "dustbuster", "sim-site", "--port", str(port), "--write-log", str(log),
                        "--lines", str(a.lines), "-q"], cwd=ROOT, check=True)
        logs = split(log, out)
        sites = write_sites(out / "sites.json", port)
        truth, rules = out / "truth.jsonl", out / "rules.json"
        dust("truth", str(logs["test"]), "--site", HOST, "--sites", str(sites), "-o", str(truth), "-q", steps=steps)
        learn = [str(logs["train"]), str(logs["validate"])]
        dust("validate", *learn, "--site", HOST, "--sites", str(sites), "-o", str(rules), "-q", steps=steps)
        res = learned_stage(SimApp(out), logs, sites, truth, rules, dust, steps)
    finally:
        sim.terminate()
        sim.wait(10)
    doc = {"app": "sim", "kind": f"the simulated forum (dustbuster sim-site), {a.lines} log lines", "host": HOST,
           "ruleset": json.loads(rules.read_text()), "learned": res, "seconds": round(time.perf_counter() - t0, 1)}
    (out / "result.json").write_text(json.dumps(doc, indent=1))
    print(f"sim: done in {doc['seconds']:.0f}s", file=sys.stderr)
    if not a.no_doc:
        from learnedreport import write_learned

        write_learned(out.parent, ROOT / "docs" / "learned.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
