"""The suite's tiers (tests/tiers.py): which tests `make check` leaves out, and how many
examples a property test draws under each Hypothesis profile."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

from tests.tiers import SLOW_KINDS, examples, kinds

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Item:
    """What `kinds` reads of a pytest item."""

    nodeid: str
    fixturenames: tuple[str, ...] = ()


@pytest.mark.parametrize(
    ("nodeid", "fixtures", "expected"),
    [
        ("tests/vm/test_cgroup_v2.py::test_the_guest", (), {"vm"}),
        ("tests/browser/test_site_flow.py::test_x", ("page",), {"browser"}),
        ("tests/e2e/test_pipeline.py::test_x", ("celery",), {"e2e"}),
        ("tests/ladder/site/test_schemathesis.py::test_x", ("live_server",), {"schema"}),
        ("tests/ladder/site/test_generated_client.py::test_x", (), {"schema"}),
        # By what it uses, wherever it lives: a browser test among the ladder's, say.
        ("tests/ladder/bots/test_new.py::test_x", ("browser", "db"), {"browser"}),
        ("tests/bots/test_new.py::test_x", ("celery",), {"e2e"}),
        ("tests/bots/test_hostile.py::test_x", ("sandbox_ready", "box_made"), {"sandbox"}),
        ("tests/ladder/bots/test_x.py::test_x", ("sandbox_ready", "db"), {"sandbox"}),
        # The fast tier: the engine, the bots, the ladder's services and pages.
        ("tests/engine/test_cards_modern.py::test_x", (), set()),
        ("tests/ladder/site/test_pages.py::test_x", ("client", "live_server"), set()),
        ("tests/e2e_notes.py::test_x", (), set()),
    ],
)
def test_a_test_is_of_the_kinds_of_its_folder_and_fixtures(
    nodeid: str, fixtures: tuple[str, ...], expected: set[str]
) -> None:
    assert kinds(Item(nodeid, fixtures)) == expected  # type: ignore[arg-type]
    assert expected <= set(SLOW_KINDS)


@pytest.mark.slow
def test_make_checks_selection_leaves_out_the_slow_kinds() -> None:
    """The marks land on collected items before `-m` deselects (tests/conftest.py): the fast
    tier's selection keeps an engine test and drops an end-to-end and a slow one."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-n",
            "0",
            "-m",
            f"not ({' or '.join(SLOW_KINDS)})",
            "tests/e2e/test_capacity.py",
            "tests/engine/test_sampling.py",
            "tests/test_cli.py",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    collected = [line for line in done.stdout.splitlines() if "::" in line]
    assert collected, done.stdout + done.stderr
    assert any(line.startswith("tests/engine/test_sampling.py::") for line in collected)
    assert not any(line.startswith("tests/e2e/") for line in collected), collected
    assert not any("test_bench_prints_throughput_json" in line for line in collected)


@pytest.fixture
def profile() -> Iterator[object]:
    """`profile(name)` loads a Hypothesis profile; the one before is loaded again after."""
    before = settings.default
    yield settings.load_profile
    settings.register_profile("_restored", before)
    settings.load_profile("_restored")


def test_property_counts_are_whole_in_the_full_run_and_a_tenth_under_quick(
    profile: object,
) -> None:
    settings.load_profile("default")
    assert examples(400) == 400 and examples(20) == 20
    settings.load_profile("ci")
    assert examples(400) == 400
    settings.load_profile("quick")
    assert settings.default.max_examples == 10
    assert examples(400) == 40 and examples(100) == 10
    assert examples(20) == 5  # never so few that a property means nothing
