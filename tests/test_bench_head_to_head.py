"""`python -m bench.head_to_head`: chunks of `grass match` (not sandboxed here: the games are
the point, not the box), resumed where a run stopped, shared by a second run played in
reverse, and added up per bot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench import head_to_head


@pytest.mark.slow
def test_chunks_are_played_once_and_added_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "h2h"
    args = ["greedy", "random", "--games", "5", "--chunk", "2", "--seed", "40", "--no-sandbox"]
    head_to_head.main([*args, "--out", str(out), "--reverse"])
    chunks = sorted(p.name for p in out.iterdir())
    assert chunks == ["chunk-000.json", "chunk-001.json", "chunk-002.json"]  # no .part left
    rows = {row["bot"]: row for row in json.loads((out / "chunk-002.json").read_text())}
    assert rows["greedy"]["games"] == 1  # the last chunk holds what is left of the games
    first = capsys.readouterr().out
    assert "chunk 3/3" in first.splitlines()[0]  # --reverse: the last chunk first

    # A chunk lost (a run stopped in it) is played again; the others are not.
    (out / "chunk-001.json").unlink()
    stamps = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    head_to_head.main([*args, "--out", str(out)])
    again = capsys.readouterr().out
    assert "chunk 2/3" in again and "chunk 1/3" not in again and "chunk 3/3" not in again
    assert all(stamps[name] == (out / name).stat().st_mtime_ns for name in stamps)

    # A chunk claimed by a live run is left to it; one claimed by a run that is gone is played.
    (out / "chunk-001.json").unlink()
    (out / "chunk-001.claim").write_text(str(os.getpid()))
    head_to_head.main([*args, "--out", str(out)])
    assert "chunk 2/3" not in capsys.readouterr().out and not (out / "chunk-001.json").exists()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    (out / "chunk-001.claim").write_text(str(gone.pid))
    head_to_head.main([*args, "--out", str(out)])
    assert "chunk 2/3" in capsys.readouterr().out and (out / "chunk-001.json").exists()
    assert not list(out.glob("*.claim"))

    head_to_head.main(["--report", "--out", str(out)])
    table = capsys.readouterr().out
    greedy = next(line for line in table.splitlines() if line.startswith("| greedy |"))
    cells = [cell.strip() for cell in greedy.strip("|").split("|")]
    games, wins = int(cells[1]), float(cells[2])
    assert games == 5 and 0 <= wins <= 5
    totals = sum(
        row["wins"]
        for path in out.glob("chunk-*.json")
        for row in json.loads(path.read_text())
        if row["bot"] == "greedy"
    )
    assert wins == pytest.approx(totals)
    assert cells[3].startswith(f"{wins / games:.1%}")
