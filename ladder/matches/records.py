"""What one finished match adds to its bots' records (`BotSeatRecord`, `BotOpponentRecord`):
plain functions over the seats' (bot, seat, place, faults), no Django.

The recording service adds each match's share as it records it; the rebuild (and the
migration that introduced the records) adds up every finished match's share with the same
functions, so the kept records and a recomputation cannot disagree by construction of the sums.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SeatResult:
    """One seat of a finished match, as the records need it."""

    bot_id: int
    seat: int
    place: int
    faults: Mapping[str, Any]


@dataclass
class SeatShare:
    games: int = 0
    wins: int = 0
    places: int = 0
    opponents: int = 0
    beaten: float = 0.0
    timed_out: int = 0
    crashed: int = 0

    def add(self, other: SeatShare) -> None:
        self.games += other.games
        self.wins += other.wins
        self.places += other.places
        self.opponents += other.opponents
        self.beaten += other.beaten
        self.timed_out += other.timed_out
        self.crashed += other.crashed


@dataclass
class OpponentShare:
    games: int = 0
    ahead: int = 0
    tied: int = 0

    def add(self, other: OpponentShare) -> None:
        self.games += other.games
        self.ahead += other.ahead
        self.tied += other.tied


SEAT_FIELDS = ("games", "wins", "places", "opponents", "beaten", "timed_out", "crashed")
OPPONENT_FIELDS = ("games", "ahead", "tied")


def match_shares(
    seats: Iterable[SeatResult],
) -> tuple[dict[tuple[int, int], SeatShare], dict[tuple[int, int], OpponentShare]]:
    """One match's share of its bots' records: by (bot, seat) and by (bot, opponent)."""
    seated = list(seats)
    by_seat: dict[tuple[int, int], SeatShare] = {}
    by_pair: dict[tuple[int, int], OpponentShare] = {}
    for mine in seated:
        others = [other for other in seated if other.bot_id != mine.bot_id]
        ahead = sum(1 for other in others if mine.place < other.place)
        tied = sum(1 for other in others if mine.place == other.place)
        by_seat[(mine.bot_id, mine.seat)] = SeatShare(
            games=1,
            wins=int(mine.place == 1),
            places=mine.place,
            opponents=len(others),
            beaten=ahead + 0.5 * tied,
            timed_out=int("timeout" in mine.faults),
            crashed=int("crashed" in mine.faults),
        )
        for other in others:
            by_pair[(mine.bot_id, other.bot_id)] = OpponentShare(
                games=1,
                ahead=int(mine.place < other.place),
                tied=int(mine.place == other.place),
            )
    return by_seat, by_pair


def add_shares(
    seats_total: dict[tuple[int, int], SeatShare],
    pairs_total: dict[tuple[int, int], OpponentShare],
    seats: Iterable[SeatResult],
) -> None:
    """Add one match's share (`match_shares`) to running totals."""
    by_seat, by_pair = match_shares(seats)
    for key, share in by_seat.items():
        seats_total.setdefault(key, SeatShare()).add(share)
    for key, pair in by_pair.items():
        pairs_total.setdefault(key, OpponentShare()).add(pair)
