"""The simulated forum's synthetic access log on stdout: the command line of
:func:`dustbuster.sim.forum.generate` (the forum, its URL families and its truth are described there).

    python bench/genlog.py --lines 50000 --seed 1 > forum.log        # vhost + combined format

The output is byte-identical for the same arguments.
"""

from __future__ import annotations

import argparse
import sys

from dustbuster.sim.forum import generate

__all__ = ["generate", "main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=50000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    out = sys.stdout
    for line in generate(a.lines, a.seed):
        out.write(line + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
