"""Compact builders for per-card tests: a position from a few keyword arguments, filled with
harmless filler cards, and checks that an illegal action changes nothing."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pytest

from engine import INFO, Card, Game, IllegalAction, Phase
from engine.position import Position, SeatSetup, game_from_position
from engine.rules import RULESETS

C = Card

HEAT_OFFS = (C.IMMUNITY, C.A_BREEZE_TO_FLY, C.HEARSAY_EVIDENCE, C.CHARGES_DROPPED)
PAIRS: tuple[tuple[Card, Card], ...] = (
    (C.BUST, C.IMMUNITY),
    (C.DETAINED, C.A_BREEZE_TO_FLY),
    (C.FELONY, C.HEARSAY_EVIDENCE),
    (C.SEARCH_AND_SEIZURE, C.CHARGES_DROPPED),
)
"""(Heat On, matching Heat Off) for all four pairs."""


@dataclass
class S:
    """One seat of a test position. `hand` lists the cards that matter (up to 6); the rest of
    the hand is filler."""

    hand: tuple[Card, ...] = ()
    market: bool = False
    heat: tuple[Card, ...] = ()
    unprotected: tuple[Card, ...] = ()
    protected: tuple[tuple[Card, tuple[Card, ...]], ...] = ()
    skips: int = 0


def seat(
    *hand: Card,
    market: bool = False,
    heat: Iterable[Card] = (),
    unprotected: Iterable[Card] = (),
    protected: Iterable[tuple[Card, Iterable[Card]]] = (),
    skips: int = 0,
) -> S:
    return S(
        tuple(hand),
        market,
        tuple(heat),
        tuple(unprotected),
        tuple((p, tuple(g)) for p, g in protected),
        skips,
    )


def _filler_pool(
    ruleset: str, used: Counter[Card], avoid: Iterable[Card], heat: set[Card]
) -> list[Card]:
    """Heat Off cards that cancel no Heat On in play, interleaved so that no kind runs out
    first; then Market Close; last (only big tables need them) Heat On cards."""
    deck = Counter(dict(RULESETS[ruleset].deck))
    avoid = set(avoid)
    pool: list[Card] = []
    tiers = (
        [c for c in HEAT_OFFS if INFO[c].cancels not in heat],
        [C.MARKET_CLOSE],
        [c for c, _ in PAIRS],
    )
    for tier in tiers:
        kinds = [c for c in tier if c not in avoid]
        left = {c: deck[c] - used[c] for c in kinds}
        while any(n > 0 for n in left.values()):
            for c in kinds:
                if left[c] > 0:
                    pool.append(c)
                    left[c] -= 1
    return pool


def build(
    ruleset: str,
    *seats: S,
    active: int = 0,
    stack: Iterable[Card] = (),
    stack_len: int = 3,
    avoid: Iterable[Card] = (),
    totals: Iterable[int] = (),
) -> Game:
    """A game at the start of `active`'s turn (the active seat then draws the top stack card).

    `stack` gives the top cards, top first; the stack is padded with filler to `stack_len`.
    Fillers are Heat Off cards that match no Heat On in the position (and none of `avoid`).
    """
    stack = list(stack)
    used: Counter[Card] = Counter(stack)
    heat: set[Card] = set()
    for s in seats:
        setup = SeatSetup(s.hand, s.market, s.heat, s.unprotected, s.protected)
        used.update(setup.cards())
        heat.update(s.heat)
    pool = _filler_pool(ruleset, used, avoid, heat)
    hands = [list(s.hand) for s in seats]
    # The active seat and the stack get the most harmless fillers.
    for i in [active, *(i for i in range(len(seats)) if i != active)]:
        while len(hands[i]) < 6:
            hands[i].append(pool.pop(0))
        if i == active:
            while len(stack) < stack_len:
                stack.append(pool.pop(0))
    setups = [
        SeatSetup(
            hand=tuple(hand),
            market_open=s.market,
            heat=s.heat,
            unprotected=s.unprotected,
            protected=s.protected,
            skips=s.skips,
        )
        for s, hand in zip(seats, hands, strict=True)
    ]
    position = Position(
        seats=tuple(setups), stack=tuple(stack), active=active, totals=tuple(totals)
    )
    return game_from_position(position, ruleset, seed=1)


def snapshot(game: Game) -> tuple[Any, ...]:
    return (
        len(game.events),
        copy.deepcopy(game.seats),
        list(game.stack),
        list(game.wasted),
        game.to_act,
        game.phase,
        game.legal_actions(),
        list(game.hand_scores),
    )


def assert_illegal(game: Game, action: str) -> None:
    """`action` is not legal: applying it raises IllegalAction and changes nothing."""
    assert action not in game.legal_actions()
    before = snapshot(game)
    with pytest.raises(IllegalAction):
        game.apply(action)
    assert snapshot(game) == before


def apply_all(game: Game, *actions: str) -> None:
    for action in actions:
        game.apply(action)


def plays(game: Game, card: Card) -> list[str]:
    """The legal `play CARD...` actions for one card kind."""
    prefix = f"play {card}"
    return [a for a in game.legal_actions() if a == prefix or a.startswith(prefix + " ")]


def pass_turn(game: Game) -> None:
    """The active player discards a filler card and ends the turn (a classic turn ends by
    itself once the card is played)."""
    active = game.active
    for off in (*HEAT_OFFS, C.MARKET_CLOSE):
        if f"discard {off}" in game.legal_actions():
            game.apply(f"discard {off}")
            break
    else:
        raise AssertionError(f"no filler to discard: {game.legal_actions()}")
    if game.active == active and "end" in game.legal_actions():
        game.apply("end")


def wasted_delta(before: list[Card], after: list[Card]) -> Counter[Card]:
    return Counter(after) - Counter(before)


def put_under(game: Game, seat: int, *cards: Card) -> None:
    """Move cards from the Wasted pile to the bottom of a seat's hassle pile (positions cannot
    describe an earlier, cancelled Heat On)."""
    for card in cards:
        game.wasted.remove(card)
        game.seats[seat].hassle_under.append(card)


def pass_fillers(game: Game) -> dict[int, Card]:
    """Play out a PASS round: every seat passes a filler card (a Heat Off, else Market Close).
    Returns what each seat passed."""
    passed: dict[int, Card] = {}
    while game.phase is Phase.PASS:
        for card in (*HEAT_OFFS, C.MARKET_CLOSE):
            if f"pass {card}" in game.legal_actions():
                passed[game.to_act] = card
                game.apply(f"pass {card}")
                break
        else:
            raise AssertionError(f"no filler to pass: {game.legal_actions()}")
    return passed
