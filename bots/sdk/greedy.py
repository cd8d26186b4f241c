"""The greedy heuristic: the `greedy` example bot's whole policy, usable by any bot.

Opens its market, cures its heat, closes the market when it is ahead, protects what matters,
peddles its biggest card, dumps paranoia on the leader, steals, takes Nirvana when opponents
have peddles to give, puts heat on the leader, swaps up, and otherwise discards its least
useful card. It never proposes deals, and accepts one only when what it gets is worth more than
what it gives (`answer`).

`choose(view)` needs only `legal`, `phase`, `seat`, `seats` (each with `market_open`, `heat`,
`unprotected`, `protected`) and `totals`, so it runs on an SDK `Observation` and, for fast
simulations (rollouts), directly on an engine `Game` (`bots.sdk.rollout`). It reads each legal
text once as a record (`engine.moves.Move`: kind, card, target...) and keeps what it does with
it (`_SLOTS`), never splitting words; this is the only copy of the policy.
"""

from __future__ import annotations

from bots.sdk.cards import (
    FINE,
    HEAT_OFF,
    HEAT_ON,
    MARKET_OPEN_NEEDED,
    PEDDLE,
    PROTECTED,
    STEAL,
    keep_value,
    trade_value,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # bots start faster without importing typing
    from collections.abc import Sequence
    from typing import Any, Protocol

    from engine.moves import Move
else:
    Protocol = object


class SeatLike(Protocol):
    market_open: bool

    @property
    def heat(self) -> Sequence[str]: ...
    @property
    def unprotected(self) -> Sequence[str]: ...
    @property
    def protected(self) -> Sequence[tuple[str, Sequence[str]]]: ...


class ViewLike(Protocol):
    @property
    def legal(self) -> Sequence[str]: ...
    @property
    def phase(self) -> str: ...
    @property
    def seat(self) -> int: ...
    @property
    def seats(self) -> Sequence[Any]: ...
    @property
    def totals(self) -> Sequence[int]: ...


def tabled(seat: SeatLike) -> int:
    """The face value of a seat's tabled peddles, protected or not. (Plain loops: rollouts
    call this thousands of times a decision, and a generator costs twice as much here.)"""
    value = 0
    for card in seat.unprotected:
        value += PEDDLE[card]
    for _, group in seat.protected:
        for card in group:
            value += PEDDLE[card]
    return value


def standing(view: ViewLike, seat: int) -> int:
    """Running total plus what lies on the table now: how far ahead a seat looks."""
    return view.totals[seat] + tabled(view.seats[seat])


def leader(view: ViewLike) -> int:
    """The opponent who looks furthest ahead: the one to attack (the first clockwise from the
    left on a tie)."""
    me, n = view.seat, len(view.seats)
    best, best_standing = -1, 0
    for k in range(1, n):
        seat = (me + k) % n
        value = standing(view, seat)
        if best < 0 or value > best_standing:
            best, best_standing = seat, value
    return best


def _keep(view: ViewLike, card: str) -> int:
    me = view.seats[view.seat]
    return keep_value(card, me.market_open, bool(me.heat))


def choose(view: ViewLike) -> str:
    phase = view.phase
    if phase == "turn":
        return turn(view)
    legal = view.legal
    if phase in ("pass", "draft"):
        cards = [(_keep(view, _record(text).card or ""), text) for text in legal]
        return (min if phase == "pass" else max)(cards, key=_first)[1]
    if phase in ("waste", "surrender"):
        return min(((PEDDLE.get(_record(t).card or "", 0), t) for t in legal), key=_first)[1]
    for safe in ("decline", "withdraw"):
        if safe in legal:
            return safe
    return legal[0]


def _first(pair: tuple[int, str]) -> int:
    return pair[0]


# What greedy does with a turn's move: its slot, in greedy's order of priority, and what it
# weighs within the slot (the highest wins; the first in legal order on a tie).
(
    CLOSE,  # Market Close, when well ahead of the leader
    OPEN,  # Market Open
    IMMUNITY,  # the Heat Off cards, in HEAT_OFF's order (only the matching one is legal)
    BREEZE,
    HEARSAY,
    CHARGES,
    FINE_PAID,  # Pay Fine: the cheapest peddle paid
    PROTECT,  # a Protected card: the biggest group, if it covers 25,000 or more
    PEDDLE_PLAY,  # a peddle: the biggest
    PARANOIA,  # on the leader if one is, the biggest fine
    STEAL_PLAY,  # the biggest peddle taken
    EUPHORIA,  # Nirvana, when the others have two peddles or more to give
    STONEHIGH,
    HEAT,  # Heat On: on the leader if one is, else the first
    END,
    SWAP,  # the best gain, taken before ending the turn if it gains
    DISCARD,  # the least useful card (weighed at the decision: it depends on the seat)
    OTHER,  # deals: greedy proposes none
) = range(18)
_PLAY_SLOTS = {
    "market-close": CLOSE,
    "market-open": OPEN,
    **dict(zip(HEAT_OFF, (IMMUNITY, BREEZE, HEARSAY, CHARGES), strict=True)),
    "pay-fine": FINE_PAID,
    **dict.fromkeys(PROTECTED, PROTECT),
    **dict.fromkeys(PEDDLE, PEDDLE_PLAY),
    **dict.fromkeys(FINE, PARANOIA),
    STEAL: STEAL_PLAY,
    "euphoria": EUPHORIA,
    "stonehigh": STONEHIGH,
    **dict.fromkeys(HEAT_ON, HEAT),
}
_SLOTS: dict[str, tuple[int, int, int, str]] = {}
"""text -> (slot, weight, the seat it names or -1, its card), kept: these never change."""


def _record(text: str) -> Move:
    from engine.moves import parse  # on first use: a bot's start does not pay for it

    return parse(text)


def _slot(text: str) -> tuple[int, int, int, str]:
    move = _record(text)
    kind, card = move.kind, move.card or ""
    slot, weight = OTHER, 0
    if kind == "play":
        slot = _PLAY_SLOTS.get(card, OTHER)
        if slot == FINE_PAID:
            weight = -PEDDLE.get(move.peddle or "", 0)
        elif slot == PROTECT:
            weight = sum(PEDDLE[c] for c in move.group)
        elif slot == PEDDLE_PLAY:
            weight = PEDDLE[card]
        elif slot == PARANOIA:
            weight = FINE[card]
        elif slot == STEAL_PLAY:
            weight = PEDDLE.get(move.peddle or "", 0) + 1
    elif kind == "end":
        slot = END
    elif kind == "swap":
        slot, weight = SWAP, PEDDLE[move.peddle or ""] - PEDDLE[card]
    elif kind == "discard":
        slot = DISCARD
    at = -1 if move.target is None else move.target
    found = _SLOTS[text] = (slot, weight, at, card)
    return found


def turn(view: ViewLike) -> str:
    """A turn: the best play by greedy's priorities (`_play`), else a profitable swap before
    ending the turn, else the least useful discard. One pass over the legal moves keeps the
    best of each slot (attacks and discards, whose choice depends on the table, in lists)."""
    best: list[tuple[int, str] | None] = [None] * (OTHER + 1)
    aimed: list[tuple[int, int, int, str]] = []  # paranoia and heat: (slot, at, weight, text)
    discards: list[tuple[str, str]] = []
    get = _SLOTS.get
    for text in view.legal:
        slot, weight, at, card = get(text) or _slot(text)
        if slot == DISCARD:
            discards.append((text, card))
            continue
        if slot in (PARANOIA, HEAT):
            aimed.append((slot, at, weight, text))
        current = best[slot]
        if current is None or weight > current[0]:
            best[slot] = (weight, text)
    if any(best[:END]):
        choice = _play(view, best, aimed)
        if choice is not None:
            return choice
    if best[END]:
        swap = best[SWAP]
        return swap[1] if swap is not None and swap[0] > 0 else "end"
    if discards:
        return _least_useful(view, discards)
    return view.legal[0]  # only plays we chose not to make above (e.g. an early Market Close)


def _least_useful(view: ViewLike, discards: list[tuple[str, str]]) -> str:
    me = view.seats[view.seat]
    market, heat = me.market_open, bool(me.heat)
    pick, low = discards[0][0], keep_value(discards[0][1], market, heat)
    for text, card in discards[1:]:
        value = keep_value(card, market, heat)
        if value < low:
            pick, low = text, value
    return pick


def _play(
    view: ViewLike, best: list[tuple[int, str] | None], aimed: list[tuple[int, int, int, str]]
) -> str | None:
    """The play greedy makes, in its order of priority, or None when it makes none of them:
    close a market when well ahead, open one or cure heat, pay the cheapest fine, protect a
    big group, peddle, then attack (`_attack`)."""
    target = leader(view)
    close = best[CLOSE]
    if close and standing(view, view.seat) > standing(view, target) + 25_000:
        return close[1]
    for slot in (OPEN, IMMUNITY, BREEZE, HEARSAY, CHARGES, FINE_PAID):
        choice = best[slot]
        if choice:
            return choice[1]
    protect = best[PROTECT]
    if protect and protect[0] >= 25_000:
        return protect[1]
    peddle = best[PEDDLE_PLAY]
    if peddle:
        return peddle[1]
    return _attack(view, best, aimed, target)


def _attack(
    view: ViewLike,
    best: list[tuple[int, str] | None],
    aimed: list[tuple[int, int, int, str]],
    target: int,
) -> str | None:
    """Paranoia on the leader, a steal, a Nirvana card when the others have peddles to give,
    heat on the leader: the first of these that is legal, or None."""
    paranoia = best[PARANOIA]
    if paranoia:
        on_leader = [(w, t) for s, at, w, t in aimed if s == PARANOIA and at == target]
        return max(on_leader, key=_first)[1] if on_leader else paranoia[1]
    steal = best[STEAL_PLAY]
    if steal:
        return steal[1]
    nirvana = best[EUPHORIA] or best[STONEHIGH]
    if nirvana:
        n = len(view.seats)
        given = sum(len(view.seats[(view.seat + k) % n].unprotected) for k in range(1, n))
        if given >= 2:
            return nirvana[1]
    heat = best[HEAT]
    if heat:
        return next((t for s, at, _, t in aimed if s == HEAT and at == target), heat[1])
    return None


def deal_gain(hand: Sequence[str], seat: SeatLike, deal: dict[str, Any]) -> int | None:
    """What an open deal gains the seat answering it (what it gets less what it gives, by
    `trade_value` for hand cards and face value for tabled peddles), or None if it cannot be
    weighed: it asks for a card the seat does not hold. Only a seat's own view is used: the
    proposer's card is the one it names, as it is in an open deal."""
    give, want = deal.get("give"), deal.get("want")
    held = list(hand)
    gain = 0
    if want is not None:
        if want not in held:
            return None
        held.remove(want)
    closed, heat = not seat.market_open, bool(seat.heat)
    if give is not None:
        spare = "market-open" in held
        gain += trade_value(give, market_open=not closed, under_heat=heat, spare_open=spare)
    if want is not None:
        spare = "market-open" in held
        gain -= trade_value(want, market_open=not closed, under_heat=heat, spare_open=spare)
    gain += sum(PEDDLE.get(c, 0) for c in deal.get("offer") or ())
    gain -= sum(PEDDLE.get(c, 0) for c in deal.get("ask") or ())
    return gain


def answer(view: ViewLike, deal: dict[str, Any] | None) -> bool:
    """Accept a deal only if it gains the seat something: what it gets is worth more than what
    it gives (`deal_gain`), so no proposer can take a better card for a worse one (a Market Open
    buys a closed market's Colombia, never its Dr Feelgood, Banker or Euphoria).

    Hidden deals (the legal answers name the card handed over) are always declined: the
    proposer's card is only announced and may be a Paranoia card, so no answer is safe.
    """
    if not deal:
        return False
    if any(a.startswith("accept ") for a in view.legal):
        return False
    hand = getattr(view, "hand", None)
    if hand is None:
        return False
    gain = deal_gain(hand, view.seats[view.seat], deal)
    return gain is not None and gain > 0


def market_open_request(
    hand: Sequence[str], view: ViewLike, deals_made: int
) -> tuple[int, str] | None:
    """A deal worth proposing: a closed market that holds no Market Open asks an opponent for
    one, giving its least useful card that is worth something (a Paranoia card would be
    declined by any sensible partner). Only opponents whose market is open are asked: a Market
    Open they still hold is a spare, worth nothing to them, so any fair card buys it. Returns
    (partner, card to give), or None; `deals_made` (this turn's proposals so far) picks the
    next partner, so each is asked once."""
    me = view.seats[view.seat]
    if me.market_open or "market-open" in hand:
        return None
    n = len(view.seats)
    partners = [
        (view.seat + k) % n for k in range(1, n) if view.seats[(view.seat + k) % n].market_open
    ]
    if deals_made >= len(partners):
        return None
    offers = [c for c in hand if c not in FINE]
    if not offers:
        return None
    give = min(offers, key=lambda c: keep_value(c, False, bool(me.heat)))
    if keep_value(give, False, bool(me.heat)) >= MARKET_OPEN_NEEDED:
        return None  # nothing to spare that is worth less than the Market Open it would buy
    return partners[deals_made], give
