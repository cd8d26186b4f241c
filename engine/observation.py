"""The observer: every view of a game, from one table of fields that says who may see each.

Three views of any game state (as OpenSpiel builds every observation from one observer):

- a seat's (`observe`, what a bot in the seat is sent): the public fields and that seat's own;
- the public one (`public_view`, what a spectator and a live table's watchers may see);
- the full one (`full_view`, replays after the end, the referee): the public fields, every
  seat's own fields, and what nobody sees during play (the seed, unredacted events).

`FIELDS` (the table) and `SEAT_FIELDS` (a seat's entry in `seats`) name each field once with
its `Sight`; a view is the fields its viewer may see, in the table's order, so a field added
to the table reaches exactly the views its sight allows and no copy elsewhere has to learn of
it. Hidden facts of past events reach a view only through `redact`, and their words only
through `event_lines` (the wording itself is the transcript's, `engine.transcript`).

Views are plain JSON-ready dicts, so the bot protocol can send them unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from operator import attrgetter
from typing import Any, Final, Literal

from engine.cards import ORDER, Card
from engine.game import Event, Game
from engine.rules import ruleset_limits
from engine.state import PHASE_TEXT, Phase, Seat
from engine.transcript import describe, describe_hidden

_TEXT: dict[Card, str] = {card: card.value for card in Card}
_ORDER_OF = ORDER.__getitem__


def _sorted(cards: list[Card]) -> list[str]:
    return [_TEXT[c] for c in sorted(cards, key=_ORDER_OF)]


def _texts(cards: list[Card]) -> list[str]:
    return [_TEXT[c] for c in cards]


class Sight(Enum):
    """Who may see a field."""

    PUBLIC = "public"
    """Everyone alike: every seat, spectators, live tables, replays."""
    SEAT = "seat"
    """The seat's own (its hand, notes, legal moves); the full view holds it for every seat."""
    FULL = "full"
    """Nobody during play: the full view only (replays after the end, the referee)."""


Viewer = int | Literal[Sight.PUBLIC, Sight.FULL]
"""Who looks: a seat number, the public (a spectator), or the full view."""


@dataclass(frozen=True, slots=True)
class Look:
    """What a field's value is taken from: the game, the seat looking (-1 for the public and
    full views, which belong to no seat) and where its history starts."""

    game: Game
    seat: int
    since: int | None


_ABSENT: Final = object()
"""A field's value when the field is not in the view at all (draft cards outside a draft)."""


@dataclass(frozen=True, slots=True)
class Field:
    """One field of the views: its name, who may see it, and how it is read from the game."""

    name: str
    sight: Sight
    value: Callable[[Look], Any]


@dataclass(frozen=True, slots=True)
class SeatField:
    """One field of a seat's public entry (`seats` in every view): read from the `Seat`."""

    name: str
    sight: Sight
    value: Callable[[Seat], Any]


# ---------------------------------------------------------------------- redaction

_PRIVATE = ("secret", "see", "auto")


def redact(event: Event, seat: int | None) -> Event:
    """The event as `seat` saw it (seat None: a spectator who sees only public facts).

    Private parts live under `secret` and are kept only for the seats in `see`; the `auto`
    flag is dropped because it would tell others that a player had no choice.
    """
    if "see" not in event and "auto" not in event and "secret" not in event:
        return dict(event)  # public as it stands (the header too)
    if event.get("e") == "header":
        return dict(event)
    shown = {k: v for k, v in event.items() if k not in _PRIVATE}
    see = event.get("see")
    if "secret" in event and see is not None and seat in see:
        shown.update(event["secret"])
    elif see is not None and "secret" not in event and seat not in see:
        # A secret decision (a pass, a draft pick): others learn only that it was made.
        shown.pop("action", None)
    return shown


def event_lines(event: Event, names: Sequence[str], viewer: Viewer) -> list[str]:
    """One event in words as `viewer` may read it: the one wording of every view (live tables,
    replays). An event whose secret the viewer does not share reads as the transcript's
    hidden wording ("draws a card"); the header hides the seed from all but the full view (it
    decides every shuffle); `auto` ("forced") is read only by the full view, as `redact`
    drops it. Runner notes are not game events and have no words here."""
    kind = event.get("e")
    if kind == "note":
        return []
    if viewer is Sight.FULL:
        shown = event
    elif kind == "header":
        shown = {**event, "seed": "(hidden)"}
    else:
        see = event.get("see")
        if see is not None and viewer not in see:
            hidden = describe_hidden(event, names)
            if hidden is not None:
                return hidden
            shown = redact(event, None if viewer is Sight.PUBLIC else viewer)
        elif "auto" in event:
            shown = {key: value for key, value in event.items() if key != "auto"}
        else:
            shown = event
    try:
        lines = describe(shown, names)
    except (KeyError, IndexError, TypeError):
        return [f"({kind})"]
    return lines if kind == "header" else [line.strip() for line in lines]


# ---------------------------------------------------------------------- the table


SEAT_FIELDS: tuple[SeatField, ...] = (
    SeatField("name", Sight.PUBLIC, attrgetter("name")),
    SeatField("cards", Sight.PUBLIC, lambda s: len(s.hand)),
    SeatField("market_open", Sight.PUBLIC, attrgetter("market_open")),
    SeatField("heat", Sight.PUBLIC, lambda s: _texts(s.heat)),
    SeatField("hassle_under", Sight.PUBLIC, lambda s: _texts(s.hassle_under)),
    SeatField("unprotected", Sight.PUBLIC, lambda s: _sorted(s.unprotected)),
    SeatField(
        "protected",
        Sight.PUBLIC,
        lambda s: [{"card": _TEXT[p], "covers": _sorted(group)} for p, group in s.protected],
    ),
    SeatField("skips", Sight.PUBLIC, attrgetter("skips")),
    SeatField("extra_turns", Sight.PUBLIC, attrgetter("extra_turns")),
)
"""A seat's entry in `seats`, field by field. Every field is public: a seat's hand is a field
of the seat's own view (`hand`), never of its entry."""

_SEAT_PUBLIC = tuple((f.name, f.value) for f in SEAT_FIELDS if f.sight is Sight.PUBLIC)


def public_seat(s: Seat) -> dict[str, Any]:
    """A seat as every player sees it: its entry in `seats`. Shared with whatever sends
    observations as changes (the bot runner's protocol version 2) and with the replay frames,
    so that a seat's entry has one definition."""
    return {name: value(s) for name, value in _SEAT_PUBLIC}


PUBLIC_SEAT_KEYS: tuple[str, ...] = tuple(f.name for f in SEAT_FIELDS if f.sight is Sight.PUBLIC)


def _history(look: Look) -> list[Event]:
    t = look.game.table
    start = t.hand_start_event if look.since is None else look.since
    return [redact(event, look.seat) for event in t.events[start:]]


def _draft(cards: Callable[[Look], list[list[Card]]]) -> Callable[[Look], Any]:
    """A draft field: the seat's cards during a Give me five draft, absent otherwise."""

    def value(look: Look) -> Any:
        t = look.game.table
        if t.phase is Phase.DRAFT and t.packets:
            return _sorted(cards(look)[look.seat])
        return _ABSENT

    return value


FIELDS: tuple[Field, ...] = (
    Field("seat", Sight.SEAT, lambda look: look.seat),
    Field("players", Sight.PUBLIC, lambda look: list(look.game.names)),
    Field("ruleset", Sight.PUBLIC, lambda look: look.game.ruleset.name),
    Field("variants", Sight.PUBLIC, lambda look: look.game.variants.as_dict()),
    Field("target", Sight.PUBLIC, lambda look: look.game.ruleset.target),
    Field("limits", Sight.PUBLIC, lambda look: ruleset_limits(look.game.ruleset)),
    Field("hand_number", Sight.PUBLIC, lambda look: look.game.table.hand_no),
    Field("dealer", Sight.PUBLIC, lambda look: look.game.table.dealer),
    Field("active", Sight.PUBLIC, lambda look: look.game.table.active),
    Field("to_act", Sight.PUBLIC, lambda look: look.game.table.to_act),
    Field("phase", Sight.PUBLIC, lambda look: PHASE_TEXT[look.game.table.phase]),
    Field(
        "legal",
        Sight.SEAT,
        lambda look: list(look.game.moves) if look.game.table.to_act == look.seat else [],
    ),
    Field("hand", Sight.SEAT, lambda look: _sorted(look.game.table.seats[look.seat].hand)),
    Field("stack", Sight.PUBLIC, lambda look: len(look.game.table.stack)),
    Field("wasted", Sight.PUBLIC, lambda look: _texts(look.game.table.wasted)),
    Field("seats", Sight.PUBLIC, lambda look: [public_seat(s) for s in look.game.table.seats]),
    Field("totals", Sight.PUBLIC, lambda look: list(look.game.table.totals)),
    Field(
        "hand_scores",
        Sight.PUBLIC,
        lambda look: [[score.score for score in hand] for hand in look.game.table.hand_scores],
    ),
    Field(
        "notes",
        Sight.SEAT,
        lambda look: [list(note) for note in look.game.table.seats[look.seat].notes],
    ),
    Field(
        "turn",
        Sight.PUBLIC,
        lambda look: {
            "played": look.game.table.played,
            "swapped": look.game.table.swapped,
            "deals_made": look.game.table.deals_made,
        },
    ),
    Field(
        "deal",
        Sight.PUBLIC,
        lambda look: None if look.game.table.deal is None else look.game.table.deal.public(),
    ),
    Field("history", Sight.SEAT, _history),
    Field("history_end", Sight.SEAT, lambda look: len(look.game.table.events)),
    Field("packet", Sight.SEAT, _draft(lambda look: look.game.table.packets)),
    Field("kept", Sight.SEAT, _draft(lambda look: look.game.table.kept)),
    Field("seed", Sight.FULL, lambda look: look.game.seed),
    Field(
        "events",
        Sight.FULL,
        lambda look: [dict(e) for e in look.game.table.events[look.since or 0 :]],
    ),
)
"""Every field of the views, in the order a seat's view lists them, with who may see it."""

PUBLIC_KEYS: tuple[str, ...] = tuple(f.name for f in FIELDS if f.sight is Sight.PUBLIC)
"""The fields every seat sees alike: the public view is made of these alone."""

_SEAT_OWN = tuple(f for f in FIELDS if f.sight is not Sight.FULL)
_PUBLIC = tuple(f for f in FIELDS if f.sight is Sight.PUBLIC)
_OWN = tuple(f for f in FIELDS if f.sight is Sight.SEAT)
_FULL = tuple(f for f in FIELDS if f.sight is Sight.FULL)


def _fields(fields: tuple[Field, ...], look: Look) -> dict[str, Any]:
    view: dict[str, Any] = {}
    for f in fields:
        value = f.value(look)
        if value is not _ABSENT:
            view[f.name] = value
    return view


# ---------------------------------------------------------------------- the three views


def observe(game: Game, seat: int, since: int | None = None) -> dict[str, Any]:
    """What `seat` knows now: the public fields and its own. Raises IndexError for a seat that
    is not in the game.

    `history` holds this hand's events as the seat saw them; with `since` (an index into
    `game.events`, e.g. `history_end` of the previous view) only the events after it, so a bot
    protocol can send each event once. A bot's loop should pass `since`: the whole hand's
    history again at every decision costs more than the rest of the view.
    """
    if not 0 <= seat < game.n:
        raise IndexError(f"no seat {seat} in a {game.n}-player game")
    return _fields(_SEAT_OWN, Look(game, seat, since))


def public_view(game: Game) -> dict[str, Any]:
    """What everyone may see now (a spectator, a live table's watchers): the public fields."""
    return _fields(_PUBLIC, Look(game, -1, None))


def own_fields(game: Game, seat: int, since: int | None = None) -> dict[str, Any]:
    """A seat's own fields alone (its hand, notes, legal moves, history...): `observe` is
    these and the public ones."""
    if not 0 <= seat < game.n:
        raise IndexError(f"no seat {seat} in a {game.n}-player game")
    return _fields(_OWN, Look(game, seat, since))


def full_view(game: Game, since: int | None = None) -> dict[str, Any]:
    """Everything (replays after the end, the referee): the public fields, the full-only
    ones (the seed; `events`, unredacted, from `since`) and under `own` every seat's own
    fields as its `observe` holds them (its history from `since`, redacted for it)."""
    look = Look(game, -1, since)
    view = _fields(_PUBLIC, look)
    view.update(_fields(_FULL, look))
    view["own"] = [own_fields(game, seat, since) for seat in range(game.n)]
    return view
