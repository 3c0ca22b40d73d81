"""``dustbuster learn``: the seq2seq paper's learned canonizer as a source of candidate rules
(docs/learned.md).  ``train`` fits a site's model on the content clusters of pages that
``dustbuster truth`` fetched; ``propose`` turns its rewrites u → v that the valid rules leave (their
canonical forms c(u) ≠ c(v)) into candidate rules for ``dustbuster validate --candidates``.  The model never canonizes a URL
itself: only rules the validator found valid are published.  Needs the ``[learned]`` extra (JAX)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from dustbuster.core.errors import ConfigError, DustError

from . import progress as prog
from .common import nothing_read_hint

EPILOG = """\
examples (one site; the truth file is the training data, fetched within a stated budget):
  dustbuster truth train.log --site s.com --sites sites.json --max-urls 2000 -o truth-train.jsonl
  dustbuster learn train truth-train.jsonl --site s.com --models var/models
  dustbuster learn propose train.log --site s.com --models var/models --rules rules.json -o learned.json
  dustbuster validate train.log --site s.com --sites sites.json --candidates learned.json -o rules.json
  dustbuster eval --truth truth-test.jsonl rules.json --model var/models/s.com/v0001   # the model alone
"""


def add_parser(sub, common) -> argparse.ArgumentParser:
    p = sub.add_parser("learn", parents=[common], help="train the seq2seq canonizer; propose candidate rules from it",
                       description="The learned canonizer of Xu, Liu and Callan (SIGIR 2017): a GRU encoder-decoder "
                       "that maps a URL to its canonical form, trained per site on content clusters of fetched pages. "
                       "Its rewrites become candidate rules that `dustbuster validate --candidates` decides like any "
                       "other; the model never canonizes URLs by itself.  Needs: pip install 'dustbuster[learned]'.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    s = p.add_subparsers(dest="learn_cmd", metavar="ACTION", required=True)
    t = s.add_parser("train", parents=[common], help="train a site's model on truth files; saves a new version")
    t.add_argument("truth", nargs="+", metavar="TRUTH.jsonl", help="truth files (dustbuster truth) of the site's logs")
    t.add_argument("--site", required=True, help="the site (its models live under MODELS/SITE/vNNNN)")
    t.add_argument("--models", default="var/models", metavar="DIR", help="model store (default %(default)s)")
    t.add_argument("--threshold", type=float, default=None,
                   help="resemblance that makes two pages one training cluster (default 0.95, stricter than the "
                   "truth's 0.9: the paper puts precision first)")
    t.add_argument("--epochs", type=int, default=None, help="training epochs (default: the model's)")
    t.add_argument("--hidden", type=int, default=None, help="GRU units (default: the model's; the paper used 512)")
    t.add_argument("--embed", type=int, default=None, help="embedding size (default: the model's; the paper used 512)")
    t.add_argument("--min-steps", type=int, default=None, help="Adam steps at least (default: the model's)")
    t.add_argument("--time-budget", type=float, default=None, dest="time_budget_s", metavar="SECONDS",
                   help="stop training after the epoch that passes this (default: the model's, 600)")
    t.add_argument("--seed", type=int, default=0, help="training seed (default %(default)s): same data, same model")
    t.set_defaults(learn_run=run_train)
    r = s.add_parser("propose", parents=[common], help="candidate rules from the model's rewrites of a log's URLs")
    r.add_argument("logs", nargs="+", metavar="LOG", help="log files (.gz ok): the URLs to rewrite")
    r.add_argument("--site", required=True, help="the site: the host of lines that carry none")
    r.add_argument("--models", default="var/models", metavar="DIR", help="model store (default %(default)s)")
    r.add_argument("--model", metavar="DIR", help="a model version directory (default: the site's latest)")
    r.add_argument("--rules", metavar="RULES.json",
                   help="the valid rules: a rewrite u → v counts only where they keep u and v apart, as "
                   "c(u) → c(v) in their canonical forms")
    r.add_argument("-o", "--output", metavar="CANDIDATES.json", help="write the candidates here (default: stdout)")
    r.add_argument("--min-confidence", type=float, default=0.5,
                   help="drop rewrites the model is less sure of (geometric mean of its token probabilities; "
                   "default %(default)s)")
    r.add_argument("--max-rules", type=int, default=50, help="at most this many candidates (default %(default)s)")
    r.add_argument("--scheme", default="http", choices=("http", "https"), help="scheme for lines without one")
    r.add_argument("--format", default="auto", help="log format (default auto; see `mine --help`)")
    r.set_defaults(learn_run=run_propose)
    return p


def run(a: argparse.Namespace) -> int:
    return a.learn_run(a)


def _need_jax() -> None:
    try:
        import jax  # noqa: F401
    except ImportError:
        raise ConfigError("the learned canonizer needs JAX: pip install 'dustbuster[learned]' "
                          "(CPU wheels from PyPI, about 90 MB)") from None


def read_truth_records(paths: list[str]) -> list[dict]:
    out = []
    for path in paths:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"no such truth file: {path} (make it with dustbuster truth)")
        with open(p, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    out.append(json.loads(line))
                except ValueError:
                    raise DustError(f"{path}:{n}: not a truth record") from None
    return out


def run_train(a: argparse.Namespace) -> int:
    _need_jax()
    from dustbuster.core.report.learnpairs import TRAIN_THRESHOLD, pages_from_truth, training_data
    from dustbuster.learned.seq2seq import Hyper, exact_match, train
    from dustbuster.learned.store import ModelStore

    if a.threshold is not None and not 0 < a.threshold <= 1:
        raise ConfigError(f"--threshold must be in (0, 1], not {a.threshold}")
    if any((getattr(a, k) or 1) < 1 for k in ("epochs", "hidden", "embed")):
        raise ConfigError("--epochs, --hidden and --embed must be at least 1")
    t0 = time.perf_counter()
    data = training_data(pages_from_truth(read_truth_records(a.truth)), TRAIN_THRESHOLD if a.threshold is None else a.threshold)
    hyper = Hyper(seed=a.seed)
    over = {k: getattr(a, k) for k in ("epochs", "hidden", "embed", "min_steps", "time_budget_s")
            if getattr(a, k) is not None}
    if over:
        from dataclasses import replace

        hyper = replace(hyper, **over)
    if not a.quiet:
        st = data.stats
        sys.stderr.write(f"{a.site}: {st['pages']} pages, {st['clusters']} content clusters, {st['rewrite_pairs']} "
                         f"rewrite pairs + {st['pairs'] - st['rewrite_pairs']} identity pairs, "
                         f"{st['function_tokens']} function tokens\n")
    bar = _EpochBar(None, prog.enabled(a.quiet))  # epochs: at least hyper.epochs, more for a small site
    try:
        model = train(data.sequences, hyper, on_epoch=bar)
    finally:
        bar.close()
    fit = exact_match(model, data.sequences)
    meta = {"site": a.site.lower(), "functions": data.functions.to_json(), "training_data": data.stats,
            "train_exact_match": round(fit, 4),
            "truth_files": a.truth, "created": round(time.time(), 3)}
    path = ModelStore(Path(a.models)).save(a.site.lower(), model, meta)
    if not a.quiet:
        info = model.info
        sys.stderr.write(f"trained in {time.perf_counter() - t0:.1f}s ({info.get('epochs')} epochs, final loss "
                         f"{info.get('final_loss', float('nan')):.4f}, {fit:.1%} of the training pairs reproduced "
                         f"exactly); saved {path}\n")
    print(path)
    return 0


class _EpochBar:
    def __init__(self, total: int | None, on: bool) -> None:
        self.bar = None
        if on:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc="epochs", unit="epoch", file=sys.stderr, leave=False)

    def __call__(self, epoch: int, loss: float) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(f"loss {loss:.4f}")
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def model_dir(a: argparse.Namespace) -> Path:
    from dustbuster.learned.store import ModelStore

    if a.model:
        return Path(a.model)
    got = ModelStore(Path(a.models)).latest(a.site.lower())
    if got is None:
        raise ConfigError(f"no model of {a.site} under {a.models}: train one with `dustbuster learn train`")
    return got


def residual(rewrites: dict, canon) -> dict[str, str]:
    """The model's rewrites u → v that the rules leave: c(u) → c(v) where the rules' canonical forms
    differ, each form once (its first rewrite); u → v that the rules already merge say nothing new."""
    out: dict[str, str] = {}
    for u, r in rewrites.items():
        cu, cv = canon(u), canon(r.url)
        if cu != cv:
            out.setdefault(cu, cv)
    return out


def run_propose(a: argparse.Namespace) -> int:
    _need_jax()
    from dustbuster.core.canon.canonize import Canonizer
    from dustbuster.core.mining.learnrules import rules_from_rewrites
    from dustbuster.core.model.rules import ruleset_document
    from dustbuster.learned.canonizer import LearnedCanonizer
    from dustbuster.logs.record import Limits
    from dustbuster.logs.reader import read_urllist

    from .eval import rule_canon

    t0 = time.perf_counter()
    known = []
    if a.rules:
        known = [r for r in rule_canon(a.rules, 10, True)[0].rules if r.status == "valid"]
    ul, stats = read_urllist(a.logs, a.format, a.site.lower(), a.scheme, limits=Limits())
    if not len(ul):
        raise DustError(nothing_read_hint(a.logs, stats.to_dict()))
    learned = LearnedCanonizer.load(model_dir(a), a.min_confidence)
    rewrites = learned.rewrites(list(ul))
    left = residual(rewrites, Canonizer(known))
    cands = rules_from_rewrites(list(left.items()), known, max_rules=a.max_rules)
    doc = ruleset_document(a.site.lower(), None, [r.to_json() for r in cands], created=time.time(),
                           stats={"urls": len(ul), "rewrites": len(rewrites), "left_by_rules": len(left),
                                  "candidates": len(cands), "model": str(learned.path),
                                  "seconds": round(time.perf_counter() - t0, 3)})
    doc["schema"] = "dustbuster/candidates@1"
    text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    if a.output:
        Path(a.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    if not a.quiet:
        sys.stderr.write(f"{a.site}: the model rewrites {len(rewrites)} of {len(ul)} URLs, {len(left)} of them to "
                         f"pages the rules keep apart → {len(cands)} candidate rules (to validate):\n")
        for r in cands:
            sys.stderr.write(f"  {r.text}   ({r.support} rewrites)\n")
    return 0


__all__ = ["add_parser", "run"]
