"""`manage.py bench_latency`'s figures and layout (the bench itself starts a site's worth of
Celery processes and runs for minutes: docs/benchmarks.md has its runs)."""

from __future__ import annotations

import re
from pathlib import Path

from bench.management.commands.bench_latency import GOALS, p95, processes, summary


def test_p95_is_the_nearest_rank() -> None:
    assert p95([3.0]) == 3.0
    assert p95([5.0, 1.0, 2.0, 4.0, 3.0]) == 5.0  # fewer than 20: the slowest
    assert p95([float(n) for n in range(1, 41)]) == 38.0


def test_a_summary_says_whether_the_goal_is_met() -> None:
    met = summary([0.1, 0.2, 4.9], GOALS["person"])
    assert met["met"] is True and met["p95_s"] == 4.9 and met["median_s"] == 0.2
    assert summary([0.1, 6.0], GOALS["person"])["met"] is False
    assert summary([], 5.0) == {"n": 0}
    assert "met" not in summary([1.0], None)


def test_the_bench_runs_the_procfiles_pools() -> None:
    procfile = (Path(__file__).resolve().parents[3] / "Procfile").read_text()
    for name, argv in processes(match=2, now=4, quick=2):
        if name == "beat":
            continue
        queues = argv[argv.index("-Q") + 1]
        assert re.search(rf"-Q {re.escape(queues)} ", procfile), (name, queues)
