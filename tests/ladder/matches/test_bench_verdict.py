"""`manage.py bench_verdict`: its guards, its arithmetic and the processes of each layout. The
measurement itself (real workers and beat on a database of its own) is run by the command;
its figures are in docs/benchmarks.md."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bench.management.commands.bench_verdict import (
    Phase,
    Upload,
    _empty_redis,
    layout_processes,
    ratio,
)
from tests import redis_server


def test_the_command_refuses_the_test_database() -> None:
    with pytest.raises(CommandError, match="bench"):
        call_command("bench_verdict", "--rounds", "1")


def test_the_split_layout_is_make_runs_and_the_shared_one_takes_both_queues() -> None:
    split = dict(layout_processes("split", match=2, quick=3))
    assert set(split) == {"matches", "quick", "beat"}
    assert "-Q" in split["matches"] and "matches" in split["matches"]
    assert "--concurrency=2" in split["matches"] and "--concurrency=3" in split["quick"]
    assert split["quick"][split["quick"].index("-Q") + 1] == "celery"
    shared = dict(layout_processes("shared", match=2, quick=3))
    assert set(shared) == {"shared", "beat"} and "-Q" not in shared["shared"]
    with pytest.raises(ValueError):
        layout_processes("other", match=1, quick=1)


def test_medians_and_the_ratio() -> None:
    idle, busy = Phase(), Phase()
    assert ratio(idle, busy) is None
    for seconds in (0.5, 0.4, 0.6):
        idle.uploads.append(Upload(seconds, 0.3, 0, "valid"))
    for seconds in (0.9, 0.7, 5.0):
        busy.uploads.append(Upload(seconds, None, 2, "valid"))
    assert ratio(idle, busy) == pytest.approx(0.9 / 0.5)
    summary = busy.summary()
    assert (summary["median_s"], summary["min_s"], summary["max_s"]) == (0.9, 0.7, 5.0)
    assert summary["task_median_s"] is None and summary["running_at_verdict"] == [2, 2, 2]


def test_the_broker_must_be_an_empty_database_of_its_own(settings: Any) -> None:
    client = redis_server.emptied(settings.CELERY_BROKER_URL)
    _empty_redis(settings.CELERY_BROKER_URL).close()
    client.set("someone-else's", "key")
    try:
        with pytest.raises(CommandError, match="empty Redis database"):
            _empty_redis(settings.CELERY_BROKER_URL)
    finally:
        redis_server.emptied(settings.CELERY_BROKER_URL).close()
