"""The PettingZoo environment and the Gymnasium wrapper (`bots.rl`, the `rl` extra).

PettingZoo's own `api_test` over both rulesets, 2 to 6 seats and the variants; the observation
holds nothing the seat may not know (the engine's secrecy test, applied to the vector and the
mask); rewards; the single-learner wrapper against in-process and sandboxed opponents.
On CI (`CI=true`) the extra must be installed: a missing one fails, never skips.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest

try:
    import numpy as np
    from pettingzoo.test import api_test

    from bots.rl import GrassEnv, GrassSingleEnv, observation
    from bots.rl.single import masked_random
except ImportError as exc:  # pragma: no cover - depends on the machine
    if os.environ.get("CI") == "true":
        raise
    pytest.skip(f"the rl extra is not installed: {exc}", allow_module_level=True)

from bots.sdk import actions
from engine import Variants, new_game
from tests.engine.test_properties import scramble_hidden

CONFIGURATIONS = [
    ("modern", 2, Variants()),
    ("modern", 4, Variants(hidden_deals=True, give_me_five=True)),
    ("modern", 6, Variants(lucky_or_not=True)),
    ("classic", 3, Variants(learning_hands=True)),
    ("classic", 5, Variants(hidden_deals=True, give_me_five=True)),
]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(("ruleset", "players", "variants"), CONFIGURATIONS)
def test_pettingzoo_api_test(ruleset: str, players: int, variants: Variants) -> None:
    env = GrassEnv(ruleset, players, variants, limits={"max_hands": 2})
    api_test(env, num_cycles=400)


@pytest.mark.parametrize(("ruleset", "players", "variants"), CONFIGURATIONS)
def test_observations_hold_nothing_hidden(ruleset: str, players: int, variants: Variants) -> None:
    """As the engine's secrecy test: reshuffle every card a seat cannot see (other hands, the
    stack, others' secrets in past events); its observation must not change."""
    for seed in range(3):
        rng = random.Random(seed)
        game = new_game(ruleset, players, seed, variants, limits={"max_hands": 2})
        step = 0
        while not game.over:
            if step % 5 == 0:
                for seat in range(players):
                    seen = observation(game, seat)
                    other = observation(scramble_hidden(game, seat, rng), seat)
                    assert np.array_equal(seen["observation"], other["observation"])
                    assert np.array_equal(seen["action_mask"], other["action_mask"])
                    assert seen["action_mask"].any() == (seat == game.to_act)
            game.apply(rng.choice(game.legal_actions()))
            step += 1


def test_the_vector_does_see_the_seats_own_cards() -> None:
    """Guard for the secrecy test: a change the seat can see changes its vector."""
    game = new_game("modern", 4, 5)
    seat = game.to_act
    before = observation(game, seat)["observation"]
    other = scramble_hidden(game, (seat + 1) % 4, random.Random(1))  # scrambles `seat`'s hand
    assert other.seats[seat].hand != game.seats[seat].hand
    assert not np.array_equal(before, observation(other, seat)["observation"])


def _play(env: GrassEnv, seed: int) -> dict[str, float]:
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    totals: dict[str, float] = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        if terminated or truncated:
            env.step(None)
        else:
            env.step(masked_random(obs["action_mask"], rng))
    return totals


@pytest.mark.parametrize("reward", ["rank", "win", "score"])
def test_rewards_follow_the_result(reward: str) -> None:
    env = GrassEnv(players=4, limits={"max_hands": 3}, reward=reward)
    totals = _play(env, seed=3)
    assert env.game is not None and env.game.result is not None
    result = env.game.result
    mine = [totals[f"seat_{s}"] for s in range(4)]
    if reward == "rank":
        assert mine == [1 - 2 * (r - 1) / 3 for r in result["ranks"]]
    elif reward == "win":
        assert sum(mine) == pytest.approx(1.0)
        assert all((m > 0) == (s in result["winners"]) for s, m in enumerate(mine))
    else:
        hands = env.game.table.hand_scores
        assert mine == pytest.approx([sum(h[s].score for h in hands) / 100_000 for s in range(4)])


def test_an_illegal_action_is_refused_and_changes_nothing() -> None:
    env = GrassEnv(players=3)
    env.reset(seed=2)
    obs = env.observe(env.agent_selection)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    assert env.game is not None
    before = len(env.game.events)
    with pytest.raises(ValueError, match="not legal"):
        env.step(illegal)
    assert len(env.game.events) == before


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_single_learner_wrapper_passes_gymnasiums_checker() -> None:
    from gymnasium.utils.env_checker import check_env

    env = GrassSingleEnv(opponents=["random", "greedy"], limits={"max_hands": 2}, illegal="default")
    check_env(env, skip_render_check=True)


def _episode(env: GrassSingleEnv, seed: int) -> tuple[float, int, dict[str, Any]]:
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    reward, steps = 0.0, 0
    while True:
        assert obs["action_mask"].sum() == len(info["legal"]) >= 1
        assert env.game is not None and env.game.to_act == env.seat
        obs, gained, terminated, truncated, info = env.step(masked_random(obs["action_mask"], rng))
        reward += gained
        steps += 1
        assert not truncated
        if terminated:
            return reward, steps, info


@pytest.mark.parametrize(
    "opponents",
    [
        ["random"] * 3,
        ["greedy"] * 3,
        # strong searches at every decision: seconds of a game (the full run plays it).
        pytest.param(["strong", "greedy"], marks=pytest.mark.slow),
    ],
)
def test_one_learner_plays_whole_games_against_chosen_opponents(opponents: list[str]) -> None:
    env = GrassSingleEnv(opponents=opponents, limits={"max_hands": 2})
    for seed in range(2):
        reward, steps, info = _episode(env, seed)
        assert steps > 0 and info["legal"] == []
        assert env.game is not None and env.game.result is not None
        place = env.game.result["ranks"][env.seat]
        assert reward == 1 - 2 * (place - 1) / (len(opponents))
    env.close()


def test_a_random_learner_loses_to_greedy() -> None:
    """The opponents really play: random moves against three greedy seats lose."""
    env = GrassSingleEnv(opponents=["greedy"] * 3, limits={"max_hands": 4}, reward="win")
    wins = sum(_episode(env, seed)[0] for seed in range(12))
    assert wins <= 1


def test_a_bot_file_plays_through_the_sandbox(sandbox_ready: None, tmp_path: Path) -> None:
    """Any bot `grass match` runs can be an opponent: here the greedy example's file, in the
    sandbox, speaking the protocol."""
    source = Path(__file__).resolve().parents[2] / "bots" / "examples" / "greedy" / "bot.py"
    env = GrassSingleEnv(opponents=[str(source)], limits={"max_hands": 2}, seat=0)
    reward, steps, _ = _episode(env, seed=4)
    assert steps > 0 and reward in (1.0, -1.0)
    player = env.opponents[0]
    assert player.name == "bot"
    assert getattr(player, "request", 0) > 0  # it was asked, and answered
    env.close()
    assert getattr(player, "proc", None) is None  # its box is gone


def test_action_space_sizes_match_the_sdk() -> None:
    env = GrassEnv(players=5)
    assert env.action_space("seat_0").n == actions.SIZE
    assert env.observation_space("seat_4")["observation"].shape == (405,)


def test_the_throughput_benchmark_reports_every_loop() -> None:
    """`python -m bench.rl_throughput` in miniature (no timing is asserted)."""
    from bench.rl_throughput import figures

    report = figures(0.05, 3)
    assert set(report["decisions_per_s"]) == {"engine", "env_step", "env"}
    assert all(v > 0 for v in report["decisions_per_s"].values())
    assert report["env_in_engine_decisions"] > 0


def test_the_same_seed_replays_the_same_game() -> None:
    """Opponents' randomness comes from the env's generator, not the runner's per-process key
    (strong thinks by the clock, so it is left out)."""
    logs = []
    for _ in range(2):
        env = GrassSingleEnv(opponents=["random", "greedy"], limits={"max_hands": 2})
        _episode(env, seed=11)
        assert env.game is not None
        logs.append(list(env.game.events))
    assert logs[0] == logs[1]
