"""``dustbuster mine --jobs auto`` (the default) and ``--max-memory``: how many processes mine a
list (dustbuster/cli/jobs.py).  Whatever the plan, the document is the same
(tests/test_mine_parallel.py); these tests check the choice and what the command says of it."""

from __future__ import annotations

import argparse

import pytest

from dustbuster.cli import main
from dustbuster.cli import jobs as J

MB = 1 << 20


def test_jobs_arg():
    assert J.jobs_arg("auto") == "auto"
    assert J.jobs_arg("3") == 3
    for bad in ("0", "-1", "two", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            J.jobs_arg(bad)


def test_a_number_is_what_it_says():
    assert J.mine_processes(1, 10**6, 10**8).processes == 1
    assert J.mine_processes(2, 10, 100).processes == 2
    assert J.mine_processes(5, 10, 100).processes == 2  # mining has two halves: the rest read the log
    assert J.read_processes(5) == 5
    assert J.read_processes("auto") >= 1


def test_auto_needs_two_cpus_and_a_large_list():
    big = dict(urls=300_000, chars=15_000_000, held=200 * MB)
    one_cpu = J.mine_processes("auto", cpus=1, **big)
    assert one_cpu.processes == 1 and "1 usable CPU" in one_cpu.why
    small = J.mine_processes("auto", urls=J.AUTO_MIN_URLS - 1, chars=10**6, held=100 * MB, cpus=2)
    assert small.processes == 1 and f"{J.AUTO_MIN_URLS:,}" in small.why
    assert J.mine_processes("auto", cpus=2, **big).processes == 2
    assert J.mine_processes("auto", cpus=1.5, **big).processes == 1  # a cgroup quota of 1.5 CPUs


def test_auto_keeps_both_processes_within_the_memory_budget():
    """Two processes only where what this one holds, Figure 1's arrays and the URL index fit
    together; the estimate grows with the characters and the URLs."""
    urls, chars, held = 300_000, 15_000_000, 200 * MB
    need = held + J.FIGURE1_BYTES_PER_CHAR * (chars + 2 * urls) + J.INDEX_BYTES_PER_URL * urls
    fits = J.mine_processes("auto", urls, chars, max_memory_mb=need // MB + 1, held=held, cpus=2)
    assert fits.processes == 2
    over = J.mine_processes("auto", urls, chars, max_memory_mb=need // MB - 1, held=held, cpus=2)
    assert over.processes == 1 and "--max-memory" in over.why
    assert J.mine_processes("auto", urls, 4 * chars, held=held, cpus=2).processes == 1  # longer URLs: more


def test_the_command_says_its_plan_and_refuses_a_bad_budget(capsys, logs_dir):
    log = str(logs_dir / "semicomplete-apache" / "apache_logs")
    assert main(["mine", log, "--site", "www.example.com", "-o", "/dev/null"]) == 0
    assert "mined by one process (1,428 URLs; two from 20,000)" in capsys.readouterr().err  # below the two-process size
    assert main(["mine", log, "--site", "www.example.com", "--max-memory", "0", "-q"]) != 0
    assert "--max-memory" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["mine", log, "--jobs", "0"])


def test_a_lost_second_process_leaves_the_list_to_this_one(capsys, caplog, monkeypatch, logs_dir):
    """``--jobs 2`` with the forked process killed before it sends (out of memory, say): the
    command mines the list in this process alone, says so, and writes the one-process document."""
    import json
    import os

    import dustbuster.core.mining.parallel as parallel

    log = str(logs_dir / "semicomplete-apache" / "apache_logs")
    args = ["mine", log, "--site", "www.example.com", "--json"]
    assert main([*args, "--jobs", "1", "-q"]) == 0
    want = json.loads(capsys.readouterr().out)
    monkeypatch.setattr(parallel, "_pairs_child", lambda *a: os._exit(9))
    assert main([*args, "--jobs", "2"]) == 0
    out, err = capsys.readouterr()
    said = " ".join(r.getMessage() for r in caplog.records if r.levelname == "WARNING")
    assert "ended without a result (exit code 9" in said and "mined again in this process alone" in said
    assert "mined by one process (the second was lost)" in err
    got = json.loads(out)
    strip = lambda d: {k: v for k, v in d["stats"].items() if not k.endswith("seconds")}  # noqa: E731
    assert strip(got) == strip(want) and got["rules"] == want["rules"]
