"""Head-to-head win rates over many games, played in resumable chunks of `grass match`.

    .venv/bin/python -m bench.head_to_head strong strong_v1 strong_v1 strong_v1 \
        --games 300 --chunk 12 --seed 5000 --out h2h/strong-v1 [--jobs 1] [--no-sandbox]

Each chunk is one `grass match --games CHUNK --seed SEED+k*CHUNK --json OUT/chunk-k.json`
(games on consecutive seeds, seats shuffled per game as `grass match` does); a chunk whose file
exists is not played again, so a run stopped at a time limit goes on where it was, and a second
run with `--reverse` (last chunk first) can share the work with a first on another core (a run
claims a chunk before playing it: `chunk-k.claim` holds its pid). At the end,
and with `--report` alone, the chunks found are added up: per bot the seat-games, wins (a
shared first place counts 1/n), the win rate with its 95% Wilson interval, mean total and
place, ms per decision, strikes and forfeits, as a Markdown table for docs/benchmarks.md.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.fairness import wilson

GRASS = Path(sys.executable).with_name("grass")


def play(args: argparse.Namespace) -> None:
    """Every chunk not played yet, one `grass match` each, with a progress line per chunk."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    chunks = -(-args.games // args.chunk)
    for k in reversed(range(chunks)) if args.reverse else range(chunks):
        target = out / f"chunk-{k:03d}.json"
        if target.exists() or not claim(out / f"chunk-{k:03d}.claim"):
            continue  # played, or being played by another run
        games = min(args.chunk, args.games - k * args.chunk)
        part = out / f"chunk-{k:03d}.json.{os.getpid()}.part"
        command = [
            str(GRASS), "match", *args.bots, "--games", str(games), "--jobs", str(args.jobs),
            "--seed", str(args.seed + k * args.chunk), "--json", str(part),
        ]  # fmt: skip
        if args.no_sandbox:
            command.append("--no-sandbox")
        start = time.monotonic()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        part.replace(target)  # a chunk is counted only once whole
        (out / f"chunk-{k:03d}.claim").unlink()
        print(
            f"chunk {k + 1}/{chunks}: {games} games in {time.monotonic() - start:.0f} s", flush=True
        )


def claim(path: Path) -> bool:
    """Whether this run may play the chunk: it creates the claim (its pid) first, or finds a
    claim whose run is gone (stopped mid-chunk) and takes it over. Two runs on one folder then
    never play the same chunk."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        try:
            holder = int(path.read_text() or "0")
        except (OSError, ValueError):
            holder = 0
        if holder > 0 and alive(holder):
            return False
        path.unlink(missing_ok=True)
        return claim(path)
    with os.fdopen(fd, "w") as file:
        file.write(str(os.getpid()))
    return True


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def report(out: Path) -> str:
    """The chunks in `out` added up, as a Markdown table."""
    totals: dict[str, dict[str, float]] = {}
    files = sorted(out.glob("chunk-*.json"))
    for path in files:
        rows: list[dict[str, Any]] = json.loads(path.read_text())
        for row in rows:
            t = totals.setdefault(row["bot"], dict.fromkeys(
                ("games", "wins", "score", "place", "ms", "strikes", "forfeits"), 0.0
            ))  # fmt: skip
            n = row["games"]
            t["games"] += n
            t["wins"] += row["wins"]
            t["score"] += row["mean_score"] * n
            t["place"] += row["mean_place"] * n
            t["ms"] += row["ms_per_decision"] * n
            t["strikes"] += row["strikes"]
            t["forfeits"] += row["forfeits"]
    lines = [
        f"{len(files)} chunks",
        "| bot | seat-games | wins | win rate (95% Wilson CI) | mean total | mean place "
        "| ms/decision | strikes | forfeits |",
        "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for bot, t in totals.items():
        n = int(t["games"])
        low, high = wilson(t["wins"], n)
        lines.append(
            f"| {bot} | {n} | {t['wins']:g} | {t['wins'] / n:.1%} ({low:.1%}-{high:.1%}) "
            f"| {t['score'] / n:,.0f} | {t['place'] / n:.2f} | {t['ms'] / n:.2f} "
            f"| {t['strikes']:g} | {t['forfeits']:g} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bots", nargs="*")
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--chunk", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--no-sandbox", action="store_true")
    parser.add_argument("--out", required=True, help="folder for the chunks' JSON files")
    parser.add_argument("--report", action="store_true", help="only add up the chunks found")
    parser.add_argument(
        "--reverse", action="store_true", help="last chunk first (a second run beside a first)"
    )
    args = parser.parse_args(argv)
    if not args.report:
        if not args.bots:
            parser.error("name the bots (or pass --report)")
        play(args)
    print(report(Path(args.out)))


if __name__ == "__main__":
    main()
