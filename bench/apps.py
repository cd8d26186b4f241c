from django.apps import AppConfig


class BenchConfig(AppConfig):
    """The benchmarks that need the site (`manage.py bench_pipeline`, `bench_leaderboard`,
    `bench_tournament`): an app only so that Django finds their commands."""

    name = "bench"
    label = "bench"
    verbose_name = "Benchmarks"
