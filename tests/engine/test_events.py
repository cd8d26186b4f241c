"""Every event the engine logs has the shape its `TypedDict` in `engine/events.py` gives."""

from __future__ import annotations

import random
import types
import typing
from typing import Any, Literal, NotRequired, get_args, get_origin, get_type_hints

import pytest

from engine import Game, Variants, new_game
from engine.cards import Card
from engine.events import SCHEMAS
from engine.position import game_from_position
from tests.engine.test_seed_examples import two_turns_position


def conforms(value: Any, hint: Any) -> bool:
    """Whether `value` has the type `hint` (the types the schemas use)."""
    origin = get_origin(hint)
    if hint is Any:
        return True
    if origin is NotRequired:
        return conforms(value, get_args(hint)[0])
    if origin is Literal:
        return value in get_args(hint) and type(value) is type(get_args(hint)[0])
    if origin in (typing.Union, types.UnionType):
        return any(conforms(value, arg) for arg in get_args(hint))
    if hint is type(None):
        return value is None
    if origin is list:
        return isinstance(value, list) and all(conforms(v, get_args(hint)[0]) for v in value)
    if origin is dict:
        key, item = get_args(hint)
        return isinstance(value, dict) and all(
            conforms(k, key) and conforms(v, item) for k, v in value.items()
        )
    if typing.is_typeddict(hint):
        return matches(value, hint)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is Card:
        return isinstance(value, Card)
    return isinstance(value, hint)


def matches(event: Any, schema: Any) -> bool:
    hints = get_type_hints(schema, include_extras=True)
    keys = set(event)
    return (
        isinstance(event, dict)
        and schema.__required_keys__ <= keys <= set(hints)
        and all(conforms(event[k], hints[k]) for k in keys)
    )


GAMES = [
    ("modern", 4, Variants()),
    ("classic", 3, Variants(learning_hands=True)),
    ("modern", 5, Variants(give_me_five=True, hidden_deals=True)),
    ("classic", 6, Variants(lucky_or_not=True, hidden_deals=True)),
    ("modern", 2, Variants(lucky_or_not=True)),
]


@pytest.mark.parametrize(("ruleset", "players", "variants"), GAMES)
def test_every_event_matches_its_schema(ruleset: str, players: int, variants: Variants) -> None:
    seen: set[str] = set()
    for seed in range(4):
        game = new_game(ruleset, players, seed, variants, limits={"max_hands": 3})
        rng = random.Random(seed)
        while not game.over:
            game.apply(rng.choice(game.legal_actions()))
        for event in game.events:
            assert matches(event, SCHEMAS[event["e"]]), event
            seen.add(event["e"])
    assert {"header", "hand", "dealt", "draw", "act", "offer", "hand-end", "result"} <= seen


def test_a_position_header_matches_too() -> None:
    game = game_from_position(two_turns_position(), "modern", seed=1)
    assert matches(game.events[0], SCHEMAS["header"])


def test_the_schemas_reject_what_they_should() -> None:
    draw = {"e": "draw", "seat": 1, "secret": {"card": Card.PANAMA}, "see": [1]}
    assert matches(draw, SCHEMAS["draw"])
    assert not matches({**draw, "seat": True}, SCHEMAS["draw"])
    assert not matches({**draw, "extra": 1}, SCHEMAS["draw"])
    assert not matches({k: v for k, v in draw.items() if k != "see"}, SCHEMAS["draw"])
    assert not matches({**draw, "secret": {"card": "panama"}}, SCHEMAS["draw"])


def test_the_event_hook_hears_every_event_once_in_order() -> None:
    heard: list[dict[str, Any]] = []

    def hook(game: Game, event: dict[str, Any]) -> None:
        assert event in game.events  # logged before the hook hears of it
        heard.append(event)

    game = new_game("classic", 4, 3, Variants(give_me_five=True), on_event=hook)
    rng = random.Random(3)
    while not game.over:
        game.apply(rng.choice(game.legal_actions()))
        assert heard == game.events  # all told by the time apply returns
    # Set later, a hook hears the events from then on; copies have none.
    later: list[dict[str, Any]] = []
    other = new_game("modern", 3, 5)
    start = len(other.events)
    other.on_event = lambda game, event: later.append(event)
    assert other.clone().on_event is None
    while not other.over:
        other.apply(rng.choice(other.legal_actions()))
    assert later == other.events[start:]
