"""Invariants over many random games (Hypothesis): cards conserved, hand sizes, no negative
modern totals, replay equality, observation secrecy, and illegal input changing nothing."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Game, IllegalAction, Phase, Variants, new_game, observe
from engine.cards import Card
from engine.hands import hand_deck as hand_deck_of
from engine.log import dumps, read_log, replay
from engine.rules import resolve_ruleset
from tests.tiers import examples

variants_strategy = st.builds(
    Variants,
    give_me_five=st.booleans(),
    hidden_deals=st.booleans(),
    lucky_or_not=st.booleans(),
    learning_hands=st.booleans(),
    target=st.sampled_from([250_000, 500_000, 1_000_000]),
)
game_args = st.tuples(
    st.sampled_from(["modern", "classic"]),
    st.integers(min_value=2, max_value=6),
    st.integers(min_value=0, max_value=2**32),
    variants_strategy,
)


def play_randomly(game: Game, rng: random.Random, check: bool = True) -> None:
    while not game.over:
        if check:
            check_invariants(game)
        actions = game.legal_actions()
        assert actions, game.decision
        game.apply(rng.choice(actions))


def hand_deck(game: Game) -> Counter[object]:
    return Counter(hand_deck_of(game, game.hand_no))


def check_invariants(game: Game) -> None:
    assert Counter(game.table.all_cards()) == hand_deck(game)
    assert len(game.table.all_cards()) + len(game.out_of_play) == game.ruleset.deck_size
    if game.phase is not Phase.DRAFT:
        for index, seat in enumerate(game.seats):
            expected = 7 if index == game.active and not game.played else 6
            assert len(seat.hand) == expected, (index, game.decision)
    if game.ruleset.total_floor_zero:
        assert min(game.totals) >= 0
    assert game.to_act in range(game.n)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game_args)
def test_random_games_keep_every_invariant_and_replay_exactly(args: tuple) -> None:
    ruleset, players, seed, variants = args
    game = new_game(ruleset, players, seed, variants, limits={"max_hands": 2})
    play_randomly(game, random.Random(seed))
    assert game.result is not None
    assert sorted(game.result["ranks"])[0] == 1
    if game.ruleset.total_floor_zero:
        assert min(game.totals) >= 0
    # The log replays to the same events and result.
    again = replay(read_log_from_text(dumps(game.events)))
    assert again.events == game.events
    assert again.result == game.result


def read_log_from_text(text: str) -> list[dict]:
    import io

    return read_log(io.BytesIO(text.encode()))


def test_a_thousand_one_hand_games_conserve_cards() -> None:
    """1,000 quick games (one hand each) across rulesets, sizes and variants."""
    for index in range(1000):
        rng = random.Random(index)
        variants = Variants(
            give_me_five=index % 3 == 0,
            hidden_deals=index % 5 == 0,
            lucky_or_not=index % 7 == 0,
            learning_hands=index % 11 == 0,
        )
        ruleset = ("modern", "classic")[index % 2]
        limits = {"max_hands": 1, "max_deals_per_turn": 1}
        game = new_game(ruleset, 2 + index % 5, index, variants, limits=limits)
        step = 0
        while not game.over:
            actions = game.legal_actions()
            game.apply(actions[rng.randrange(len(actions))])
            step += 1
            if step % 4 == 0 and not game.over:
                assert Counter(game.table.all_cards()) == hand_deck(game)
        assert game.hand_no == 1


def scramble_hidden(game: Game, seat: int, rng: random.Random) -> Game:
    """A copy of `game` in which everything `seat` may not see is reshuffled: the other hands
    and the stack swap cards (keeping counts), and others' secrets in past events are garbled."""
    table = game.table.copy()
    pools: list[list] = [table.stack] + [s.hand for i, s in enumerate(table.seats) if i != seat]
    if table.packets:
        pools += [p for i, p in enumerate(table.packets) if i != seat]
    cards = [c for pool in pools for c in pool]
    rng.shuffle(cards)
    for pool in pools:
        size = len(pool)
        pool[:] = cards[:size]
        del cards[:size]
    garbled = []
    for event in table.events:
        if "see" in event and seat not in event["see"]:
            event = dict(event)
            if "secret" in event:
                event["secret"] = {"garbled": True}
            if "action" in event:
                event["action"] = "garbled"
        garbled.append(event)
    table.events = garbled
    return Game.from_table(game.ruleset, game.variants, game.seed, game.names, table)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game_args, st.integers(min_value=0, max_value=10**6))
def test_observations_never_contain_a_hidden_card(args: tuple, salt: int) -> None:
    ruleset, players, seed, variants = args
    game = new_game(ruleset, players, seed, variants, limits={"max_hands": 1})
    rng = random.Random(seed ^ salt)
    step = 0
    while not game.over:
        if step % 7 == 0:
            for seat in range(game.n):
                seen = observe(game, seat)
                # Legal actions of the seat to act depend on its own cards: keep them out of
                # the comparison for other seats only.
                assert observe(scramble_hidden(game, seat, rng), seat) == seen
                assert all("auto" not in e for e in seen["history"])
        game.apply(rng.choice(game.legal_actions()))
        step += 1


def test_scrambling_does_change_what_is_hidden() -> None:
    """Guard for the secrecy test: the scramble really moves hidden cards."""
    game = new_game("modern", 4, 5)
    rng = random.Random(1)
    other = scramble_hidden(game, 0, rng)
    assert [s.hand for s in other.seats[1:]] != [s.hand for s in game.seats[1:]]
    assert other.seats[0].hand == game.seats[0].hand


@pytest.mark.parametrize("bad", ["", "play", "play nonsense", "end", "PLAY MARKET-OPEN", None, 7])
def test_illegal_input_names_the_decision_and_changes_nothing(bad: object) -> None:
    game = new_game("modern", 4, 11)
    before = (list(game.events), [observe(game, s) for s in range(4)], game.legal_actions())
    with pytest.raises(IllegalAction) as info:
        game.apply(bad)  # type: ignore[arg-type]
    assert "legal actions are:" in str(info.value)
    assert f"seat {game.to_act}" in str(info.value)
    assert (list(game.events), [observe(game, s) for s in range(4)], game.legal_actions()) == before


def test_same_seed_and_decisions_give_the_same_game() -> None:
    logs = []
    for _ in range(2):
        game = new_game("classic", 5, 99, Variants(lucky_or_not=True, give_me_five=True))
        play_randomly(game, random.Random(3), check=False)
        logs.append(dumps(game.events))
    assert logs[0] == logs[1]
    other = new_game("classic", 5, 100, Variants(lucky_or_not=True, give_me_five=True))
    play_randomly(other, random.Random(3), check=False)
    assert dumps(other.events) != logs[0]


def hand_deals(game: Game) -> dict[int, list[object]]:
    """Each hand's opening: its `hand` line and the cards dealt, as the log shows them."""
    deals: dict[int, list[object]] = {}
    current: list[object] | None = None
    for event in game.events:
        if event["e"] == "hand":
            current = deals.setdefault(event["hand"], [event])
        elif event["e"] == "dealt" and current is not None:
            current.append(event)
        else:
            current = None
    return deals


@settings(max_examples=examples(20), deadline=None)
@given(
    ruleset=st.sampled_from(["modern", "classic"]),
    players=st.integers(min_value=2, max_value=6),
    seed=st.integers(min_value=0, max_value=2**32),
    variants=st.builds(
        Variants, lucky_or_not=st.just(True), hidden_deals=st.booleans(), target=st.just(1_000_000)
    ),
)
def test_a_seed_deals_the_same_cards_whatever_is_played(
    ruleset: str, players: int, seed: int, variants: Variants
) -> None:
    """Duplicate tournaments replay a seed once per seat rotation: however differently the
    bots play (Lucky or not's random takes included), every hand opens with the same deal."""
    games = []
    for policy in (1, 2):
        game = new_game(ruleset, players, seed, variants)
        play_randomly(game, random.Random(policy), check=False)
        games.append(hand_deals(game))
    common = set(games[0]) & set(games[1])
    assert len(common) >= 2
    for hand in common:
        assert games[0][hand] == games[1][hand], f"hand {hand}"


_JSON_SAFE = re.compile(r"[a-z0-9 @()+-]+")
"""Texts that are JSON string contents as they stand: no quote, backslash, control character
or anything outside ASCII (the bot runner writes them between quotes without escaping)."""


def test_card_names_are_json_safe_as_they_stand() -> None:
    for card in Card:
        assert _JSON_SAFE.fullmatch(card.value), card
        assert f'"{card}"' == json.dumps(card.value)  # a card formats as its name


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game_args)
def test_moves_are_json_safe_and_never_change_once_offered(args: tuple) -> None:
    """`engine.game.Moves`: what the bot runner (`bots.runner.feed`, both protocol versions)
    relies on to write the legal actions and the notes without escaping them, and to keep the
    text of a moves dict for as long as the game offers that dict again."""
    ruleset, n, seed, chosen = args
    game = new_game(ruleset, n, seed, chosen, {"max_hands": 3})
    rng = random.Random(seed)
    offered: dict[int, tuple[dict[str, object], list[str]]] = {}
    while not game.over:
        moves = game.moves
        keys = list(moves)
        kept = offered.setdefault(id(moves), (moves, keys))
        assert kept[0] is not moves or kept[1] == keys, "a moves dict changed after it was offered"
        for text in keys:
            assert _JSON_SAFE.fullmatch(text), text
        for seat in game.seats:
            for note in seat.notes:
                for word in note:
                    assert _JSON_SAFE.fullmatch(word), note
        game.apply(rng.choice(keys))
    for moves, keys in offered.values():
        assert list(moves) == keys, "a moves dict changed after it was offered"


def test_a_game_refuses_a_ruleset_that_is_not_its_named_edition() -> None:
    """`Game.from_table` checks the ruleset against its named edition (a log could not replay
    anything else); the check is skipped only for the very objects last found good (a game's
    clones), never for an edited copy of them."""
    game = new_game("modern", 4, 5)
    game.clone()  # the game's own ruleset and variants, checked and remembered
    edited = dataclasses.replace(game.ruleset, bonus=game.ruleset.bonus + 1)
    with pytest.raises(ValueError, match="differs from the named edition"):
        Game.from_table(edited, game.variants, game.seed, game.names, game.table.copy())
    equal = dataclasses.replace(game.ruleset)  # the same edition, another object
    copy = Game.from_table(equal, game.variants, game.seed, game.names, game.table.copy())
    assert copy.legal_actions() == game.legal_actions()
    with pytest.raises(ValueError, match="differs from the named edition"):
        Game.from_table(edited, game.variants, game.seed, game.names, game.table.copy())


def test_a_clone_draws_what_the_game_would_draw() -> None:
    """A copied table's random streams go on exactly as the original's (they are copied
    without being seeded first)."""
    game = new_game("classic", 3, 9, Variants(lucky_or_not=True))
    rng = random.Random(9)
    for _ in range(200):
        game.apply(rng.choice(game.legal_actions()))
    clone = game.clone()
    choices = random.Random(10)
    while not game.over:
        action = choices.choice(game.legal_actions())
        game.apply(action)
        clone.apply(action)
    assert clone.events == game.events


def test_resolve_ruleset_hands_out_one_ruleset_per_input() -> None:
    """Kept by input (so a game's copies share it), never across different inputs."""
    three = resolve_ruleset("modern", Variants(), {"max_hands": 3})
    assert three is resolve_ruleset("modern", Variants(), {"max_hands": 3})
    assert three.max_hands == 3 and three.target == 250_000
    assert resolve_ruleset("modern", Variants(), {"max_hands": 4}).max_hands == 4
    assert resolve_ruleset("modern", Variants(target=500_000), {"max_hands": 3}).target == 500_000
    assert resolve_ruleset("classic", Variants(), {"max_hands": 3}).name == "classic"
    with pytest.raises(ValueError, match="positive integer"):
        resolve_ruleset("modern", Variants(), {"max_hands": 0})
