"""The observer (`engine.observation`): three views of any game, from one table of fields.

A seat's view (`observe`) is the public fields and the seat's own; the public view is the
public fields alone, the same in every seat's view and untouched when every hidden card is
moved; the full view holds every seat's own fields and what nobody sees during play. The
events' words (`event_lines`) read nothing a viewer does not share."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from engine import Game, Variants, new_game, observe
from engine.cards import INFO
from engine.observation import (
    FIELDS,
    PUBLIC_KEYS,
    PUBLIC_SEAT_KEYS,
    SEAT_FIELDS,
    Sight,
    event_lines,
    full_view,
    own_fields,
    public_seat,
    public_view,
)
from tests.engine.test_properties import scramble_hidden

NOBODY = -1
"""A seat no event lets see anything: scrambling for it moves every hidden card."""

GAMES = [
    (ruleset, players, variants)
    for ruleset in ("modern", "classic")
    for players in range(2, 7)
    for variants in (Variants(), Variants(give_me_five=True, hidden_deals=True))
]
TITLE = {card.value: info.title for card, info in INFO.items()}


def positions(ruleset: str, players: int, variants: Variants, seed: int) -> Iterator[Game]:
    """Every fifth position of a one-hand game of random legal play, and the end."""
    game = new_game(ruleset, players, seed, variants, {"max_hands": 1})
    rng = random.Random(seed)
    step = 0
    while not game.over:
        if step % 5 == 0:
            yield game
        game.apply(rng.choice(game.legal_actions()))
        step += 1
    yield game


def test_the_table_names_each_field_once_with_its_sight() -> None:
    names = [f.name for f in FIELDS]
    assert len(names) == len(set(names))
    assert {f.sight for f in FIELDS} == set(Sight)
    assert [f.name for f in SEAT_FIELDS] == list(PUBLIC_SEAT_KEYS)
    assert all(f.sight is Sight.PUBLIC for f in SEAT_FIELDS)  # a seat's hand is never public


@pytest.mark.parametrize(("ruleset", "players", "variants"), GAMES)
def test_three_views_from_one_table(ruleset: str, players: int, variants: Variants) -> None:
    seen_draft = False
    for game in positions(ruleset, players, variants, seed=players * 31):
        public = public_view(game)
        assert list(public) == list(PUBLIC_KEYS)
        full = full_view(game)
        assert {key: full[key] for key in PUBLIC_KEYS} == public
        assert full["seed"] == game.seed and full["events"] == game.events
        for seat in range(game.n):
            seen = observe(game, seat)
            own = own_fields(game, seat)
            # The seat's view is the public fields and its own, in the table's order.
            assert list(seen) == [f.name for f in FIELDS if f.name in public or f.name in own]
            assert {key: seen[key] for key in PUBLIC_KEYS} == public
            assert {f.name for f in FIELDS if f.sight is Sight.SEAT} >= set(own)
            assert {key: seen[key] for key in own} == own == full["own"][seat]
            assert seen["seats"][seat] == public_seat(game.seats[seat])
            assert list(seen["seats"][seat]) == list(PUBLIC_SEAT_KEYS)
            seen_draft = seen_draft or "packet" in own
    assert seen_draft == variants.give_me_five


@pytest.mark.parametrize(("ruleset", "players", "variants"), GAMES)
def test_the_public_view_holds_no_hidden_card(
    ruleset: str, players: int, variants: Variants
) -> None:
    """Every card nobody sees (the hands, the stack, the packets, the secrets of past events)
    moved: the public view and the public lines stay the same; the full view changes."""
    rng = random.Random(players)
    moved = False
    for game in positions(ruleset, players, variants, seed=players * 17):
        other = scramble_hidden(game, NOBODY, rng)
        assert public_view(other) == public_view(game)
        names = list(game.names)
        for event, garbled in zip(game.events, other.events, strict=True):
            assert event_lines(garbled, names, Sight.PUBLIC) == event_lines(
                event, names, Sight.PUBLIC
            )
        moved = moved or full_view(other)["own"] != full_view(game)["own"]
    assert moved  # the scramble does move what is hidden


def test_lines_read_a_secret_only_for_those_who_share_it() -> None:
    game = new_game("modern", 4, 9, Variants(hidden_deals=True), {"max_hands": 1})
    rng = random.Random(9)
    while not game.over:
        game.apply(rng.choice(game.legal_actions()))
    names = list(game.names)
    hidden = 0
    for event in game.events:
        full = " ".join(event_lines(event, names, Sight.FULL))
        if event.get("e") == "header":
            assert str(game.seed) in full
            for viewer in (Sight.PUBLIC, 0):
                assert str(game.seed) not in " ".join(event_lines(event, names, viewer))
            continue
        if "secret" not in event:
            continue
        values = event["secret"].values()
        codes = [c for v in values for c in (v if isinstance(v, list) else [v])]
        titles = [TITLE[c] for c in codes if c in TITLE]
        unforced = {key: value for key, value in event.items() if key != "auto"}
        for viewer in (Sight.PUBLIC, *range(game.n)):
            words = " ".join(event_lines(event, names, viewer))
            if viewer in event["see"]:
                assert words == " ".join(event_lines(unforced, names, Sight.FULL))
                continue
            hidden += 1
            assert not [t for t in titles if t in words], (event, viewer, words)
            assert "forced" not in words
    assert hidden > 100


def test_the_dealt_wording_is_the_same_for_every_viewer_who_is_not_dealt() -> None:
    game = new_game("classic", 3, 4)
    names = list(game.names)
    dealt = next(e for e in game.events if e.get("e") == "dealt" and e["seat"] == 1)
    assert event_lines(dealt, names, Sight.PUBLIC) == [f"{names[1]} is dealt a hand"]
    assert event_lines(dealt, names, 0) == [f"{names[1]} is dealt a hand"]
    assert "," in event_lines(dealt, names, 1)[0]  # the seat reads its own cards
