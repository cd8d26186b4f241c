"""Determinization: sampled games agree with everything the observing seat knows."""

from __future__ import annotations

import functools
import random
from collections import Counter

import pytest

from engine import Game, Variants, new_game, observe
from engine.sampling import SAMPLED, deal, sample_game

PUBLIC = ("seats", "wasted", "stack", "totals", "hand", "active", "to_act", "phase", "legal")


@pytest.mark.parametrize("ruleset", ["modern", "classic"])
@pytest.mark.parametrize("players", [2, 4, 6])
def test_samples_match_the_observation_and_keep_every_card(ruleset: str, players: int) -> None:
    checked = 0
    phases: Counter[str] = Counter()
    for seed in range(6):
        game = new_game(ruleset, players, seed, Variants(), limits={"max_hands": 1})
        rng = random.Random(seed)
        while not game.over:
            chance = 0.2 if game.phase.value == "turn" else 0.6
            if game.phase.value in SAMPLED and rng.random() < chance:
                phases[game.phase.value] += 1
                view = observe(game, game.to_act)
                sample = sample_game(view, random.Random(checked))
                again = observe(sample, game.to_act)
                assert {k: again[k] for k in PUBLIC} == {k: view[k] for k in PUBLIC}
                assert Counter(sample.table.all_cards()) == Counter(game.table.all_cards())
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
    # A paranoia's waste and passes are sampled too (the first hand of six games holds a few).
    assert phases["pass"] > 0 and phases["turn"] > 10, phases


def test_sampling_refuses_other_phases() -> None:
    game = new_game("modern", 3, 1, Variants(give_me_five=True))
    view = observe(game, game.to_act)
    assert view["phase"] == "draft"
    with pytest.raises(ValueError, match="turn, waste and pass decisions"):
        sample_game(view, random.Random(0))


def _to_pass_round(seed: int, players: int) -> tuple[Game | None, int]:
    """A modern game played at random up to a pass decision of a seat that is not the first
    of the round (some seats have chosen their cards already)."""
    game = new_game("modern", players, seed, Variants(), limits={"max_hands": 1})
    rng = random.Random(seed)
    while not game.over:
        if game.phase.value == "pass" and game.to_act != game.active:
            return game, game.to_act
        game.apply(rng.choice(game.legal_actions()))
    return None, -1


def _first_card(asked: list[int], game: Game) -> str:
    asked.append(game.to_act)
    return next(iter(game.moves))


def test_a_pass_round_is_sampled_after_the_earlier_seats_choose_by_the_policy() -> None:
    found = 0
    for seed in range(40):
        game, me = _to_pass_round(seed, 4)
        if game is None:
            continue
        found += 1
        view = observe(game, me)
        # The round from its start: the card player first, every seat still to choose.
        start = deal(view, random.Random(seed))
        assert start.to_act == game.active and start.table.passes == {}
        asked: list[int] = []
        sample = sample_game(view, random.Random(seed), functools.partial(_first_card, asked))
        n = game.n
        before = [(game.active + k) % n for k in range((me - game.active) % n)]
        assert asked == before  # each earlier seat once, in the round's order; not the observer
        assert sample.to_act == me and sample.phase.value == "pass"
        assert sorted(sample.table.passes) == sorted(before)
        assert sample.table.queue == game.table.queue  # the seats after, as in the game
        assert Counter(sample.table.all_cards()) == Counter(game.table.all_cards())
        # The round resolves in the sample as in a game, every card still there once.
        while sample.phase.value == "pass":
            sample.apply(sample.legal_actions()[0])
        assert Counter(sample.table.all_cards()) == Counter(game.table.all_cards())
    assert found >= 3
