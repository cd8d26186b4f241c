"""The `grass` command line, run as a real subprocess (the console script)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

GRASS = [sys.executable, "-m", "bots.cli"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GRASS, *args], capture_output=True, text=True, timeout=300)


def test_play_writes_logs_that_verify_and_replay(tmp_path: Path) -> None:
    played = run("play", "--players", "3", "--seed", "5", "--logs", str(tmp_path))
    assert played.returncode == 0, played.stderr
    assert "seat2" in played.stdout
    log = tmp_path / "game-5.jsonl.gz"
    ok = run("verify", str(log))
    assert ok.returncode == 0, ok.stderr
    assert "OK" in ok.stdout
    transcript = run("replay", str(log))
    assert transcript.returncode == 0
    assert transcript.stdout.startswith("Grass (modern rules")
    assert "Game over" in transcript.stdout


def test_verify_rejects_a_tampered_log_naming_the_line(tmp_path: Path) -> None:
    assert run("play", "--players", "2", "--seed", "8", "--logs", str(tmp_path)).returncode == 0
    lines = gzip.decompress((tmp_path / "game-8.jsonl.gz").read_bytes()).decode().splitlines()
    index = next(i for i, line in enumerate(lines) if '"e":"hand-end"' in line)
    event = json.loads(lines[index])
    event["totals"][0] += 1_000_000
    lines[index] = json.dumps(event, separators=(",", ":"))
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("\n".join(lines) + "\n")
    result = run("verify", str(tampered))
    assert result.returncode == 1
    assert f"line {index + 1}" in result.stderr


def test_bad_arguments_are_named() -> None:
    result = run("play", "--variant", "no-such-variant")
    assert result.returncode != 0
    assert "no_such_variant" in result.stderr
    missing = run("verify", "/nonexistent/log.jsonl")
    assert missing.returncode == 1
    assert "No such file" in missing.stderr


@pytest.mark.slow
def test_bench_prints_throughput_json() -> None:
    result = run("bench", "--seconds", "0.2", "--players", "2", "6")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [r["players"] for r in report["results"]] == [2, 6]
    assert all(r["decisions_per_s"] > 0 and r["games"] >= 1 for r in report["results"])
    assert report["six_vs_two_per_decision"] > 0


def test_verify_says_under_which_rules_a_log_was_played(tmp_path: Path) -> None:
    from engine.log import dumps
    from engine.rules import ENGINE_VERSION
    from tests.engine import golden

    run("play", "--players", "2", "--seed", "3", "--logs", str(tmp_path))
    new = run("verify", str(tmp_path / "game-3.jsonl.gz"))
    assert new.stdout.strip().endswith(f"; rules of engine {ENGINE_VERSION}")
    old = next(entry["log"] for entry in golden.load() if "log" in entry)
    path = tmp_path / "old.jsonl"
    path.write_text(dumps(old))
    verified = run("verify", str(path))
    assert verified.returncode == 0, verified.stderr
    assert "rules of engine 1.1.0, before the readings of engine 1.2.0" in verified.stdout


def test_bench_peers_prints_figures_and_names_missing_peers() -> None:
    """`grass bench --peers` runs without the optional peers too (figures are not checked:
    they depend on the machine)."""
    result = run("bench", "--peers", "--seconds", "0.05", "--players", "2", "6")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert {"grass 2 players", "grass 6 players"} <= set(report["results"])
    peers = {"rlcard uno", "rlcard leduc", "openspiel crazy_eights (C++)"}
    assert peers <= set(report["results"]) | set(report["unavailable"])
    assert report["results"]["grass 2 players"]["decisions"] > 0
    assert "grass 6 / grass 2 (goal <= 1.5)" in report["ratios"]


def test_bench_replays_prints_figures() -> None:
    result = run("bench", "--replays", "--games", "1")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["games"][0]["events"] > 0
    assert set(report["times_play"]) == {
        "replay_x",
        "frames_all_x",
        "frames_seat0_x",
        "observe_since_x",
    }


def test_play_prints_its_title_on_one_line() -> None:
    # The title once wrapped to the narrow table's width: "1 game(s) of random players," then
    # "modern rules" on the next line.
    played = run("play", "--players", "2", "--seed", "4")
    assert played.returncode == 0, played.stderr
    assert "1 game of random players, modern rules\n" in played.stdout
    assert not any(line.rstrip().endswith(",") for line in played.stdout.splitlines())
    several = run("play", "--players", "2", "--games", "2", "--ruleset", "classic")
    assert "2 games of random players, classic rules\n" in several.stdout
