"""`manage.py bench_pipeline`: its guards, its arithmetic, the matches it creates (same seeds
and seats as the `grass match` series), and its direct path on a tiny series. The pipeline
path itself (a real Celery worker against a database of its own) is exercised by running the
command; see its docstring."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bench.management.commands.bench_pipeline import (
    Figures,
    bench_bot_names,
    bench_database_check,
    bench_matches_create,
    bench_use_broker,
    bench_versions,
    bot_upload_bytes,
    overhead_pct,
    run_direct,
)
from bots.runner.botfiles import load_bot
from bots.runner.series import SeriesConfig, plan
from ladder.matches.models import Match

POSTGRES = "django.db.backends.postgresql"


def test_only_a_postgresql_database_named_bench_is_used() -> None:
    bench_database_check({"ENGINE": POSTGRES, "NAME": "grass_bench_pipe"})
    with pytest.raises(CommandError, match="contains 'bench'"):
        bench_database_check({"ENGINE": POSTGRES, "NAME": "grass"})
    with pytest.raises(CommandError, match="PostgreSQL"):
        bench_database_check({"ENGINE": "django.db.backends.sqlite3", "NAME": "/tmp/bench.db"})


def test_the_command_refuses_the_test_database() -> None:
    # The suite's database is named test_grass_test...: the bench must not touch it.
    with pytest.raises(CommandError, match="bench"):
        call_command("bench_pipeline", "--games", "1")


def test_the_bench_broker_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # Celery prefers CELERY_BROKER_URL from the environment over its configuration: a bench
    # that only set the configuration would enqueue onto the production broker.
    from celery import Celery

    monkeypatch.setenv("CELERY_BROKER_URL", "redis://production.invalid:6379/0")
    app = Celery("bench-broker-test")
    bench_use_broker(app, "redis://127.0.0.1:6379/7")
    assert app.conf.broker_url == "redis://127.0.0.1:6379/7"
    connection = app.connection_for_write()
    assert (connection.hostname, connection.virtual_host) == ("127.0.0.1", "7")


def test_rates_and_overhead() -> None:
    direct = Figures(games=40, seconds=20.0)
    pipeline = Figures(games=40, seconds=25.0)
    assert direct.games_per_minute == 120.0
    assert pipeline.games_per_minute == 96.0
    assert overhead_pct(direct, pipeline) == pytest.approx(20.0)
    assert overhead_pct(direct, Figures(games=40, seconds=16.0)) == pytest.approx(-25.0)
    with pytest.raises(ValueError):
        overhead_pct(Figures(games=0, seconds=1.0), pipeline)


def test_each_entry_is_a_bot_of_its_own() -> None:
    assert bench_bot_names(["random", "random", "greedy", "x/mine.py"]) == [
        "random-1",
        "random-2",
        "greedy-1",
        "mine-1",
    ]


def test_uploads_are_what_an_author_sends() -> None:
    single = load_bot("random")
    assert bot_upload_bytes(single) == ("bot.py", single.files["bot.py"])
    multi = type(single)("two", {"bot.py": b"import helper\n", "helper.py": b"X = 1\n"})
    first, second = bot_upload_bytes(multi), bot_upload_bytes(multi)
    assert first[0] == "bot.zip" and first == second  # same bytes: the version is reused


@pytest.mark.django_db
def test_matches_get_the_series_seeds_and_seats(valid_version: Any) -> None:
    versions = [valid_version(f"b{i}") for i in range(5)]
    specs = plan(len(versions), 4, 6, seed=11)
    matches = bench_matches_create(versions, specs, ruleset="classic", limits={"max_hands": 2})
    assert [m.seed for m in matches] == [spec.seed for spec in specs]
    for match, spec in zip(matches, specs, strict=True):
        seated = list(match.seats.order_by("seat").values_list("bot_version_id", flat=True))
        assert seated == [versions[i].pk for i in spec.order]
        assert (match.ruleset, match.limits, match.status) == (
            "classic",
            {"max_hands": 2},
            Match.Status.QUEUED,
        )


@pytest.mark.django_db
def test_bench_versions_are_validated_once_then_reused(sandbox_ready: None) -> None:
    sources = [load_bot("random"), load_bot("random")]
    first = bench_versions(sources, ["random-1", "random-2"], log=lambda _: None)
    assert [v.status for v in first] == ["valid", "valid"]
    assert first[0].bot_id != first[1].bot_id
    again = bench_versions(sources, ["random-1", "random-2"], log=lambda _: None)
    assert [v.pk for v in again] == [v.pk for v in first]


def test_direct_path_plays_the_series(sandbox_ready: None) -> None:
    sources = (load_bot("random"), load_bot("greedy"))
    specs = plan(2, 2, 2, seed=5)
    config = SeriesConfig(bots=sources, players=2, limits=(("max_hands", 1),), sandboxed=True)
    seen = []
    figures, totals = run_direct(config, specs, jobs=2, on_each=lambda: seen.append(1))
    assert figures.games == 2 and figures.seconds > 0 and len(seen) == 2
    assert sorted(totals) == [5, 6]
    assert all(len(t) == 2 for t in totals.values())
