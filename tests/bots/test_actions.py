"""The fixed action space (`bots.sdk.actions`) and the observation vector (`bots.sdk.features`):
every action the engine offers has an index that maps back to the same text, in every ruleset,
variant and table size; the vector has its documented size everywhere. Standard library only,
like the SDK: these run without the `rl` extra."""

from __future__ import annotations

import random

import pytest

from bots.sdk import actions, features
from engine import Variants, new_game, observe


def _configurations() -> list[tuple[str, int, Variants]]:
    rng = random.Random(17)
    found = []
    for ruleset in ("modern", "classic"):
        for players in range(2, 7):
            for _ in range(3):
                variants = Variants(
                    give_me_five=rng.random() < 0.5,
                    hidden_deals=rng.random() < 0.5,
                    lucky_or_not=rng.random() < 0.3,
                    learning_hands=rng.random() < 0.3,
                )
                found.append((ruleset, players, variants))
    return found


@pytest.mark.parametrize(("ruleset", "players", "variants"), _configurations())
def test_every_legal_action_has_an_index_that_maps_back(
    ruleset: str, players: int, variants: Variants
) -> None:
    seen: set[int] = set()
    for seed in range(6):
        rng = random.Random(seed)
        game = new_game(ruleset, players, seed, variants, limits={"max_hands": 4})
        while not game.over:
            seat = game.to_act
            legal = game.legal_actions()
            indices = actions.indices(legal, seat, players)
            assert len(set(indices)) == len(indices)
            assert [actions.to_text(i, seat, players) for i in indices] == legal
            seen.update(indices)
            vector = features.encode(observe(game, seat, since=len(game.events)))
            assert len(vector) == features.SIZE
            game.apply(rng.choice(legal))
    assert len(seen) > 40


def test_seats_are_relative_to_the_acting_seat() -> None:
    felony = actions.INDEX["play felony @+1"]
    assert actions.to_index("play felony @2", 1, 4) == felony
    assert actions.to_index("play felony @0", 5, 6) == felony
    assert actions.to_text(felony, 3, 4) == "play felony @0"
    assert (
        actions.to_index("swap mexico @0 panama", 2, 3) == actions.INDEX["swap mexico @+1 panama"]
    )
    with pytest.raises(ValueError, match="names no seat"):
        actions.to_text(actions.INDEX["deal @+4"], 0, 3)
    with pytest.raises(KeyError):
        actions.to_index("play nonsense", 0, 4)


def test_the_documented_sizes() -> None:
    """README and the module docstrings state these; a change of either is a new space."""
    assert actions.SIZE == 609
    assert len(set(actions.ACTIONS)) == actions.SIZE
    assert features.SIZE == len(features.NAMES) == 405
    groups = [a for a in actions.ACTIONS if a.startswith("play lust-conquers-all ")]
    assert "play lust-conquers-all colombia+jamaica" in groups
    assert "play lust-conquers-all panama" in groups
    assert not any("dr-feelgood" in a for a in groups)
