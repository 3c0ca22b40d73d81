"""Benchmark of the learned canonizer's training (dustbuster.learned.seq2seq, issue 15).

``--pairs`` synthetic (source, target) token pairs shaped like tokenized URLs with argument
placeholders (§2.1 of the seq2seq paper): ``http://`` ``h`` then path segments of a few dozen
function tokens and ``<argN>`` placeholders, an optional query; lengths 5-40.  The rewrites a site's
duplicate clusters would teach (§2.3): drop the whole query, drop one session-like parameter, rename
one path token (``questions`` -> ``q``), drop a trailing argument, or keep the URL (identity).  Which
one is a function of the URL's first path token (a site's sections follow different rules), so the
mapping is deterministic and can be fitted exactly.

Measured ``--repeat`` times (medians): training seconds, epochs run, pairs/s (pairs x epochs / s),
the final loss, the exact match of greedy decoding on the training pairs, the parameter count and the
saved model's size (dustbuster.learned.store).  Prints the jax backend and device, so it runs as is on
a CPU here or on a GPU machine (whatever ``jax.devices()`` gives).

    .venv/bin/pip install -e '.[learned]'
    .venv/bin/python bench/bench_learned.py [--pairs 10000] [--repeat 1] [--embed 64 --hidden 128]

Writes bench/out/bench_learned.json.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
sys.path.insert(0, str(ROOT))

FUNCTION_TOKENS = ["wiki", "user", "users", "questions", "tagged", "post", "posts", "page", "view", "edit",
                   "thread", "forum", "topic", "blog", "archive", "search", "tag", "list", "show", "article",
                   "index.php", "profile", "category", "item", "2017", "en", "de", "print", "amp", "feed"]
PARAMS = ["id", "page", "sort", "lang", "q", "view", "action", "oldid", "from", "ref"]
SESSION = ["sid", "utm_source", "version", "PHPSESSID"]


def _url(rng: random.Random) -> list[str]:
    """A tokenized URL with placeholders numbered from the left (§2.1)."""
    toks, arg = ["http://", "h"], 0
    for _ in range(rng.randint(1, 5)):
        toks += ["/", rng.choice(FUNCTION_TOKENS)]
        if rng.random() < 0.6:
            arg += 1
            toks += ["/", f"<arg{arg}>"]
    if rng.random() < 0.6:
        names = rng.sample(PARAMS + SESSION, rng.randint(1, 4))
        for i, name in enumerate(names):
            arg += 1
            toks += ["?" if i == 0 else "&", name, "=", f"<arg{arg}>"]
    return toks[:40]


def _rewrite(src: list[str], kind: int) -> list[str]:
    if kind == 0 and "?" in src:                      # drop the query
        return src[:src.index("?")]
    if kind == 1:                                    # drop session-like parameters
        out, i = [], 0
        while i < len(src):
            if src[i] in SESSION and i + 2 < len(src) and src[i + 1] == "=":
                i += 3
                if out and out[-1] in ("?", "&"):
                    sep = out.pop()
                    if i < len(src) and src[i] == "&":
                        src = src[:i] + [sep] + src[i + 1:]
                continue
            out.append(src[i])
            i += 1
        return out
    if kind == 2:                                    # rename a path token
        return ["q" if t == "questions" else t for t in src]
    if kind == 3 and src[-1].startswith("<arg") and src[-2] == "/" and "?" not in src:
        return src[:-2]                              # drop a trailing argument
    return list(src)                                 # identity (§2.3's (target, target) pairs)


def synthetic_pairs(n: int, seed: int = 0) -> list[tuple[list[str], list[str]]]:
    rng = random.Random(seed)
    pairs = []
    while len(pairs) < n:
        src = _url(rng)
        if len(src) >= 5:
            pairs.append((src, _rewrite(src, FUNCTION_TOKENS.index(src[3]) % 5)))
    return pairs


def run_once(pairs, hyper) -> dict:
    from dustbuster.learned.seq2seq import exact_match, train
    from dustbuster.learned.store import save_model

    started = time.perf_counter()
    model = train(pairs, hyper, on_epoch=lambda e, loss: print(f"  epoch {e}: loss {loss:.4f}", flush=True))
    seconds = time.perf_counter() - started
    t0 = time.perf_counter()
    exact = exact_match(model, pairs)
    predict_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        path = save_model(model, Path(tmp) / "m")
        size = sum(f.stat().st_size for f in path.iterdir())
    return {"train_s": seconds, "epochs": model.info["epochs"], "final_loss": model.info["final_loss"],
            "stopped": model.info["stopped"], "exact": exact, "pairs_per_s": len(pairs) * model.info["epochs"] / seconds,
            "predict_pairs_per_s": len(pairs) / predict_s, "params": model.param_count(), "bytes": size,
            "vocab": len(model.vocab)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--embed", type=int)
    ap.add_argument("--hidden", type=int)
    ap.add_argument("--epochs", type=int)
    ap.add_argument("--batch", type=int)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-budget", type=float, dest="time_budget_s", help="stop training after this many seconds")
    ap.add_argument("--small", action="store_true", help="200 pairs, 2 epochs of a tiny model: CI's check that it runs")
    ap.add_argument("--out", type=Path, default=OUT / "bench_learned.json", help="the JSON results")
    args = ap.parse_args()
    if args.small:
        args.pairs, args.repeat, args.epochs, args.embed, args.hidden = 200, 1, 2, 8, 16

    import jax
    from dustbuster.learned.seq2seq import Hyper

    overrides = {k: getattr(args, k) for k in ("embed", "hidden", "epochs", "batch", "time_budget_s")
                 if getattr(args, k)}
    if args.small:
        overrides |= {"min_steps": 10, "bucket": 64}  # else epochs enough for 2,000 Adam steps; one padded shape to compile
    hyper = Hyper(seed=args.seed, **overrides)
    pairs = synthetic_pairs(args.pairs, args.seed)
    print(f"jax {jax.__version__}, backend {jax.default_backend()}, device {jax.devices()[0].device_kind}"
          f" ({jax.devices()[0]}); {len(pairs)} pairs, mean length "
          f"{statistics.mean(len(s) for s, _ in pairs):.1f}; {hyper}")
    runs = []
    for i in range(args.repeat):
        runs.append(run_once(pairs, hyper))
        print(f"run {i + 1}: {runs[-1]}")
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0] if k != "stopped"}
    print("\n| pairs | backend | train s | epochs | pairs/s | final loss | exact match | params | model bytes |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(f"| {len(pairs)} | {jax.default_backend()} | {med['train_s']:.1f} | {med['epochs']:.0f} | "
          f"{med['pairs_per_s']:.0f} | {med['final_loss']:.4f} | {med['exact']:.1%} | {med['params']:.0f} | "
          f"{med['bytes']:.0f} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(
        {"backend": jax.default_backend(), "device": str(jax.devices()[0]), "jax": jax.__version__,
         "hyper": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}, "runs": runs,
         "median": med}, indent=1))


if __name__ == "__main__":
    main()
