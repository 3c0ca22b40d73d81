"""The DUST site simulator as a real process, for the tests and the benchmarks alike:
``dustbuster sim-site`` on a free loopback port, and the sites file that lets the validator fetch it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from dustbuster.broker import free_port, port_open
from dustbuster.sim.forum import SITE_HOSTS

SITE = "forum.test"


def start_sim_site(cwd: Path | None = None, *options: str) -> tuple[subprocess.Popen, int]:
    """The simulator's process and port, once the port answers (or after 30 s: the first request
    then fails with its own message); ``options``: more ``sim-site`` options.  The caller terminates
    the process."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "dustbuster", "sim-site", "--port", str(port), *options], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        if port_open(port):
            break
        time.sleep(0.1)
    return proc, port


def write_sites(path: Path, port: int, rate_per_s: float = 2000, concurrency: int = 8) -> Path:
    """A sites file for ``forum.test``: every simulator host on ``port`` pinned to 127.0.0.1."""
    path.write_text(json.dumps({SITE: {
        "origins": [f"http://{h}:{port}" for h in SITE_HOSTS], "allow_private": True,
        "resolve": {h: "127.0.0.1" for h in SITE_HOSTS}, "rate_per_s": rate_per_s, "concurrency": concurrency}}))
    return path


__all__ = ["SITE", "start_sim_site", "write_sites"]
