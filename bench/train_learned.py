"""Train the `learned` example bot's network (bots/examples/learned/weights.npz).

    .venv/bin/python -m bench.train_learned                # the committed weights (37 min, 2 cores)
    .venv/bin/python -m bench.train_learned --games 8 --dagger-games 4 --epochs 2 --out /tmp/w.npz

Imitation of `strong`, whose search the network cannot afford at play time, with NumPy only:

1. `strong` plays one seat of `--games` four-seat games (three `greedy` seats, or two `greedy`
   and a `random`, so the network also sees weak tables); each of its decisions is a sample:
   the observation vector (`bots.sdk.features`), the legal-action mask (`bots.sdk.actions`) and
   the action `strong` chose. Its search is made deterministic (a fixed 40 samples per planned
   move instead of a CPU-time budget), so the same seed gives the same data.
2. The network (405 -> 128 -> 128 -> 609, ReLU) learns those choices: cross-entropy over the
   legal actions only, Adam, `--epochs` passes.
3. DAgger: the network itself plays `--dagger-games` more games while `strong` says what it
   would have done in each position the network reached; the network is trained again on all
   the data, so it learns to recover from its own mistakes, not only to follow `strong`'s path.
4. A quick check in this process (no sandbox): the network against three `greedy`.

Games are played by `--jobs` worker processes (2: this machine's cores). Everything follows
from `--seed`. The weights are stored as float16 with a `meta` entry (command, seed, sample
counts, accuracy, the quick check).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.fairness import wilson
from bots.rl.opponents import RandomOpponent, SdkOpponent, example_bot
from bots.sdk import actions, features
from engine import new_game, observe

OUT = Path(__file__).resolve().parents[1] / "bots" / "examples" / "learned" / "weights.npz"
HIDDEN = 128
TEACHER_SAMPLES = 40
"""Determinized samples per planned move of the teacher (strong's own figure, on average)."""


@dataclass(frozen=True)
class Job:
    """Games for one worker: seeds `first` to `first + games - 1`; `weights` (the network's
    parameters) make it play the learner's seat while the teacher labels (DAgger)."""

    first: int
    games: int
    weights: dict[str, np.ndarray[Any, Any]] | None


def teacher() -> Any:
    """`strong`, with its search made deterministic: exactly TEACHER_SAMPLES samples."""
    bot: Any = example_bot("strong")
    namespace = type(bot).search.__globals__
    namespace["MAX_SAMPLES"] = namespace["MIN_SAMPLES"] = TEACHER_SAMPLES
    bot.budget_ms = 10**9
    return bot


def play(job: Job) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Play the job's games; the samples of the teacher's seat: vectors, masks, choices.

    The bots' own randomness is seeded from the game's seed, so a run repeats (the ladder's
    `bot_seed` keys its seeds with a secret drawn per process)."""
    from bots.examples.learned.bot import Policy

    policy = Policy(job.weights) if job.weights is not None else None
    coach = SdkOpponent(teacher())
    greedy = SdkOpponent(example_bot("greedy"))
    xs: list[list[float]] = []
    masks: list[list[int]] = []
    ys: list[int] = []
    for seed in range(job.first, job.first + job.games):
        rng = random.Random(seed)
        table = ["greedy", "greedy", "greedy" if rng.random() < 0.8 else "random"]
        rng.shuffle(table)
        me = rng.randrange(4)
        table.insert(me, "teacher")
        game = new_game("modern", 4, seed)
        players: list[Any] = [
            coach if t == "teacher" else greedy if t == "greedy" else RandomOpponent()
            for t in table
        ]
        for s, player in enumerate(players):
            if player is not greedy:  # greedy keeps no state: one copy plays three seats
                player.start({"rng_seed": seed * 8 + s})
        read = [0] * 4
        while not game.over:
            s = game.to_act
            view = observe(game, s, since=max(read[s], game.table.hand_start_event))
            read[s] = view["history_end"]
            choice = players[s].act(view)
            if s == me:
                xs.append(features.encode(view))
                masks.append(actions.indices(view["legal"], s, 4))
                ys.append(actions.to_index(choice, s, 4))
                if policy is not None:
                    choice = policy.choose(view, view["legal"])
            game.apply(choice)
    mask = np.zeros((len(masks), actions.SIZE), dtype=np.bool_)
    for row, legal in enumerate(masks):
        mask[row, legal] = True
    return np.asarray(xs, dtype=np.float32), mask, np.asarray(ys, dtype=np.int32)


def collect(
    games: int, first: int, jobs: int, weights: dict[str, np.ndarray[Any, Any]] | None
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """`games` games from seed `first` on, split over `jobs` processes in chunks of 4."""
    chunks = [Job(s, min(4, first + games - s), weights) for s in range(first, first + games, 4)]
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        parts = pool.map(play, chunks, chunksize=1)
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]),
    )


def init(rng: np.random.Generator) -> dict[str, np.ndarray[Any, Any]]:
    sizes = [(features.SIZE, HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, actions.SIZE)]
    params: dict[str, np.ndarray[Any, Any]] = {}
    for i, (fan_in, fan_out) in enumerate(sizes, start=1):
        params[f"w{i}"] = (rng.standard_normal((fan_in, fan_out)) * np.sqrt(2 / fan_in)).astype(
            np.float32
        )
        params[f"b{i}"] = np.zeros(fan_out, dtype=np.float32)
    return params


def train(
    params: dict[str, np.ndarray[Any, Any]],
    x: np.ndarray[Any, Any],
    mask: np.ndarray[Any, Any],
    y: np.ndarray[Any, Any],
    epochs: int,
    rng: np.random.Generator,
    batch: int = 256,
    lr: float = 1e-3,
) -> float:
    """Adam on the cross-entropy of the teacher's choice among the legal actions; returns the
    share of samples whose top-scored legal action is the teacher's."""
    moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in params.items()}
    step = 0
    for epoch in range(epochs):
        order = rng.permutation(len(y))
        for start in range(0, len(y), batch):
            idx = order[start : start + batch]
            grads = _gradients(params, x[idx], mask[idx], y[idx])
            step += 1
            rate = lr * (0.5 if epoch >= epochs * 2 // 3 else 1.0)
            for k, g in grads.items():
                m, v = moments[k]
                m *= 0.9
                m += 0.1 * g
                v *= 0.999
                v += 0.001 * g * g
                m_hat = m / (1 - 0.9**step)
                v_hat = v / (1 - 0.999**step)
                params[k] -= rate * m_hat / (np.sqrt(v_hat) + 1e-8)
    return accuracy(params, x, mask, y)


def _forward(
    params: dict[str, np.ndarray[Any, Any]], x: np.ndarray[Any, Any], mask: np.ndarray[Any, Any]
) -> tuple[np.ndarray[Any, Any], ...]:
    h1 = np.maximum(x @ params["w1"] + params["b1"], 0.0)
    h2 = np.maximum(h1 @ params["w2"] + params["b2"], 0.0)
    logits = h2 @ params["w3"] + params["b3"]
    logits = np.where(mask, logits, -1e9)
    return h1, h2, logits


def _gradients(
    params: dict[str, np.ndarray[Any, Any]],
    x: np.ndarray[Any, Any],
    mask: np.ndarray[Any, Any],
    y: np.ndarray[Any, Any],
) -> dict[str, np.ndarray[Any, Any]]:
    h1, h2, logits = _forward(params, x, mask)
    logits = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(len(y)), y] -= 1.0
    d3 = p / len(y)
    grads = {"w3": h2.T @ d3, "b3": d3.sum(axis=0)}
    d2 = (d3 @ params["w3"].T) * (h2 > 0)
    grads |= {"w2": h1.T @ d2, "b2": d2.sum(axis=0)}
    d1 = (d2 @ params["w2"].T) * (h1 > 0)
    grads |= {"w1": x.T @ d1, "b1": d1.sum(axis=0)}
    return grads


def accuracy(
    params: dict[str, np.ndarray[Any, Any]],
    x: np.ndarray[Any, Any],
    mask: np.ndarray[Any, Any],
    y: np.ndarray[Any, Any],
) -> float:
    hits = 0
    for start in range(0, len(y), 4096):
        _, _, logits = _forward(params, x[start : start + 4096], mask[start : start + 4096])
        hits += int((logits.argmax(axis=1) == y[start : start + 4096]).sum())
    return hits / max(1, len(y))


def check(params: dict[str, np.ndarray[Any, Any]], games: int, first: int) -> dict[str, Any]:
    """The network against three `greedy` in this process (no sandbox): its win rate."""
    from bots.examples.learned.bot import LearnedBot, Policy

    learner = SdkOpponent(LearnedBot(Policy(params)))
    greedy = SdkOpponent(example_bot("greedy"))
    wins = 0.0
    for seed in range(first, first + games):
        me = seed % 4
        game = new_game("modern", 4, seed)
        learner.start({"rng_seed": seed * 8 + me})
        read = [0] * 4
        while not game.over:
            s = game.to_act
            view = observe(game, s, since=max(read[s], game.table.hand_start_event))
            read[s] = view["history_end"]
            game.apply((learner if s == me else greedy).act(view))
        assert game.result is not None
        if me in game.result["winners"]:
            wins += 1 / len(game.result["winners"])
    low, high = wilson(wins, games)
    return {"games": games, "win_rate": wins / games, "ci95": [low, high]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.train_learned", description=__doc__)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--games", type=int, default=360, help="games the teacher plays")
    parser.add_argument("--dagger-games", type=int, default=180, help="games the network plays")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--check-games", type=int, default=400)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    started = time.monotonic()
    rng = np.random.default_rng(args.seed)
    base = args.seed * 1_000_000

    def say(text: str) -> None:
        print(f"[{time.monotonic() - started:7.1f} s] {text}", file=sys.stderr, flush=True)

    x, mask, y = collect(args.games, base, args.jobs, None)
    say(f"teacher: {len(y)} samples from {args.games} games")
    params = init(rng)
    fit = train(params, x, mask, y, args.epochs, rng)
    say(f"trained on the teacher's games: accuracy {fit:.3f}")
    if args.dagger_games:
        dx, dmask, dy = collect(args.dagger_games, base + 500_000, args.jobs, params)
        own = accuracy(params, dx, dmask, dy)
        say(f"network's own games: {len(dy)} samples, agreement with the teacher {own:.3f}")
        x, mask, y = (np.concatenate(p) for p in ((x, dx), (mask, dmask), (y, dy)))
        fit = train(params, x, mask, y, args.epochs, rng)
        say(f"trained on all: accuracy {fit:.3f}")
    quick = check(params, args.check_games, base + 900_000) if args.check_games else None
    say(f"against three greedy, in-process: {quick}")
    meta = {
        "command": " ".join(["python -m bench.train_learned", *(argv or sys.argv[1:])]),
        "seed": args.seed,
        "teacher": f"strong, {TEACHER_SAMPLES} samples per planned move",
        "games": args.games,
        "dagger_games": args.dagger_games,
        "samples": len(y),
        "epochs": args.epochs,
        "accuracy": round(fit, 4),
        "check_vs_3_greedy": quick,
        "features": features.SIZE,
        "actions": actions.SIZE,
        "hidden": HIDDEN,
        "minutes": round((time.monotonic() - started) / 60, 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    stored: dict[str, Any] = {k: v.astype(np.float16) for k, v in params.items()}
    stored["meta"] = np.array(json.dumps(meta))
    with args.out.open("wb") as sink:
        np.savez_compressed(sink, **stored)
    say(f"wrote {args.out} ({args.out.stat().st_size:,} bytes)")
    print(json.dumps(meta, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
