"""The `learned` example: its weights are a small file that says how it was made, it plays only
legal moves at every table, it plays clean games in the sandbox with the runtime's NumPy, and
the training command really trains (a tiny run)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

try:
    import numpy as np

    from bench import train_learned
    from bots.examples.learned.bot import WEIGHTS, LearnedBot, Policy, meta
except ImportError as exc:  # pragma: no cover - depends on the machine
    if os.environ.get("CI") == "true":
        raise
    pytest.skip(f"the rl extra is not installed: {exc}", allow_module_level=True)

from bots.runner.botfiles import load_bot
from bots.runner.match import play_match
from bots.sdk import actions, features
from engine import Variants, new_game, observe


def test_the_weights_are_small_and_say_how_they_were_made() -> None:
    assert WEIGHTS.stat().st_size < 512 * 1024
    made = meta()
    assert made["command"].startswith("python -m bench.train_learned")
    assert isinstance(made["seed"], int)
    assert made["features"] == features.SIZE and made["actions"] == actions.SIZE
    with np.load(WEIGHTS, allow_pickle=False) as data:
        assert data["w1"].shape == (features.SIZE, made["hidden"])
        assert data["w3"].shape == (made["hidden"], actions.SIZE)


@pytest.mark.parametrize(
    ("ruleset", "players", "variants"),
    [
        ("modern", 2, Variants()),
        ("modern", 6, Variants(hidden_deals=True, give_me_five=True)),
        ("classic", 4, Variants(lucky_or_not=True, learning_hands=True)),
    ],
)
def test_it_chooses_a_legal_action_everywhere(
    ruleset: str, players: int, variants: Variants
) -> None:
    policy = Policy.load()
    rng = random.Random(players)
    game = new_game(ruleset, players, 9, variants, limits={"max_hands": 3})
    while not game.over:
        seat = game.to_act
        view = observe(game, seat, since=len(game.events))
        choice = policy.choose(view, view["legal"]) if seat == 0 else rng.choice(view["legal"])
        game.apply(choice)  # raises if illegal


def test_it_plays_clean_games_in_the_sandbox(sandbox_ready: None) -> None:
    bots = [load_bot(name) for name in ("learned", "greedy", "random")]
    for ruleset in ("modern", "classic"):
        match = play_match(bots, ruleset=ruleset, seed=6, limits={"max_hands": 2})
        learned = match.seats[0]
        assert learned.strikes == 0 and not learned.forfeited, learned.faults
        assert learned.decisions > 0
        assert "Traceback" not in learned.stderr


@pytest.mark.slow
def test_the_training_command_trains(tmp_path: Path) -> None:
    """A tiny run of the real pipeline: teacher games, training, DAgger, the check."""
    out = tmp_path / "weights.npz"
    argv = ["--games", "2", "--dagger-games", "1", "--epochs", "2", "--check-games", "2"]
    assert train_learned.main([*argv, "--out", str(out)]) == 0
    made = meta(out)
    assert made["samples"] > 100 and made["dagger_games"] == 1
    assert 0 < made["accuracy"] <= 1
    trained = Policy.load(out)
    assert LearnedBot(trained).policy is trained
    # Trained, not the initial weights: the same seed's initialisation differs. (Two epochs
    # over a few hundred samples need not move any weight by 0.01: with strong's belief
    # sampling as the teacher, none did; 1e-4 is still far above float noise.)
    fresh = train_learned.init(np.random.default_rng(1))
    assert not np.allclose(trained.params[0], fresh["w1"], atol=1e-4)
