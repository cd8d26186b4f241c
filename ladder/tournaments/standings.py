"""Tournament points and standings, for tables of 2-6 seats.

Pure functions, standard library only (see :mod:`ladder.tournaments.pairing`).

Points
------
A table is scored as its head-to-head pairs, like the ladder's Elo
(:mod:`ladder.ratings.elo`): an entrant gets 1 for every opponent it finished ahead of and 0.5
for every one it tied with, divided by ``table size - 1``.  So a table win is worth 1 and last
place 0 at any size, and the points of a table always add up to ``size / 2``: an average result
is worth 0.5, which is what a bye scores (:func:`bye_points`).

Standings
---------
Sorted by points, then by the tie-breaks of :data:`TIE_BREAKS`, in order (a single
elimination first ranks by how far each entrant got; see below):

1. *Opponents' points* (Buchholz): the sum of the final points of every opponent, counted once
   per table shared with it.  Points earned against strong opposition rank higher.
2. *Total money*: the sum of the entrant's money totals over all its tables -- how well it played
   its cards, not only where it finished.
3. *Table wins*: tables where it finished first (a shared first place counts).

Ranks are 1..n and distinct.  When everything above is equal, the lower entrant id (earlier
entry) goes first; that last step only makes the order deterministic, it is not a merit, so it
is not listed in :data:`TIE_BREAKS` nor shown in :attr:`Standing.tiebreak`.

Single elimination
------------------
Points alone would let a finalist who beat the champion on money in earlier rounds finish
above the champion.  So when ``advanced`` is given (entrant -> the number of rounds it advanced
from, a bye included), it ranks before points: the champion (who advanced from every round,
the final included) first, then the other players of the final table, then those who went out
a round earlier, and so on; within each group, points and the tie-breaks as above
(:data:`ELIMINATION_RANKING`).

Points and Buchholz sums are computed as exact fractions (thirds and fifths do not add up
exactly in floating point, and two entrants with equal points must compare equal); they are
returned as floats.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from ladder.tournaments.pairing import MAX_SEATS, MIN_SEATS, Round, Table

__all__ = [
    "ELIMINATION_RANKING",
    "RANKING",
    "TIE_BREAKS",
    "Standing",
    "TableResult",
    "bye_points",
    "duplicate_result",
    "places_from_totals",
    "standings",
    "table_points",
]

#: The tie-breaks after points, in order, as shown on the tournament page; they name the values
#: of :attr:`Standing.tiebreak`.
TIE_BREAKS: tuple[str, ...] = ("Opponents' points (Buchholz)", "Total money", "Table wins")

#: The whole order of round robin and Swiss standings: points, then the tie-breaks.
RANKING: tuple[str, ...] = ("Points", *TIE_BREAKS)

#: The whole order of single-elimination standings: how far an entrant got comes first.
ELIMINATION_RANKING: tuple[str, ...] = (
    "Rounds advanced (the champion first, then the rest of the final table, then those out a "
    "round earlier, and so on; a bye counts as advancing)",
    *RANKING,
)


@dataclass(frozen=True)
class TableResult:
    """One finished table: the finishing places and the money totals of its entrants."""

    table: Table
    places: Mapping[int, int]
    """Entrant -> place, 1 for first; entrants who tie share a place."""
    totals: Mapping[int, int]
    """Entrant -> money total in the game (for a duplicate table, summed over its rotations)."""

    def __post_init__(self) -> None:
        seated = set(self.table.seats)
        if set(self.places) != seated or set(self.totals) != seated:
            raise ValueError(
                f"places and totals must name exactly the table's entrants {sorted(seated)}"
            )
        if any(place < 1 for place in self.places.values()):
            raise ValueError(f"places start at 1, got {dict(self.places)}")


@dataclass(frozen=True)
class Standing:
    """One line of the standings."""

    rank: int
    entrant: int
    points: float
    tiebreak: tuple[float, int, int]
    """The values of :data:`TIE_BREAKS`, in order: Buchholz, total money, table wins."""
    games: int
    byes: int
    advanced: int | None = None
    """Single elimination: the rounds this entrant advanced from (ranked before points)."""


def places_from_totals(totals: Mapping[int, int]) -> dict[int, int]:
    """Places by money, most first; equal totals share a place and the next is skipped.

    >>> places_from_totals({7: 300, 8: 500, 9: 300, 10: 100})
    {7: 2, 8: 1, 9: 2, 10: 4}
    """
    return {
        e: 1 + sum(1 for other in totals.values() if other > total) for e, total in totals.items()
    }


def _exact_table_points(result: TableResult) -> dict[int, Fraction]:
    places = result.places
    opponents = len(result.table.seats) - 1
    scores: dict[int, Fraction] = {}
    for e in result.table.seats:
        ahead = sum(
            2 if places[e] < places[o] else 1 if places[e] == places[o] else 0
            for o in result.table.seats
            if o != e
        )
        scores[e] = Fraction(ahead, 2 * opponents)
    return scores


def table_points(result: TableResult) -> dict[int, float]:
    """Each entrant's points for one table: the share of its opponents it finished ahead of.

    1 per opponent beaten, 0.5 per tie, divided by ``size - 1``: a win is worth 1 and last
    place 0 whatever the table size.

    >>> t = TableResult(Table((1, 2, 3)), places={1: 2, 2: 1, 3: 2}, totals={1: 5, 2: 9, 3: 5})
    >>> table_points(t)
    {1: 0.25, 2: 1.0, 3: 0.25}
    """
    return {e: float(p) for e, p in _exact_table_points(result).items()}


def bye_points(seats: int) -> float:
    """Points for sitting a round out: 0.5, the average result at a table of any size.

    (A table's points add up to ``size / 2``.)  Less than a win, so a bye is no prize, and not
    nothing, because the entrant did not choose to sit out.  ``seats`` is the tournament's
    table size; it is checked, though the value does not depend on it.
    """
    if not MIN_SEATS <= seats <= MAX_SEATS:
        raise ValueError(f"seats must be between {MIN_SEATS} and {MAX_SEATS}, got {seats}")
    return 0.5


def duplicate_result(table: Table, rotations: Sequence[Mapping[int, int]]) -> TableResult:
    """Combine the games of a duplicate table (one per seat rotation) into one result.

    Each rotation maps entrant -> money total.  The totals are summed, and the places follow
    the sums (:func:`places_from_totals`): the entrant who made the most of the same cards from
    every seat wins.
    """
    if not rotations:
        raise ValueError("a duplicate table needs at least one rotation")
    seated = set(table.seats)
    totals = dict.fromkeys(table.seats, 0)
    for i, rotation in enumerate(rotations):
        if set(rotation) != seated:
            raise ValueError(f"rotation {i} names {sorted(rotation)}, the table {sorted(seated)}")
        for e, money in rotation.items():
            totals[e] += money
    return TableResult(table=table, places=places_from_totals(totals), totals=totals)


def standings(
    entrants: Sequence[int],
    results: Sequence[TableResult],
    byes: Mapping[int, int] | Sequence[Round] = (),
    *,
    seats: int = MAX_SEATS,
    advanced: Mapping[int, int] | None = None,
) -> list[Standing]:
    """The standings of ``entrants``, best first, ranked 1..n.

    ``results`` are all finished tables so far (an entrant missing from ``entrants``, such as
    one who withdrew, still counts as an opponent for Buchholz).  ``byes`` is either entrant ->
    number of byes, or the rounds played (their ``byes`` are counted); each bye scores
    :func:`bye_points` of ``seats``.  Order: points, then :data:`TIE_BREAKS`, then lower id.

    ``advanced`` (single elimination: entrant -> rounds it advanced from; missing means 0)
    ranks before points, so the champion is first whatever the points say.
    """
    bye_count: dict[int, int] = {}
    if isinstance(byes, Mapping):
        bye_count = dict(byes)
    else:
        for played in byes:
            for e in played.byes:
                bye_count[e] = bye_count.get(e, 0) + 1
    bye_value = Fraction(bye_points(seats))

    points: dict[int, Fraction] = {e: bye_value * n for e, n in bye_count.items()}
    money: dict[int, int] = {}
    wins: dict[int, int] = {}
    games: dict[int, int] = {}
    for result in results:
        for e, p in _exact_table_points(result).items():
            points[e] = points.get(e, Fraction(0)) + p
            money[e] = money.get(e, 0) + result.totals[e]
            games[e] = games.get(e, 0) + 1
            if result.places[e] == 1:
                wins[e] = wins.get(e, 0) + 1

    buchholz: dict[int, Fraction] = {}
    for result in results:
        for e in result.table.seats:
            faced = sum((points[o] for o in result.table.seats if o != e), Fraction(0))
            buchholz[e] = buchholz.get(e, Fraction(0)) + faced

    field = list(entrants)
    if len(set(field)) != len(field):
        raise ValueError("standings: an entrant is listed twice")
    zero = Fraction(0)
    reached = advanced or {}
    field.sort(
        key=lambda e: (
            -reached.get(e, 0),
            -points.get(e, zero),
            -buchholz.get(e, zero),
            -money.get(e, 0),
            -wins.get(e, 0),
            e,
        )
    )
    return [
        Standing(
            rank=rank,
            entrant=e,
            points=float(points.get(e, zero)),
            tiebreak=(float(buchholz.get(e, zero)), money.get(e, 0), wins.get(e, 0)),
            games=games.get(e, 0),
            byes=bye_count.get(e, 0),
            advanced=None if advanced is None else reached.get(e, 0),
        )
        for rank, e in enumerate(field, start=1)
    ]
