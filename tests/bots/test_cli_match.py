"""`grass match` runs every language as the ladder does: a compiled bot is built first in a
build sandbox of the ladder's image, then played sandboxed; a build that fails prints the
compiler's output; `--no-sandbox` says plainly what it does not do."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

STARTERS = Path(__file__).resolve().parents[2] / "bots" / "starters"


def grass(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bots.cli", *args], capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_a_compiled_bot_is_built_then_played_in_the_sandbox(
    sandbox_ready: None, tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    done = grass(
        "match", str(STARTERS / "cpp"), str(STARTERS / "rust"), "greedy",
        "--games", "1", "--max-hands", "1", "--json", str(report),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    assert "NOT sandboxed" not in done.stdout
    for name in ("cpp", "rust", "greedy"):
        assert name in done.stdout
    # Every seat played its hand: built, started and answered, with no strike or forfeit.
    rows = {row["bot"]: row for row in json.loads(report.read_text())}
    assert sorted(rows) == ["cpp", "greedy", "rust"]
    for row in rows.values():
        assert (row["games"], row["strikes"], row["forfeits"]) == (1, 0, 0), row


def test_a_build_that_fails_shows_the_compiler(sandbox_ready: None, tmp_path: Path) -> None:
    broken = tmp_path / "broken.cpp"
    broken.write_text("int main( {\n")
    done = grass("match", str(broken), "random", "--games", "1")
    assert done.returncode != 0
    assert "did not build" in done.stderr and "error" in done.stdout


def test_no_sandbox_says_what_it_does_not_do() -> None:
    done = grass(
        "match", str(STARTERS / "javascript"), "random", "--games", "1", "--max-hands", "1",
        "--no-sandbox",
    )  # fmt: skip
    assert "without the sandbox" in done.stdout.replace("\n", " ")
    assert "not the ladder's runtime image" in done.stdout.replace("\n", " ")
