"""The greedy heuristic: the `greedy` example bot's whole policy, usable by any bot.

Opens its market, cures its heat, closes the market when it is ahead, protects what matters,
peddles its biggest card, dumps paranoia on the leader, steals, takes Nirvana when opponents
have peddles to give, puts heat on the leader, swaps up, and otherwise discards its least
useful card. It never proposes deals, and accepts one only when what it gets is worth more than
what it gives (`answer`).

`choose(view)` needs only `legal`, `phase`, `seat`, `seats` (each with `market_open`, `heat`,
`unprotected`, `protected`) and `totals`, so it runs on an SDK `Observation` and, for fast
simulations, directly on an engine `Game`'s seats (see the `strong` example).
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
    value = sum(PEDDLE[c] for c in seat.unprotected)
    return value + sum(PEDDLE[c] for _, group in seat.protected for c in group)


def standing(view: ViewLike, seat: int) -> int:
    """Running total plus what lies on the table now: how far ahead a seat looks."""
    return view.totals[seat] + tabled(view.seats[seat])


def leader(view: ViewLike) -> int:
    """The opponent who looks furthest ahead: the one to attack."""
    n = len(view.seats)
    return max(((view.seat + k) % n for k in range(1, n)), key=lambda s: standing(view, s))


def _keep(view: ViewLike, card: str) -> int:
    me = view.seats[view.seat]
    return keep_value(card, me.market_open, bool(me.heat))


def choose(view: ViewLike) -> str:
    legal = view.legal
    phase = view.phase
    if phase in ("pass", "draft"):
        verb = "pass" if phase == "pass" else "keep"
        cards = [a.split()[1] for a in legal]
        pick = min if verb == "pass" else max
        return f"{verb} {pick(cards, key=lambda c: _keep(view, c))}"
    if phase in ("waste", "surrender"):
        return min(legal, key=lambda a: PEDDLE.get(a.split()[1], 0))
    if phase == "turn":
        return turn(view)
    for safe in ("decline", "withdraw"):
        if safe in legal:
            return safe
    return legal[0]


def turn(view: ViewLike) -> str:
    """A turn: the best play by greedy's priorities (`_play`), else a profitable swap before
    ending the turn, else the least useful discard."""
    legal = set(view.legal)
    plays = [a for a in view.legal if a.startswith("play ")]
    if plays:
        choice = _play(view, legal, plays)
        if choice is not None:
            return choice
    if "end" in legal:
        swaps = [a for a in view.legal if a.startswith("swap ")]
        gain = max(swaps, key=lambda a: PEDDLE[a.split()[3]] - PEDDLE[a.split()[1]], default=None)
        if gain and PEDDLE[gain.split()[3]] > PEDDLE[gain.split()[1]]:
            return gain
        return "end"
    discards = [a for a in view.legal if a.startswith("discard ")]
    if discards:
        return min(discards, key=lambda a: _keep(view, a.split()[1]))
    return view.legal[0]  # only plays we chose not to make above (e.g. an early Market Close)


def _play(view: ViewLike, legal: set[str], plays: list[str]) -> str | None:
    """The play greedy makes, in its order of priority, or None when it makes none of them:
    close a market when well ahead, open one or cure heat, pay the cheapest fine, protect a
    big group, peddle, then attack (`_attack`)."""
    target = leader(view)
    ahead = standing(view, view.seat) > standing(view, target) + 25_000
    if ahead and "play market-close" in legal:
        return "play market-close"
    for choice in ("play market-open", *[f"play {c}" for c in HEAT_OFF]):
        if choice in legal:
            return choice
    fines = [a for a in plays if a.startswith("play pay-fine")]
    if fines:
        return min(fines, key=lambda a: PEDDLE.get(a.split()[-1].removesuffix("(p)"), 0))
    protects = [a for a in plays if a.split()[1] in PROTECTED]
    if protects:
        best = max(protects, key=lambda a: sum(PEDDLE[c] for c in a.split()[2].split("+")))
        if sum(PEDDLE[c] for c in best.split()[2].split("+")) >= 25_000:
            return best
    peddles = [a for a in plays if a.split()[1] in PEDDLE]
    if peddles:
        return max(peddles, key=lambda a: PEDDLE[a.split()[1]])
    return _attack(view, legal, plays, target)


def _attack(view: ViewLike, legal: set[str], plays: list[str], target: int) -> str | None:
    """Paranoia on the leader, a steal, a Nirvana card when the others have peddles to give,
    heat on the leader: the first of these that is legal, or None."""
    paranoia = [a for a in plays if a.split()[1] in FINE]
    if paranoia:
        on_leader = [a for a in paranoia if a.endswith(f"@{target}")]
        return max(on_leader or paranoia, key=lambda a: FINE[a.split()[1]])
    steals = [a for a in plays if a.split()[1] == STEAL]
    if steals:
        return max(steals, key=lambda a: PEDDLE.get(a.split()[-1], 0) + 1)
    nirvana = next((c for c in ("play euphoria", "play stonehigh") if c in legal), None)
    n = len(view.seats)
    others = [view.seats[(view.seat + k) % n] for k in range(1, n)]
    if nirvana and sum(len(s.unprotected) for s in others) >= 2:
        return nirvana
    heat = [a for a in plays if a.split()[1] in HEAT_ON]
    if heat:
        on_leader = [a for a in heat if a.endswith(f"@{target}")]
        return (on_leader or heat)[0]
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
