"""`manage.py bench_tails`: where a page's slow requests spend their time.

    DEBUG=true DATABASE_URL=postgres://postgres@127.0.0.1:5432/grass_scale_bench \\
        .venv/bin/python manage.py bench_tails [--requests 200] [--no-release] [PATH ...]

Requests each PATH (default: the match lists and the bot page of bot 1, as `bench_scale`
asks them) `--requests` times in this process, through Django's test client with DEBUG off,
after the site has been loaded and frozen as `ladder/wsgi.py` does, and splits each request's
wall time into SQL (`connection.execute_wrapper`), Python's cyclic garbage collector
(`gc.callbacks`, full collections named with the objects they freed) and CPU. Prints p50,
p90 and p99 per path and the breakdown of the five slowest requests and the median one.

It answers what `bench_scale`'s p99s cannot: whether a tail is the database, the collector or
the machine. `--no-release` turns `ladder.matches.selectors.release` off (the match pages
then leave their objects in reference cycles, as before it), for an A B comparison in one
run. Read-only: it writes nothing to the database it is pointed at.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection
from django.test import Client
from django.test.utils import override_settings

DEFAULT_PATHS = ("/api/matches/", "/api/matches/?bot=1", "/bots/1/")
WARM = 3


@dataclass
class Sample:
    """One request's time, split."""

    wall_ms: float = 0.0
    cpu_ms: float = 0.0
    sql_ms: float = 0.0
    queries: int = 0
    gc_ms: float = 0.0
    full: list[tuple[float, int]] = field(default_factory=list)
    """Full collections during the request: (ms, objects freed)."""


class _Meter:
    """Adds SQL and collector time to the sample under way."""

    def __init__(self) -> None:
        self.sample = Sample()
        self._gc_started = 0.0

    def on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
            return
        spent = (time.perf_counter() - self._gc_started) * 1000
        self.sample.gc_ms += spent
        if info["generation"] == 2:
            self.sample.full.append((round(spent, 1), info["collected"]))

    def on_sql(
        self, execute: Callable[..., Any], sql: str, params: Any, many: bool, ctx: Any
    ) -> Any:
        started = time.perf_counter()
        try:
            return execute(sql, params, many, ctx)
        finally:
            self.sample.sql_ms += (time.perf_counter() - started) * 1000
            self.sample.queries += 1


def measure(client: Client, path: str, requests: int) -> list[Sample]:
    """`requests` timed requests of `path` (after WARM untimed ones), in the order made."""
    meter = _Meter()
    gc.callbacks.append(meter.on_gc)
    samples = []
    try:
        for index in range(WARM + requests):
            meter.sample = Sample()
            wall, cpu = time.perf_counter(), time.process_time()
            with connection.execute_wrapper(meter.on_sql):
                response = client.get(path)
            meter.sample.wall_ms = (time.perf_counter() - wall) * 1000
            meter.sample.cpu_ms = (time.process_time() - cpu) * 1000
            if response.status_code != 200:
                raise CommandError(f"{path}: {response.status_code}")
            del response
            if index >= WARM:
                samples.append(meter.sample)
    finally:
        gc.callbacks.remove(meter.on_gc)
    return samples


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def describe(sample: Sample) -> str:
    full = ", ".join(f"{ms} ms freeing {freed:,}" for ms, freed in sample.full) or "none"
    return (
        f"wall {sample.wall_ms:6.1f}  cpu {sample.cpu_ms:6.1f}  sql {sample.sql_ms:5.1f} "
        f"({sample.queries} queries)  gc {sample.gc_ms:5.1f}  full collections: {full}"
    )


class Command(BaseCommand):
    help = "Where a page's slow requests spend their time: SQL, the garbage collector, CPU."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="*", default=list(DEFAULT_PATHS))
        parser.add_argument("--requests", type=int, default=200)
        parser.add_argument(
            "--no-release", action="store_true", help="leave match pages in reference cycles"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        import ladder.wsgi  # noqa: F401  # loads and freezes the site, as gunicorn's worker
        from ladder.bots import views as bot_views
        from ladder.matches import apis, selectors

        users = (apis, bot_views)  # the modules that call `release` on their pages
        if options["no_release"]:
            for module in users:
                module.__dict__["release"] = lambda matches: None
        try:
            with override_settings(DEBUG=False, ALLOWED_HOSTS=["*"]):
                client = Client()
                for path in options["paths"]:
                    self._report(path, measure(client, path, options["requests"]))
        finally:
            for module in users:
                module.__dict__["release"] = selectors.release

    def _report(self, path: str, samples: list[Sample]) -> None:
        walls = [s.wall_ms for s in samples]
        self.stdout.write(
            f"{path}: p50 {percentile(walls, 0.5):.1f}  p90 {percentile(walls, 0.9):.1f}  "
            f"p99 {percentile(walls, 0.99):.1f} ms over {len(samples)} requests; "
            f"full collections in {sum(bool(s.full) for s in samples)}"
        )
        ordered = sorted(samples, key=lambda s: s.wall_ms)
        for sample in ordered[-5:]:
            self.stdout.write(f"  slow    {describe(sample)}")
        median = ordered[len(ordered) // 2]
        self.stdout.write(f"  median  {describe(median)}")
        self.stdout.write(
            f"  mean    sql {statistics.fmean(s.sql_ms for s in samples):.1f}  "
            f"gc {statistics.fmean(s.gc_ms for s in samples):.1f} ms"
        )
