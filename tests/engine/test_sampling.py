"""Determinization: sampled games agree with everything the observing seat knows."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from engine import Variants, new_game, observe
from engine.sampling import sample_game

PUBLIC = ("seats", "wasted", "stack", "totals", "hand", "active", "to_act", "phase", "legal")


@pytest.mark.parametrize("ruleset", ["modern", "classic"])
@pytest.mark.parametrize("players", [2, 4, 6])
def test_samples_match_the_observation_and_keep_every_card(ruleset: str, players: int) -> None:
    checked = 0
    for seed in range(6):
        game = new_game(ruleset, players, seed, Variants(), limits={"max_hands": 1})
        rng = random.Random(seed)
        while not game.over:
            if game.phase.value == "turn" and rng.random() < 0.2:
                view = observe(game, game.to_act)
                sample = sample_game(view, random.Random(checked))
                again = observe(sample, game.to_act)
                assert {k: again[k] for k in PUBLIC} == {k: view[k] for k in PUBLIC}
                assert Counter(sample.all_cards()) == Counter(game.all_cards())
                # Hidden cards really are re-dealt, not copied from the true game.
                others = [s.hand for i, s in enumerate(sample.seats) if i != game.to_act]
                truth = [s.hand for i, s in enumerate(game.seats) if i != game.to_act]
                if sample.stack != game.stack or others != truth:
                    checked += 1
                # The sample plays on to the end of the hand.
                while not sample.over and sample.hand_no == game.hand_no:
                    sample.apply(rng.choice(sample.legal_actions()))
            game.apply(rng.choice(game.legal_actions()))
    assert checked > 10


def test_sampling_refuses_other_phases() -> None:
    game = new_game("modern", 3, 1, Variants(give_me_five=True))
    view = observe(game, game.to_act)
    assert view["phase"] == "draft"
    with pytest.raises(ValueError, match="turn decisions"):
        sample_game(view, random.Random(0))
