"""The greedy heuristic on an engine `Game`, for fast simulations (rollouts) in search bots.

A search bot such as `strong` plays greedy for every seat at every step of thousands of
simulated turns (issue 28 measured rollouts at 80% of its thinking time). `EngineView` shows an
engine `Game` to `bots.sdk.greedy` as an observation without copying it: the seats are the
table's own, the legal moves the engine's records (`Game.legal_moves`: parsed once per text,
then looked up), so the policy in `greedy` is the only one and nothing is split into words.
`best_swap` and `leader` read the engine's seats and moves directly.

Needs the engine, so it is for bots that simulate with it (Python bots in the runtime have it).
"""

from __future__ import annotations

from bots.sdk import greedy
from engine import Game
from engine.cards import VALUE
from engine.deals import swap
from engine.state import Seat

__all__ = ["EngineView", "best_swap", "choose", "leader"]


class EngineView:
    """An engine `Game` seen the way `bots.sdk.greedy` reads an observation (no copying)."""

    __slots__ = ("legal", "phase", "seat", "seats", "totals")

    def __init__(self, game: Game) -> None:
        table = game.table
        self.legal = list(game.moves)
        self.phase = table.phase.value
        self.seat = table.to_act
        self.seats = table.seats
        self.totals = table.totals


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


def choose(game: Game) -> str:
    """The action `greedy.choose` takes at the game's decision."""
    return greedy.choose(EngineView(game))
