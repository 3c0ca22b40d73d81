"""The learned canonizer on the quality harness's apps (issue 15, docs/learned.md).

For each app, with the site up, on the train + validate logs only (the test log stays held out):

  dustbuster truth train.log validate.log --max-urls BUDGET -o truth-train.jsonl   # the training data
  dustbuster learn train truth-train.jsonl --models models                         # one model version
  dustbuster learn propose train.log validate.log --rules rules.json -o learned-candidates.json
  dustbuster validate train.log validate.log --candidates learned-candidates.json -o rules-learned.json
  dustbuster eval --truth truth.jsonl rules.json rules-learned.json --model models/HOST/vNNNN --json

and the three rows of the issue: (a) the model alone, (b) our validated rules, (c) rules + the
model's validated candidates.  `run.py` calls :func:`learned_stage` inside an app's run; run alone,
this script restarts each app of an earlier `make quality` on its old port and runs the stage again
(the logs, the test truth and rules.json of that run are reused):

  .venv/bin/python bench/quality/learnedstage.py                 # both apps, then docs/learned.md's table
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: pages fetched for the training data at most (the stated budget of issue 15's point 1)
TRAIN_BUDGET = 2000


#: the CI size (run.py --small): a smaller model and fewer steps, a minute on a loaded 2-core machine
SMALL_MODEL = ("--embed", "32", "--hidden", "64", "--min-steps", "600")


def learned_stage(app, logs: dict[str, Path], sites: Path, truth: Path, rules: Path, dust, steps: Path,
                  small: bool = False, reuse: bool = False) -> dict:
    """The stage above for one app whose site is up; returns its numbers (result.json's "learned")."""
    out = app.out
    learn = [str(logs["train"]), str(logs["validate"])]
    ttruth = out / "truth-train.jsonl"
    models = out / "models"
    t = {"truth": dust("truth", *learn, "--site", app.host, "--sites", str(sites), "--max-urls", str(TRAIN_BUDGET),
                       "-o", str(ttruth), "-q", steps=steps)}
    path_file = out / "model-path.txt"
    if reuse and path_file.exists():  # --reuse-model: the last model of this folder, no training
        t["train"] = 0.0
    else:
        t["train"] = dust("learn", "train", str(ttruth), "--site", app.host, "--models", str(models), "-q",
                          *(SMALL_MODEL if small else ()),
                          steps=steps, stdout=path_file)
    model = path_file.read_text().strip()
    cands = out / "learned-candidates.json"
    t["propose"] = dust("learn", "propose", *learn, "--site", app.host, "--model", model, "--rules", str(rules),
                        "-o", str(cands), "-q", steps=steps)
    combined = out / "rules-learned.json"
    t["validate"] = dust("validate", *learn, "--site", app.host, "--sites", str(sites), "--candidates", str(cands),
                         "-o", str(combined), "-q", steps=steps)
    scores = out / "eval-learned.json"
    dust("eval", "--truth", str(truth), str(rules), str(combined), "--model", model, "--no-w3lib", "--json", "-q",
         steps=steps, stdout=scores)
    meta = json.loads((Path(model) / "model.json").read_text())
    fetched = sum(1 for _ in open(ttruth, encoding="utf-8"))
    return {"model": model, "model_json": {k: v for k, v in meta.items() if k not in ("vocab", "meta")}
            | {"vocab_size": len(meta.get("vocab") or ())}
            | {"meta": {k: v for k, v in (meta.get("meta") or {}).items() if k != "functions"}},
            "training_fetches": fetched, "budget": TRAIN_BUDGET, "small": small, "seconds": {k: round(v, 1) for k, v in t.items()},
            "candidates": json.loads(cands.read_text()), "ruleset": json.loads(combined.read_text()),
            "eval": json.loads(scores.read_text())}


def rerun(name: str, out: Path, venv: Path, reuse: bool = False) -> dict:
    """The stage again on an earlier run's app folder (its port and files)."""
    import run  # bench/quality/run.py

    host, kind = run.KINDS[name]
    folder = out / name
    sites = json.loads((folder / "sites.json").read_text())
    port = int(sites[host]["origins"][0].rsplit(":", 1)[1])
    app = run.App(name, host, kind, folder, venv, run.SIZES["full"][name], port=port)
    steps = folder / "steps-learned.log"
    logs = {r: folder / f"{r}.log" for r in run.RUNS}
    app.start()
    try:
        return learned_stage(app, logs, folder / "sites.json", folder / "truth.jsonl", folder / "rules.json",
                             run.dust, steps, reuse=reuse)
    finally:
        app.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--apps", default="docs,trac")
    ap.add_argument("--out", default=str(HERE.parent / "out" / "quality"))
    ap.add_argument("--venv", default=str(HERE.parent.parent / "var" / "quality" / "venv"))
    ap.add_argument("--no-doc", action="store_true", help="do not write docs/learned.md's table")
    ap.add_argument("--reuse-model", action="store_true", help="no training: the app folder's last model")
    a = ap.parse_args(argv)
    out = Path(a.out).resolve()
    for name in a.apps.split(","):
        t0 = time.perf_counter()
        print(f"{name}: the learned stage ...", file=sys.stderr, flush=True)
        res = rerun(name, out, Path(a.venv).resolve(), a.reuse_model)
        result = out / name / "result.json"
        doc = json.loads(result.read_text()) if result.exists() else {"app": name}
        doc["learned"] = res
        result.write_text(json.dumps(doc, indent=1))
        print(f"{name}: done in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    if not a.no_doc:
        from learnedreport import write_learned  # bench/quality/learnedreport.py

        write_learned(out, HERE.parent.parent / "docs" / "learned.md")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    sys.exit(main())
