"""The DUST site simulator as the end-to-end tests run it (devtools.devsim, shared with the
benchmarks): ``dustbuster sim-site`` as a real process on a free loopback port, and the sites file
that lets the validator fetch it."""

from __future__ import annotations

import subprocess

from devtools import devsim
from tests.conftest import ROOT

write_sites = devsim.write_sites


def start_sim_site() -> tuple[subprocess.Popen, int]:
    return devsim.start_sim_site(ROOT)


__all__ = ["start_sim_site", "write_sites"]
