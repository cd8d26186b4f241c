"""`grass bench --languages` runs: the starters it measures are found and every figure is
printed (a smoke test; no timing is asserted)."""

from __future__ import annotations

from bench.sandbox import LANGUAGES, STARTERS, language_figures


def test_every_language_has_the_starter_the_bench_measures() -> None:
    for language in LANGUAGES:
        assert (STARTERS / language).is_dir(), language


def test_language_figures_has_every_figure(sandbox_ready: None) -> None:
    figures = language_figures(rounds=20, starts=1, languages=("python", "binary"))
    assert set(figures) == {"python", "binary"}
    for row in figures.values():
        for mode in ("plain", "sandboxed"):
            assert row[f"startup_{mode}_ms"] > 0 and row[f"round_trip_{mode}_ms"] > 0
        assert row["startup_ready_ms"] > 0 and row["startup_image_ms"] > 0
        assert row["startup_sandboxed_vs_plain"] > 0 and row["startup_ready_vs_plain"] > 0
        assert row["round_trip_sandboxed_vs_plain"] > 0
