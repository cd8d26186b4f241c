"""Setting up a hand in progress: the seeds' worked examples, puzzles, and per-card tests.

A position lists what each seat holds and has on the table and the order of the Grass Stack;
every card of the deck not placed goes to the Wasted pile, so all cards stay accounted for.
The game starts at the beginning of `active`'s turn (the draw comes first). The position is
written into the log's header, so a game started from one replays like any other.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.cards import FAMILY, VALUE, Card, Family, parse_card
from engine.game import Game, header_event
from engine.rules import Ruleset, Variants, resolve_ruleset
from engine.state import Table


@dataclass(frozen=True)
class SeatSetup:
    """One seat of a position. Hands hold exactly the ruleset's hand size (6)."""

    hand: tuple[Card, ...]
    market_open: bool = False
    heat: tuple[Card, ...] = ()
    unprotected: tuple[Card, ...] = ()
    protected: tuple[tuple[Card, tuple[Card, ...]], ...] = ()
    skips: int = 0
    name: str | None = None

    def cards(self) -> list[Card]:
        cards = [*self.hand, *self.heat, *self.unprotected]
        if self.market_open:
            cards.append(Card.MARKET_OPEN)
        for prot, group in self.protected:
            cards.append(prot)
            cards.extend(group)
        return cards

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "hand": [c.value for c in self.hand],
            "market_open": self.market_open,
            "heat": [c.value for c in self.heat],
            "unprotected": [c.value for c in self.unprotected],
            "protected": [[p.value, [c.value for c in g]] for p, g in self.protected],
            "skips": self.skips,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SeatSetup:
        return cls(
            hand=tuple(parse_card(c) for c in data["hand"]),
            market_open=bool(data.get("market_open", False)),
            heat=tuple(parse_card(c) for c in data.get("heat", ())),
            unprotected=tuple(parse_card(c) for c in data.get("unprotected", ())),
            protected=tuple(
                (parse_card(p), tuple(parse_card(c) for c in g))
                for p, g in data.get("protected", ())
            ),
            skips=int(data.get("skips", 0)),
            name=data.get("name"),
        )


@dataclass(frozen=True)
class Position:
    """A hand in progress, at the start of `active`'s turn."""

    seats: tuple[SeatSetup, ...]
    stack: tuple[Card, ...]
    """The Grass Stack, top card first."""
    active: int
    dealer: int | None = None
    hand_number: int = 1
    totals: tuple[int, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return {
            "seats": [s.as_dict() for s in self.seats],
            "stack": [c.value for c in self.stack],
            "active": self.active,
            "dealer": self.dealer,
            "hand_number": self.hand_number,
            "totals": list(self.totals),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Position:
        return cls(
            seats=tuple(SeatSetup.from_dict(s) for s in data["seats"]),
            stack=tuple(parse_card(c) for c in data["stack"]),
            active=int(data["active"]),
            dealer=data.get("dealer"),
            hand_number=int(data.get("hand_number", 1)),
            totals=tuple(data.get("totals", ())),
        )


def game_from_position(
    position: Position,
    ruleset: Ruleset | str = "modern",
    variants: Variants | None = None,
    seed: int = 0,
    limits: Mapping[str, int] | None = None,
    engine: str | None = None,
) -> Game:
    """A game that continues from `position` (under the rules of engine version `engine`, by
    default this one). Raises ValueError naming what is inconsistent."""
    variants = variants or Variants()
    rules = resolve_ruleset(ruleset, variants, limits, engine)
    seats = position.seats
    n = len(seats)
    names = [s.name or f"seat{i}" for i, s in enumerate(seats)]
    for i, setup in enumerate(seats):
        if len(setup.hand) != rules.hand_size:
            raise ValueError(f"seat {i} holds {len(setup.hand)} cards, not {rules.hand_size}")
        for prot, group in setup.protected:
            if FAMILY[prot] is not Family.PROTECTED or Card.DR_FEELGOOD in group:
                raise ValueError(f"seat {i}: {prot} cannot cover {list(group)}")
            if sum(VALUE[c] for c in group) > VALUE[prot]:
                raise ValueError(f"seat {i}: {list(group)} is worth more than {prot} covers")
    if not position.stack:
        raise ValueError("the Grass Stack is empty: the hand would already be over")
    if not 0 <= position.active < n:
        raise ValueError(f"active seat {position.active} is not in a {n}-player game")
    placed = Counter(position.stack)
    for setup in seats:
        placed.update(setup.cards())
    deck = Counter(dict(rules.deck))
    excess = placed - deck
    if excess:
        raise ValueError(f"more cards than the {rules.name} deck holds: {dict(excess)}")
    header = header_event(rules, variants, seed, names)
    header["position"] = position.as_dict()
    table = Table.new(names, seed)
    table.events = [dict(header)]
    table.hand_no = position.hand_number
    table.dealer = position.dealer if position.dealer is not None else (position.active - 1) % n
    if position.totals:
        table.totals = list(position.totals)
    for seat, setup in zip(table.seats, seats, strict=True):
        seat.hand = list(setup.hand)
        seat.market_open = setup.market_open
        seat.heat = list(setup.heat)
        seat.unprotected = list(setup.unprotected)
        seat.protected = [(p, list(g)) for p, g in setup.protected]
        seat.skips = setup.skips
    table.stack = list(reversed(position.stack))
    table.wasted = list((deck - placed).elements())
    table.hand_start_event = len(table.events)
    return Game.from_table(rules, variants, seed, names, table, first_turn=position.active)
