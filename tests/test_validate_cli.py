"""``dustbuster validate``: a log and a live site (the simulator on loopback) in, a RuleSet out —
the validator agent's code path without Kafka."""

from __future__ import annotations

import json
import subprocess
import sys

from dustbuster.sim.forum import SITE_HOSTS
from tests.conftest import ROOT
from tests.simsite import start_sim_site, write_sites

HOSTS = SITE_HOSTS


def dust(*args, **kw):
    return subprocess.run([sys.executable, "-m", "dustbuster", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, **kw)


def test_validate_a_log_against_the_live_site(tmp_path):
    sim, port = start_sim_site()
    try:
        log = tmp_path / "sim.log"
        assert dust("sim-site", "--port", str(port), "--write-log", str(log), "--lines", "5000", "-q").returncode == 0
        sites = tmp_path / "sites.json"
        write_sites(sites, port)
        out = tmp_path / "rules.json"
        r = dust("validate", str(log), "--site", "forum.test", "--sites", str(sites), "-o", str(out))
        assert r.returncode == 0, r.stderr
        doc = json.loads(out.read_text())
        import jsonschema

        jsonschema.validate(doc, json.loads((ROOT / "docs" / "ruleset.schema.json").read_text()))
        assert doc["site"] == "forum.test" and doc["rules"] and all(x["status"] == "valid" for x in doc["rules"])
        assert doc["stats"]["set_check"]["passed"] is True and doc["stats"]["fetches"] > 0
        assert "valid rules" in r.stderr and "set-level check passed" in r.stderr and f"wrote {out}" in r.stderr
        # the file is what canonize applies
        w = f"http://www.forum.test:{port}"
        r = dust("canonize", "--rules", str(out), "-q", input=f"{w}/story?id=7&sid=ab\n{w}/story_7\n")
        lines = r.stdout.splitlines()
        assert lines[0] == lines[1] and lines[0].endswith("/story_7"), lines
        # errors a person can act on
        r = dust("validate", str(log), "--site", "other.test", "--sites", str(sites))
        assert r.returncode == 2 and "has no origins for site 'other.test'" in r.stderr
        r = dust("validate", str(log), "--site", "forum.test", "--sites", str(tmp_path / "none.json"))
        assert r.returncode == 2 and "no such sites file" in r.stderr
    finally:
        sim.terminate()
        sim.wait(10)
