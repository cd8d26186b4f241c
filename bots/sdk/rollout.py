"""The greedy heuristic on an engine `Game`, for fast simulations (rollouts) in search bots.

`bots.sdk.greedy.choose` reads action texts: every call lists, filters and splits the legal
actions' strings, and a search bot such as `strong` calls it at every step of thousands of
simulated turns (issue 28 measured rollouts at 80% of its thinking time). Here the turn
decision reads what the engine already holds for each legal action, the effect it calls and
that effect's arguments (`Game.moves`: text -> (effect, args)), so nothing is parsed, and
the seat's cards are read off the table. It makes the same choice as `greedy.choose` (the
same priorities and the same tie-breaks: the first action in legal order wins a tie), which
`tests/bots/test_rollout.py` checks on thousands of positions of random games; decisions
other than the turn (passes, wastes, surrenders, deal steps: rare in a rollout) go to
`greedy.choose` itself through `EngineView`.

Needs the engine, so it is for bots that simulate with it (Python bots in the runtime have it).
"""

from __future__ import annotations

from collections.abc import Callable

from bots.sdk import greedy
from bots.sdk.cards import FINE, keep_value
from engine import Game
from engine.cards import VALUE, Card
from engine.deals import swap
from engine.effects import (
    discard,
    play_heat_off,
    play_heat_on,
    play_market_close,
    play_market_open,
    play_nirvana,
    play_paranoia,
    play_pay_fine,
    play_peddle,
    play_protected,
    play_steal,
)
from engine.hands import end
from engine.state import Phase, Seat

__all__ = ["EngineView", "best_swap", "choose", "leader"]


class EngineView:
    """An engine `Game` seen the way `bots.sdk.greedy` reads an observation (no copying)."""

    __slots__ = ("legal", "phase", "seat", "seats", "totals")

    def __init__(self, game: Game) -> None:
        self.legal = list(game.moves)
        self.phase = game.phase.value
        self.seat = game.to_act
        self.seats = game.seats
        self.totals = game.totals


def _tabled(seat: Seat) -> int:
    return seat.at_risk + seat.protected_value


def leader(game: Game, me: int) -> int:
    """`greedy.leader` on the engine's seats: the opponent with the most total plus tabled
    value (the first one clockwise from the left on a tie)."""
    seats = game.table.seats
    totals = game.table.totals
    best, best_value = -1, 0
    for s in game.others[me]:
        value = totals[s] + _tabled(seats[s])
        if best < 0 or value > best_value:
            best, best_value = s, value
    return best


def best_swap(game: Game) -> str | None:
    """The forced swap that gains the most peddle value, if any gains (the first on a tie),
    as `strong`'s `best_swap` and greedy's swap before it ends its turn choose it."""
    best: str | None = None
    gain = 0
    for text, (effect, args) in game.moves.items():
        if effect is swap:
            value = VALUE[args[2]] - VALUE[args[0]]
            if value > gain:
                best, gain = text, value
    return best


_PLAYS: frozenset[Callable[..., None]] = frozenset(
    {
        play_heat_off,
        play_heat_on,
        play_market_close,
        play_market_open,
        play_nirvana,
        play_paranoia,
        play_pay_fine,
        play_peddle,
        play_protected,
        play_steal,
    }
)
"""The effects of `play ...` actions (the Banker is never played)."""
_HEAT_OFF_ORDER = (Card.IMMUNITY, Card.A_BREEZE_TO_FLY, Card.HEARSAY_EVIDENCE, Card.CHARGES_DROPPED)
"""greedy's order of preference (`HEAT_OFF`'s order); only the matching one is ever legal."""


def choose(game: Game) -> str:
    """The action `greedy.choose` would take at the game's decision."""
    if game.table.phase is Phase.TURN:
        return _turn(game)
    return greedy.choose(EngineView(game))


def _turn(game: Game) -> str:
    t = game.table
    me = t.to_act
    seat = t.seats[me]
    moves = game.moves
    # One pass over the legal actions, sorting them by what they do (legal order kept).
    market_close: str | None = None
    market_open: str | None = None
    heat_off: dict[Card, str] = {}
    fine: tuple[int, str] | None = None
    protect: tuple[int, str] | None = None
    peddle: tuple[int, str] | None = None
    paranoia: list[tuple[str, Card, int]] = []
    steal: tuple[int, str] | None = None
    nirvana: dict[Card, str] = {}
    heat: list[tuple[str, int]] = []
    discards: list[tuple[str, Card]] = []
    ended = False
    any_play = False
    for text, (effect, args) in moves.items():
        if effect is discard:
            discards.append((text, args[0]))
            continue
        if effect is end:
            ended = True
            continue
        if effect not in _PLAYS:
            continue  # deals and swaps: greedy takes neither before it has played
        any_play = True
        if effect is play_peddle:
            value = VALUE[args[0]]
            if peddle is None or value > peddle[0]:
                peddle = (value, text)
        elif effect is play_market_open:
            market_open = market_open or text
        elif effect is play_heat_off:
            heat_off[args[0]] = text
        elif effect is play_pay_fine:
            value = VALUE[args[0]] if args[0] is not None else 0
            if fine is None or value < fine[0]:
                fine = (value, text)
        elif effect is play_protected:
            value = sum(VALUE[c] for c in args[1])
            if protect is None or value > protect[0]:
                protect = (value, text)
        elif effect is play_paranoia:
            paranoia.append((text, args[0], args[1]))
        elif effect is play_steal:
            value = (VALUE[args[1]] if args[1] is not None else 0) + 1
            if steal is None or value > steal[0]:
                steal = (value, text)
        elif effect is play_nirvana:
            nirvana[args[0]] = text
        elif effect is play_heat_on:
            heat.append((text, args[1]))
        elif effect is play_market_close:
            market_close = text
    if any_play:
        target = leader(game, me)
        if market_close is not None:
            mine = t.totals[me] + _tabled(seat)
            theirs = t.totals[target] + _tabled(t.seats[target])
            if mine > theirs + 25_000:
                return market_close
        if market_open is not None:
            return market_open
        for card in _HEAT_OFF_ORDER:
            if card in heat_off:
                return heat_off[card]
        if fine is not None:
            return fine[1]
        if protect is not None and protect[0] >= 25_000:
            return protect[1]
        if peddle is not None:
            return peddle[1]
        if paranoia:
            on_leader = [p for p in paranoia if _paranoia_target(p, target, game)]
            best = None
            for p in on_leader or paranoia:
                if best is None or FINE[p[1]] > FINE[best[1]]:
                    best = p
            assert best is not None
            return best[0]
        if steal is not None:
            return steal[1]
        if nirvana:
            choice = nirvana.get(Card.EUPHORIA) or nirvana.get(Card.STONEHIGH)
            given = sum(len(t.seats[s].unprotected) for s in game.others[me])
            if choice is not None and given >= 2:
                return choice
        if heat:
            for text, at in heat:
                if at == target:
                    return text
            return heat[0][0]
    if ended:
        return best_swap(game) or "end"
    if discards:
        market, under_heat = seat.market_open, bool(seat.heat)
        pick = discards[0]
        low = keep_value(pick[1], market, under_heat)
        for text, card in discards[1:]:
            value = keep_value(card, market, under_heat)
            if value < low:
                pick, low = (text, card), value
        return pick[0]
    return next(iter(moves))


def _paranoia_target(play: tuple[str, Card, int], target: int, game: Game) -> bool:
    """Whether a paranoia play is aimed at the leader: greedy tests the text's `@SEAT`, which
    only the modern rules write (classic paranoia costs its player and names no one)."""
    return game.ruleset.paranoia_on_opponent and play[2] == target
