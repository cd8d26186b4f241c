"""bench_tables' own parts: the table host it starts is the Procfile's, its figures summed
the way the docs say, and the memory of a process's descendants found in /proc."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bench.management.commands.bench_tables import GOAL_S, _summary, table_host
from bench.tables import p95, process_memory, tree_memory


def test_the_bench_starts_the_procfiles_table_host() -> None:
    procfile = (Path(__file__).resolve().parents[3] / "Procfile").read_text()
    argv = table_host(200)
    assert "-Q tables --pool=threads" in procfile
    assert argv[argv.index("-Q") + 1] == "tables" and "--pool=threads" in argv
    assert "--concurrency=200" in argv


def test_the_summary_is_nearest_rank_against_the_goal() -> None:
    values = [0.01] * 95 + [0.5] * 5
    assert p95(values) == 0.5  # the 96th of 100: nearest rank
    figures = _summary(values)
    assert figures["n"] == 100 and figures["median_s"] == 0.01 and figures["max_s"] == 0.5
    assert figures["goal_s"] == GOAL_S and figures["met"] is False
    assert _summary([0.01] * 100)["met"] is True
    assert _summary([]) == {"n": 0}


def test_the_memory_of_a_process_tree_counts_its_descendants() -> None:
    # A child that holds 32 MiB resident, and its own child: both counted, the root not.
    code = (
        "import subprocess, sys, time; data = bytearray(32 << 20); "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        "print('up', flush=True); time.sleep(60)"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "up"
        total, found = tree_memory(os.getpid())
        mine, count = tree_memory(child.pid)
        assert count == 1 and found >= 2  # the grandchild; the child and the grandchild
        assert process_memory([child.pid]) >= 32 << 20  # its bytearray, resident
        assert total >= 32 << 20 and mine < 32 << 20, (total, mine)
    finally:
        child.kill()
        child.wait()
