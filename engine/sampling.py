"""Sampling a full game state consistent with one seat's observation ("determinization").

Bots that plan under hidden information (Monte Carlo, ISMCTS) need complete states to simulate:
the seat's own cards and everything on the table are as observed; the cards it cannot see (the
other hands and the stack) are dealt at random from the cards not accounted for. Cards the seat
itself passed or dealt to a neighbour this hand are put back into that neighbour's hand when it
still holds enough cards, the one piece of private memory cheap to use.

Samples are made at the seat's own turn decisions and at its paranoia decisions: the peddle it
wastes (WASTE) and the card it passes (PASS). In a pass round the seats before it in the order
have chosen already, unseen; their cards are still in their hands (R-INFO-PASS, D-PASS-ORDER),
so `deal` returns the round at its start and `catch_up` has those seats choose again, by a
policy the caller gives (a search bot: its model of them) or at random.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from engine.cards import Card
from engine.game import Game
from engine.rules import Variants, learning_stage, resolve_ruleset
from engine.state import Phase, Table


def _wiped_out(view: dict[str, Any], max_deals: int, deals_on: bool) -> set[int]:
    """Seats that Utterly Wiped Out left without a Market Open (D-UWO-DEAL), as far as the view
    tells: the events it holds, and for the observing seat its legal actions (it may not deal
    though the hand and the turn would allow it)."""
    wiped: set[int] = set()
    if not all(seat["market_open"] for seat in view["seats"]):  # else none can be wiped out
        for event in view.get("history", ()):
            action = event.get("action")  # only actions have one
            if action is None or not action.startswith("play "):
                continue
            if action == "play market-open":
                wiped.discard(event["seat"])
            elif action.startswith("play utterly-wiped-out @"):
                wiped.add(int(action.rsplit("@", 1)[1]))
    me = view["seat"]
    seat = view["seats"][me]
    may_deal = deals_on and view["turn"]["deals_made"] < max_deals and not seat["market_open"]
    if may_deal and not any(a.startswith("deal @") for a in view["legal"]):
        # Nothing else refuses a deal at one's own turn under these rules.
        wiped.add(me)
    return {index for index in wiped if not view["seats"][index]["market_open"]}


_BY_NAME: dict[str, Card] = {card.value: card for card in Card}


def _card(name: str) -> Card:
    """A card by its name (as `Card(name)`, a dict lookup instead of the enum's call: a search
    bot samples thousands of states, each with dozens of cards to name)."""
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise ValueError(f"{name!r} is not a card") from None


SAMPLED = frozenset({Phase.TURN.value, Phase.WASTE.value, Phase.PASS.value})
"""The observing seat's decisions a game can be sampled at."""

Policy = Callable[[Game], str]
"""Chooses an action (a key of `game.moves`) for the seat to act."""


def sample_game(view: dict[str, Any], rng: random.Random, choose: Policy | None = None) -> Game:
    """A game at the observed decision with the hidden cards dealt at random.

    Works at the observing seat's own `turn`, `waste` and `pass` decisions (`SAMPLED`); raises
    ValueError for others. In a pass round the seats before the observer choose their (unseen)
    cards again by `choose`, at random without one. The sample's randomness is seeded from
    `rng`."""
    game = deal(view, rng)
    catch_up(game, view["seat"], choose or (lambda g: rng.choice(list(g.moves))))
    return game


def catch_up(game: Game, seat: int, choose: Policy) -> None:
    """Play the hidden choices made before `seat`'s decision (a pass round's earlier seats).
    The hands may have been changed since `deal` (a belief's repair): the moves are listed
    again first."""
    if game.to_act != seat and game.table.phase is Phase.PASS:
        game._refresh()
    while game.to_act != seat and game.table.phase is Phase.PASS:
        game.apply(choose(game))


def deal(view: dict[str, Any], rng: random.Random) -> Game:
    """`sample_game` without `catch_up`: in a pass round, the round at its start (every seat
    of it still to choose), so a caller may change the hands before the choices are made."""
    if view["phase"] not in SAMPLED or view["to_act"] != view["seat"]:
        raise ValueError(
            "sample_game works at the observing seat's own turn, waste and pass decisions"
        )
    variants = Variants.from_dict(view["variants"])
    rules = resolve_ruleset(view["ruleset"], variants, view.get("limits"))
    names = view["players"]
    seed = rng.getrandbits(64)
    table = Table.new(names, seed)
    me = view["seat"]
    table.hand_no = view["hand_number"]
    table.dealer = view["dealer"]
    table.active = view["active"]
    table.to_act = view["to_act"]
    table.totals = list(view["totals"])
    table.wasted = [_card(c) for c in view["wasted"]]
    turn = view["turn"]
    table.played = turn["played"]
    table.swapped = turn["swapped"]
    table.deals_made = turn["deals_made"]
    table.phase = Phase(view["phase"])
    if table.phase is not Phase.TURN:
        # A paranoia card of the active seat started the round (R-PARANOIA-PASS): the victim
        # wastes a peddle, then everyone passes, from the card's player clockwise.
        table.initiator = table.active
    if table.phase is Phase.PASS:
        n = len(names)
        order = [(table.active + k) % n for k in range(n)]
        table.to_act, table.queue = order[0], order[1:]

    stage = learning_stage(variants, table.hand_no)
    removed = stage.removed if stage else frozenset()
    unseen = Counter({card: count for card, count in rules.deck if card not in removed})
    unseen.subtract(table.wasted)
    for seat, public in zip(table.seats, view["seats"], strict=True):
        seat.market_open = public["market_open"]
        seat.heat = [_card(c) for c in public["heat"]]
        seat.hassle_under = [_card(c) for c in public["hassle_under"]]
        seat.unprotected = [_card(c) for c in public["unprotected"]]
        seat.protected = [
            (_card(p["card"]), [_card(c) for c in p["covers"]]) for p in public["protected"]
        ]
        seat.skips = public["skips"]
        seat.extra_turns = public["extra_turns"]
        unseen.subtract(seat.table_cards())
    if rules.wiped_out_stops_dealing:
        for index in _wiped_out(view, rules.max_deals_per_turn, stage is None or stage.deals):
            table.seats[index].wiped_out = True
    own = [_card(c) for c in view["hand"]]
    table.seats[me].hand = own
    unseen.subtract(own)
    if min(unseen.values(), default=0) < 0:
        raise ValueError("the observation holds more cards than the deck")
    pool = list(unseen.elements())
    rng.shuffle(pool)
    # Cards this seat handed to a neighbour are, most likely, still there.
    known: dict[int, list[Card]] = {}
    for note in view.get("notes", ()):
        if note[0] in ("passed", "deal-gave"):
            card = _card(note[1])
            if card in pool:
                pool.remove(card)
                known.setdefault(int(note[2]), []).append(card)
    for index, given in known.items():
        # The most recent gifts are the likeliest to be still there; older ones go back.
        count = view["seats"][index]["cards"]
        keep = given[-count:] if count else []
        pool.extend(given[: len(given) - len(keep)])
        known[index] = keep
    for index, public in enumerate(view["seats"]):
        if index == me:
            continue
        hand = known.pop(index, [])
        while len(hand) < public["cards"]:
            hand.append(pool.pop())
        table.seats[index].hand = hand
    rng.shuffle(pool)
    if len(pool) != view["stack"]:
        raise ValueError(f"{len(pool)} unseen cards for a stack of {view['stack']}")
    table.stack = pool
    table.last_turn = not pool
    return Game.from_table(rules, variants, seed, names, table)
