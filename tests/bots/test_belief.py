"""Sampling consistent with the opponents' actions (`bots.sdk.belief`): the limits it reads
from a hand's history hold for the real hands when the opponents play sensibly (greedy), its
samples keep them, the uniform sampler does not (the limits bite), and a repaired sample is
still a whole, playable deal."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from bots.sdk import belief, rollout
from engine import Game, Variants, new_game, observe
from engine.cards import Card
from engine.sampling import sample_game


def decisions(
    ruleset: str, players: int, seeds: range, variants: Variants | None = None
) -> Iterator[tuple[Game, dict[str, Any]]]:
    """Seat 0's turn decisions (before its card is played) in games every seat plays greedy,
    with seat 0's view (the whole hand's history)."""
    for seed in seeds:
        game = new_game(ruleset, players, seed, variants or Variants(), limits={"max_hands": 4})
        while not game.over:
            if game.to_act == 0 and game.phase.value == "turn" and not game.played:
                yield game, observe(game, 0)
            game.apply(rollout.choose(game))


@pytest.mark.parametrize(
    ("ruleset", "players", "variants"),
    [
        ("modern", 4, Variants()),
        ("modern", 3, Variants(hidden_deals=True)),
        ("classic", 5, Variants(lucky_or_not=True)),
    ],
)
def test_the_limits_hold_for_the_real_hands_of_sensible_players(
    ruleset: str, players: int, variants: Variants
) -> None:
    limited = 0
    for game, view in decisions(ruleset, players, range(15), variants):
        found = belief.limits(view, view["history"])
        assert all(limit.seat != 0 for limit in found)
        assert belief.satisfied(game, found), (found, [s.hand for s in game.seats])
        limited += bool(found)
    assert limited > 30  # the inference has something to say at many decisions


def test_samples_keep_the_limits_where_uniform_samples_break_them() -> None:
    rng = random.Random(5)
    broken_uniform = broken_belief = checked = 0
    for _, view in decisions("modern", 4, range(12)):
        found = belief.limits(view, view["history"])
        if not found:
            continue
        for _ in range(10):
            checked += 1
            broken_uniform += not belief.satisfied(sample_game(view, rng), found)
            broken_belief += not belief.satisfied(belief.sample(view, found, rng), found)
    assert checked > 300
    assert broken_uniform > checked // 10  # the limits bite: uniform deals break them often
    assert broken_belief == 0


def test_a_closed_market_that_did_not_open_holds_no_market_open() -> None:
    """The case the issue names, by hand: an opponent that discarded with its market closed
    is never dealt a Market Open it could have played (no card reached it since)."""
    rng = random.Random(1)
    seen = 0
    for _, view in decisions("modern", 4, range(30)):
        history = view["history"]
        for limit in belief.limits(view, history):
            if limit.cards == frozenset({Card.MARKET_OPEN}) and limit.most == 0:
                seen += 1
                assert not view["seats"][limit.seat]["market_open"] or any(
                    e.get("seat") == limit.seat and e.get("action") == "play market-open"
                    for e in history
                )
                for _ in range(5):
                    game = belief.sample(view, (limit,), rng)
                    assert Card.MARKET_OPEN not in game.seats[limit.seat].hand
    assert seen > 10


def test_a_repaired_sample_is_a_whole_playable_deal() -> None:
    rng = random.Random(2)
    for real, view in decisions("modern", 4, range(6)):
        found = belief.limits(view, view["history"])
        game = belief.sample(view, found, rng)
        assert Counter(game.table.all_cards()) == Counter(real.table.all_cards())
        assert [len(s.hand) for s in game.seats] == [len(s.hand) for s in real.seats]
        assert sorted(game.seats[0].hand) == sorted(real.seats[0].hand)
        hand = game.hand_no
        while not game.over and game.hand_no == hand:
            game.apply(rollout.choose(game))


def test_no_inference_from_a_seat_the_table_contradicts() -> None:
    """A history this module cannot follow (here: a Market Open it never saw played) gives
    that seat no limits rather than wrong ones."""
    for _, view in decisions("modern", 4, range(8)):
        history = [e for e in view["history"] if e.get("action") != "play market-open"]
        found = belief.limits(view, history)
        opened = [s for s, seat in enumerate(view["seats"]) if seat["market_open"]]
        assert not any(limit.seat in opened for limit in found)


def test_a_pass_round_is_repaired_before_the_earlier_seats_choose_again() -> None:
    """At a paranoia pass the seats before this one in the round chose unseen cards: the sample
    repairs the hands first, then has those seats choose again (here greedy's choice), so each
    passes a card it holds and the round resolves with every card kept."""
    rng = random.Random(3)
    seen = 0
    for seed in range(40):
        real = new_game("modern", 4, seed, Variants(), limits={"max_hands": 2})
        while not real.over:
            if real.to_act == 0 and real.phase.value == "pass" and real.active != 0:
                view = observe(real, 0)
                found = belief.limits(view, view["history"])
                game = belief.sample(view, found, rng, rollout.choose)
                assert game.to_act == 0 and game.phase.value == "pass"
                assert belief.satisfied(game, found)
                chosen = game.table.passes
                assert chosen and all(card in game.seats[s].hand for s, card in chosen.items())
                assert 0 not in chosen
                while game.phase.value == "pass":
                    game.apply(rollout.choose(game))
                assert Counter(game.table.all_cards()) == Counter(real.table.all_cards())
                seen += 1
            real.apply(rollout.choose(real))
    assert seen >= 5
