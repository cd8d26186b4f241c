"""Sampled deals consistent with what the opponents did this hand (issue 28, part 3).

`engine.sampling.sample_game` deals the unseen cards uniformly. But an opponent's turn tells
something of its hand: a seat whose market was closed and that played anything but a Market
Open held no Market Open then (any sensible dealer opens at once: without it nothing can be
peddled); a seat under heat that did not cure it held no Heat Off matching its top Heat On,
and no Pay Fine if it had a tabled peddle to pay with. Since that turn it may have received
cards (a paranoia pass, a deal, a draw): each of those may be one of the cards, so the
inference is "at most k of these cards in its hand now", with k the cards received since.

These are inferences about sensible play, not rules: a random bot may hold a Market Open and
discard. A search bot that plays against such bots loses little (the samples are still legal
deals of the unseen cards); against sensible ones its samples stop handing opponents cards
they would already have played.

A sample is `sample_game`'s, then repaired: a seat holding more forbidden cards than its limit
swaps the excess with random cards of the stack that are not forbidden to it (constrained
dealing; rejection would throw away most samples when several seats have limits). The limits
are read once per decision (`limits`), the repair costs a few list operations per sample.

The events read are the hand's history as the seat saw it (`Observation.history`: in protocol
version 2 the observation's own `history` holds only what is new since the last request).
The state the inferences need (open markets, heat, tabled peddles) is rebuilt from those
events; a seat whose rebuilt state does not match what the table shows now gets no limits.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine import Game
from engine.cards import FAMILY, INFO, Card, Family
from engine.moves import parse
from engine.rules import Variants, resolve_ruleset
from engine.sampling import Policy, catch_up, deal

__all__ = ["Limit", "limits", "sample", "satisfied"]

_CURE: dict[Card, Card] = {
    info.cancels: card for card, info in INFO.items() if info.cancels is not None
}
"""The Heat Off that cancels each Heat On."""


@dataclass(frozen=True, slots=True)
class Limit:
    """Seat `seat` holds at most `most` of the kinds in `cards` now."""

    seat: int
    cards: frozenset[Card]
    most: int


@dataclass(slots=True)
class _Seat:
    """A seat's public state, rebuilt event by event."""

    market_open: bool = False
    heat: list[Card] | None = None
    tabled: int = 0
    received: int = 0
    """Cards this seat has taken into its hand so far this hand (passes, deals, draws)."""

    def heat_pile(self) -> list[Card]:
        if self.heat is None:
            self.heat = []
        return self.heat


def limits(view: Mapping[str, Any], history: Iterable[Mapping[str, Any]]) -> tuple[Limit, ...]:
    """What the opponents' turns this hand say about their hands now (see the module's doc).

    `view` is the observation (`Observation.raw`), `history` the hand's events so far
    (`Observation.history`)."""
    n = len(view["seats"])
    me = view["seat"]
    variants = Variants.from_dict(view["variants"])
    rules = resolve_ruleset(view["ruleset"], variants, view.get("limits"))
    seats = [_Seat() for _ in range(n)]
    found: list[tuple[int, frozenset[Card], int]] = []  # seat, cards, received when seen
    for event in history:
        kind = event.get("e")
        if kind == "act":
            action = event.get("action")
            if action is None or event.get("phase") != "turn":
                continue
            s = event["seat"]
            try:
                move = parse(action)
            except ValueError:
                return ()  # an action this module does not know: no inference at all
            card = move.card
            if move.kind not in ("play", "discard") or card is None:
                continue
            seat = seats[s]
            if s != me:
                forbidden = _forbidden(seat, card, move.kind == "play")
                if forbidden:
                    found.append((s, forbidden, seat.received))
            if move.kind == "play":
                _apply_play(seats, s, card, move.target, rules)
        elif kind == "draw":
            seats[event["seat"]].received += 1
        elif kind == "pass":
            seats[event["to"]].received += 1
        elif kind == "take":
            seats[event["seat"]].received += 1
        elif kind == "exchange":
            active, partner = seats[event["seat"]], seats[event["partner"]]
            if "gave" in event or "secret" in event or "see" in event:
                active.received += 1
                partner.received += 1
            moved = len(event.get("offer", ())) - len(event.get("ask", ()))
            active.tabled -= moved
            partner.tabled += moved
        elif kind == "move":
            seats[event["from"]].tabled -= 1
            seats[event["to"]].tabled += 1
        elif kind == "waste":
            seats[event["seat"]].tabled -= len(event["cards"])
    trusted = [_matches(seats[s], view["seats"][s]) for s in range(n)]
    best: dict[tuple[int, frozenset[Card]], int] = {}
    for s, cards, received in found:
        if not trusted[s]:
            continue
        most = seats[s].received - received
        if most >= view["seats"][s]["cards"]:
            continue  # every card it holds may be new: nothing left to say
        key = (s, cards)
        best[key] = min(most, best.get(key, most))
    return tuple(Limit(s, cards, most) for (s, cards), most in best.items())


def _forbidden(seat: _Seat, card: Card, played: bool) -> frozenset[Card]:
    """The cards a seat in this state would have played instead of `card`, had it held them."""
    family = FAMILY[card]
    if not seat.market_open:
        if played and family is Family.MARKET_OPEN:
            return frozenset()
        return frozenset({Card.MARKET_OPEN})
    if seat.heat:
        if played and family in (Family.HEAT_OFF, Family.PAY_FINE):
            return frozenset()
        cures = {_CURE[seat.heat[-1]]}
        if seat.tabled > 0:
            cures.add(Card.PAY_FINE)
        return frozenset(cures)
    return frozenset()


def _apply_play(seats: list[_Seat], s: int, card: Card, target: int | None, rules: Any) -> None:
    """What a play does to the public state this module follows (`target`: the seat the play
    names, if any; classic paranoia names none and strikes its own player)."""
    seat = seats[s]
    family = FAMILY[card]
    if family is Family.MARKET_OPEN:
        seat.market_open = True
    elif family is Family.PEDDLE:
        seat.tabled += 1
    elif family is Family.HEAT_ON:
        if target is not None:  # always: a Heat On names its seat
            seats[target].heat_pile().append(card)
    elif family in (Family.HEAT_OFF, Family.PAY_FINE):
        pile = seat.heat_pile()
        if pile:
            pile.pop()
    elif family is Family.NIRVANA and rules.nirvana_clears_heat:
        seat.heat = []
    elif card is Card.UTTERLY_WIPED_OUT:
        victim = seats[target] if target is not None else seat
        victim.market_open = False
        victim.heat = []


def _matches(seat: _Seat, public: Mapping[str, Any]) -> bool:
    """Whether the rebuilt state is what the table shows (else the seat gets no limits)."""
    tabled = len(public["unprotected"]) + sum(len(p["covers"]) for p in public["protected"])
    heat = [c.value for c in seat.heat or ()]
    return (
        seat.market_open == public["market_open"]
        and heat == list(public["heat"])
        and seat.tabled == tabled
    )


def satisfied(game: Game, found: Iterable[Limit]) -> bool:
    """Whether every seat of `game` keeps its limits."""
    seats = game.table.seats
    return all(
        sum(c in limit.cards for c in seats[limit.seat].hand) <= limit.most for limit in found
    )


def sample(
    view: dict[str, Any], found: Sequence[Limit], rng: random.Random, choose: Policy | None = None
) -> Game:
    """`sample_game(view, rng, choose)` with every seat's hand brought within its limits: each
    excess card changes place with a random card of the stack not forbidden to the seat, or,
    when the stack has none left (late in a hand), of another opponent's hand that may take
    it. A limit nothing can meet is left as the deal came. In a pass round the hands are
    repaired before the earlier seats choose their cards again (`engine.sampling.catch_up`)."""
    game = deal(view, rng)
    _repair(game, view["seat"], found, rng)
    catch_up(game, view["seat"], choose or (lambda g: rng.choice(list(g.moves))))
    return game


def _repair(game: Game, me: int, found: Sequence[Limit], rng: random.Random) -> None:
    if not found:
        return
    seats = game.table.seats
    stack = game.table.stack
    banned: dict[int, frozenset[Card]] = {}
    for limit in found:
        banned[limit.seat] = banned.get(limit.seat, frozenset()) | limit.cards
    for limit in found:
        hand = seats[limit.seat].hand
        excess = [i for i, c in enumerate(hand) if c in limit.cards]
        if len(excess) <= limit.most:
            continue
        rng.shuffle(excess)
        avoid = banned[limit.seat]
        spots: list[tuple[list[Card], int]] = [
            (other.hand, k)
            for o, other in enumerate(seats)
            if o not in (me, limit.seat)
            for k, c in enumerate(other.hand)
            if c not in avoid
        ]
        rng.shuffle(spots)
        owner = {id(other.hand): o for o, other in enumerate(seats)}
        free = [j for j, c in enumerate(stack) if c not in avoid]
        rng.shuffle(free)
        spots += [(stack, j) for j in free]  # popped from the end: the stack's first
        for i in excess[limit.most :]:
            while spots:
                pile, j = spots.pop()
                other_seat = owner.get(id(pile))
                if other_seat is not None and hand[i] in banned.get(other_seat, ()):
                    continue
                hand[i], pile[j] = pile[j], hand[i]
                break
