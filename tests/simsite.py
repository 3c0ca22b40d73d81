"""The DUST site simulator as the end-to-end tests run it (dustdev.devsim, shared with the
benchmarks): ``dustbuster sim-site`` as a real process on a free loopback port, and the sites file
that lets the validator fetch it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from dustdev import devsim
from tests.conftest import ROOT

write_sites = devsim.write_sites


def start_sim_site(*options: str) -> tuple[subprocess.Popen, int]:
    return devsim.start_sim_site(ROOT, *options)


def write_sim_log(port: int, path: Path, lines: int) -> Path:
    """``lines`` access-log lines of the simulator on ``port`` written to ``path`` (``dustbuster sim-site --write-log``)."""
    subprocess.run([sys.executable, "-m", "dustbuster", "sim-site", "--port", str(port), "--write-log", str(path),
                    "--lines", str(lines), "-q"], cwd=ROOT, check=True, timeout=300)
    return path


__all__ = ["start_sim_site", "write_sim_log", "write_sites"]
