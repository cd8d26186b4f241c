"""The live table (`ladder.relay.views`) and the replay (`engine.replay_frames`) of the same
game tell it alike: for the watchers and for every seat, the lines of every frame and the
table's public fields are identical, over random games of both rulesets and 2-6 seats. Both
come from the engine's observer (`engine.observation`); before issue 34 each had its own copy
of the public fields and of the words for hidden events, and they had drifted ("X is dealt a
hand" live, "X is dealt 6 cards" in the replay).

And no watcher's frame ever holds a card hidden from spectators: every card string in it is
one of the cards the table shows face up (checked against the game's full state)."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest

from engine import Game, Variants, new_game
from engine.cards import Card
from engine.log import dumps
from engine.replay_frames import frames, public_state, seat_state
from ladder.relay.views import LINES_KEPT, TableViews

SLOW = (pytest.mark.slow,)
CODES = frozenset(card.value for card in Card)
VARIANTS = (
    Variants(),
    Variants(give_me_five=True, hidden_deals=True),
    Variants(lucky_or_not=True, learning_hands=True),
)
FAST = {("classic", 3, 0), ("modern", 4, 1)}
"""Games in the fast tier; the others (whole games compared at every event) are `slow`."""
GAMES = [
    pytest.param(ruleset, players, seed, marks=() if (ruleset, players, seed) in FAST else SLOW)
    for ruleset in ("classic", "modern")
    for players in range(2, 7)
    for seed in range(2)
]

FRAME_KEYS = {
    "dealer": "dealer",
    "active": "active",
    "to_act": "to_act",
    "phase": "phase",
    "stack": "stack",
    "wasted": "wasted",
    "totals": "totals",
    "deal": "deal",
    "hand_number": "hand",
}
"""A live view's public fields and their names in a replay's frame."""


TURN_KEYS = ("active", "to_act", "phase")


def card_strings(value: Any) -> Counter[str]:
    """Every string in a JSON-ready value that is a card's code, counted."""
    found: Counter[str] = Counter()
    if isinstance(value, str):
        if value in CODES:
            found[value] += 1
    elif isinstance(value, dict):
        for item in value.values():
            found += card_strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            found += card_strings(item)
    return found


def face_up(game: Game) -> Counter[str]:
    """The cards the table shows face up, read from the game's full state (not a view)."""
    t = game.table
    cards: list[Card] = list(t.wasted)
    for seat in t.seats:
        cards += seat.heat + seat.hassle_under + seat.unprotected
        for card, group in seat.protected:
            cards += [card, *group]
    if t.deal is not None:
        cards += [c for c in (t.deal.give, t.deal.want) if c is not None]
        cards += t.deal.offer + t.deal.ask
    return Counter(card.value for card in cards)


def public_fields(view: dict[str, Any]) -> dict[str, Any]:
    """A live view's table as a replay's frame names it (seats without their names)."""
    table = {name: view[key] for key, name in FRAME_KEYS.items()}
    table["seats"] = [
        {key: value for key, value in seat.items() if key != "name"} for seat in view["seats"]
    ]
    return table


def frame_fields(frame: dict[str, Any], seat: int | None) -> dict[str, Any]:
    table = {name: frame[name] for name in FRAME_KEYS.values()}
    table["seats"] = [
        {key: value for key, value in entry.items() if key not in ("hand", "packet", "kept")}
        for entry in frame["seats"]
    ]
    for index, entry in enumerate(frame["seats"]):
        assert (entry["hand"] is None) == (index != seat), "a hand not the viewer's is shown"
    return table


@pytest.mark.parametrize(("ruleset", "players", "seed"), GAMES)
def test_live_and_replay_frames_tell_the_same_game(ruleset: str, players: int, seed: int) -> None:
    variants = VARIANTS[(players + seed) % len(VARIANTS)]
    game = new_game(ruleset, players, seed, variants, {"max_hands": 1})
    rng = random.Random(seed)
    views = TableViews(game, range(players))
    live: list[tuple[int, dict[int | None, dict[str, Any]]]] = []
    while True:
        shown = views.frames(game)
        live.append((len(game.events), shown))
        # The replay's table now, as its frames are built (`public_state`, `seat_state`).
        for viewer, frame in shown.items():
            now = public_state(game) if viewer is None else seat_state(game, viewer)
            assert public_fields(frame["view"]) == frame_fields(now, viewer)
        watched = shown[None]
        if not game.over:
            leaked = card_strings(watched) - face_up(game)
            assert not leaked, f"the watchers' frame shows hidden cards: {leaked}"
            assert watched["view"]["hand"] is None and watched["hands"] is None
        if game.over:
            break
        game.apply(rng.choice(game.legal_actions()))
    log = [json.loads(line) for line in dumps(game.events).splitlines()]
    for viewer in (None, *range(players)):
        replayed = frames(log, "public" if viewer is None else viewer)
        told: list[str] = []
        upto = [0]  # lines told by the end of each event
        for frame in replayed:
            told += frame["lines"]
            upto.append(len(told))
        for events, shown in live:
            frame = shown[viewer]
            assert frame["lines"] == told[: upto[events]][-LINES_KEPT:], (viewer, events)
            # Numbered as the replay tells them (the page's list starts at this number).
            assert frame["line_first"] == max(upto[events] - LINES_KEPT, 0) + 1
            # The replay's frame of the last event, but for whose turn and the phase: the
            # engine moves them on after its last event of an action, without an event.
            recorded = frame_fields(replayed[events - 1], viewer)
            table = public_fields(frame["view"])
            for key in TURN_KEYS:
                del recorded[key], table[key]
            assert table == recorded, (viewer, events)
            if viewer is not None:
                mine = replayed[events - 1]["seats"][viewer]
                assert frame["view"]["hand"] == mine["hand"]
                assert frame["view"].get("packet") == mine.get("packet")
