"""Moves as records (`engine.moves`): every text the engine offers parses to a record that
writes the same text back and says what the engine's own effect arguments say; texts the
engine could not write are refused with the reason."""

from __future__ import annotations

import random

import pytest

from bots.sdk import actions
from engine import Card, Variants, deals, effects, hands, new_game
from engine.moves import SEATS, Move, parse
from engine.rules import MAX_PLAYERS


def _games() -> list[tuple[str, int, Variants, int]]:
    rng = random.Random(5)
    found = []
    for ruleset in ("modern", "classic"):
        for players in range(2, 7):
            variants = Variants(
                give_me_five=rng.random() < 0.5,
                hidden_deals=rng.random() < 0.5,
                lucky_or_not=rng.random() < 0.3,
            )
            found += [(ruleset, players, variants, seed) for seed in range(3)]
    return found


def _expected(effect: object, args: tuple[object, ...], modern: bool) -> dict[str, object]:
    """What a record must hold, read from the engine's (effect, args) for the same text
    (classic paranoia's second argument is its own player's seat, which the text leaves out)."""
    if effect is effects.play_heat_on or (effect is effects.play_paranoia and modern):
        return {"card": args[0], "target": args[1]}
    if effect is effects.play_paranoia:
        return {"card": args[0], "target": None}
    if effect is effects.play_steal:
        return {"card": Card.STEAL, "target": args[0], "peddle": args[1]}
    if effect is effects.play_pay_fine:
        return {"card": Card.PAY_FINE, "peddle": args[0], "from_protected": args[1]}
    if effect is effects.play_protected:
        return {"card": args[0], "group": tuple(args[1])}
    if effect is deals.swap:
        return {"kind": "swap", "card": args[0], "target": args[1], "peddle": args[2]}
    if effect is effects.discard:
        return {"kind": "discard", "card": args[0]}
    if effect is hands.end:
        return {"kind": "end"}
    return {}


@pytest.mark.parametrize(("ruleset", "players", "variants", "seed"), _games())
def test_every_legal_text_is_a_record_that_writes_it_back(
    ruleset: str, players: int, variants: Variants, seed: int
) -> None:
    rng = random.Random(seed)
    game = new_game(ruleset, players, seed, variants, limits={"max_hands": 3})
    kinds: set[str] = set()
    while not game.over:
        records = game.legal_moves()
        assert [m.text for m in records] == game.legal_actions()
        for (text, (effect, args)), move in zip(game.moves.items(), records, strict=True):
            assert move.kind == text.split()[0]
            for field, value in _expected(effect, args, ruleset == "modern").items():
                assert getattr(move, field) == value, (text, field)
            kinds.add(move.kind)
        game.apply(rng.choice(game.legal_actions()))
    assert {"play", "discard"} <= kinds


def test_the_whole_action_space_parses() -> None:
    """Every action text a learning bot can name, at every seat of a full table."""
    for index in range(actions.SIZE):
        for seat in range(SEATS):
            text = actions.to_text(index, seat, SEATS)
            assert parse(text).text == text


def test_records_hold_what_the_text_says() -> None:
    assert parse("play felony @2") == Move("play", Card.FELONY, 2)
    assert parse("play steal-your-neighbours-pot @1 panama") == Move(
        "play", Card.STEAL, 1, Card.PANAMA
    )
    assert parse("play pay-fine mexico(p)") == Move(
        "play", Card.PAY_FINE, peddle=Card.MEXICO, from_protected=True
    )
    assert parse("play grab-a-snack colombia").group == (Card.COLOMBIA,)
    assert parse("play lust-conquers-all mexico+panama").group == (Card.MEXICO, Card.PANAMA)
    assert parse("swap mexico @0 panama") == Move("swap", Card.MEXICO, 0, Card.PANAMA)
    assert parse("give nothing") == Move("give")
    assert parse("accept") == Move("accept")
    assert parse("accept panama") == Move("accept", Card.PANAMA)
    assert parse("deal @3").target == 3
    assert parse("play sold-out").target is None  # classic paranoia names no one


@pytest.mark.parametrize(
    "text",
    [
        "",
        "play",
        "end now",
        "play nope",
        "play felony",  # Heat On names its target
        "play felony @6",
        "play felony @01",
        "play felony @-1",
        "play felony  @1",
        "play felony @1 ",
        "play market-open @1",
        "play panama panama",
        "play lust-conquers-all @1 panama",
        "play lust-conquers-all",
        "play lust-conquers-all panama+felony",
        "play pay-fine felony",
        "play steal-your-neighbours-pot panama",
        "play steal-your-neighbours-pot @1 panama(p)",
        "swap panama @1",
        "swap panama @1 felony",
        "discard nothing",
        "discard panama panama",
        "offer felony",
        "deal 1",
        "Play felony @1",
    ],
)
def test_texts_the_engine_cannot_write_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a move"):
        parse(text)


def test_seat_numbers_cover_the_largest_table() -> None:
    assert SEATS == MAX_PLAYERS
