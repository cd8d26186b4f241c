"""The rollout policy (`bots.sdk.rollout`) is greedy's one policy on the engine's own table:
at every position, under both rulesets, 2 to 6 seats and the variants that add decisions, it
chooses what `greedy.choose` chooses for a bot's `Observation` of the same position (the
protocol's texts, parsed into records), so the engine's seats and records and the wire's
views cannot drift apart unseen."""

from __future__ import annotations

import random

import pytest

from bots.sdk import Observation, greedy, rollout
from engine import Game, Variants, new_game, observe


def positions(ruleset: str, players: int, seed: int, variants: Variants) -> list[Game]:
    """Every decision of a game where each seat plays greedy or random at random (random moves
    reach the odd positions greedy alone never would), as copies."""
    rng = random.Random(seed)
    game = new_game(ruleset, players, seed, variants, limits={"max_hands": 3})
    seen: list[Game] = []
    while not game.over:
        seen.append(game.clone())
        view = rollout.EngineView(game)
        game.apply(greedy.choose(view) if rng.random() < 0.6 else rng.choice(view.legal))
    return seen


@pytest.mark.parametrize(
    ("ruleset", "players", "variants"),
    [
        ("modern", 4, Variants()),
        ("modern", 2, Variants()),
        ("modern", 6, Variants(hidden_deals=True, give_me_five=True)),
        ("classic", 4, Variants()),
        ("classic", 5, Variants(lucky_or_not=True)),
    ],
)
def test_it_chooses_as_greedy_does(ruleset: str, players: int, variants: Variants) -> None:
    compared = turns = 0
    for seed in range(12):
        for game in positions(ruleset, players, seed, variants):
            view = observe(game, game.to_act)
            expected = greedy.choose(Observation(view, tuple(view["history"])))
            assert rollout.choose(game) == expected, (seed, game.decision)
            compared += 1
            turns += game.phase.value == "turn"
    assert turns > 500 and compared > turns


def test_the_best_swap_is_greedys() -> None:
    for seed in range(20):
        for game in positions("modern", 4, seed, Variants()):
            legal = list(game.moves)
            if not any(a.startswith("swap ") for a in legal):
                continue
            view = rollout.EngineView(game)
            swaps = [a for a in legal if a.startswith("swap ")]
            gain = max(
                swaps, key=lambda a: greedy.PEDDLE[a.split()[3]] - greedy.PEDDLE[a.split()[1]]
            )
            wins = greedy.PEDDLE[gain.split()[3]] > greedy.PEDDLE[gain.split()[1]]
            assert rollout.best_swap(game) == (gain if wins else None), view.legal
