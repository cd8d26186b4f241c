"""Who sits at which table: round robin, Swiss and single elimination for 2-6 seats.

Pure functions over frozen dataclasses, standard library only, so the tournament services can
call them inside a transaction and the tests can call them without a database.  Entrants are
opaque ints (database ids).  Every function takes a seeded :class:`random.Random`: the same seed
gives the same schedule, so a tournament can be rebuilt from its seed.

Rules that hold for every format
--------------------------------

* **Table sizes** (:func:`table_plan`).  ``n`` entrants at ``seats``-seat tables sit at
  ``ceil(n / seats)`` tables whose sizes differ by at most one, the larger tables first: 14
  entrants at 6 seats play at 5 + 5 + 4, never 6 + 6 + 2.  A table never has fewer than two
  seats, so the only case that needs a **bye** is two seats with an odd count: one entrant sits
  out.  Grass plays well at any size from 2 to 6 and :func:`ladder.tournaments.standings
  .table_points` makes a table win worth 1 whatever the size, so a smaller table is fairer than
  sitting somebody out.
* **Too few entrants.**  Round robin and Swiss need at least ``seats`` entrants (a 6-seat event
  with 4 entrants is a configuration mistake, not something to paper over); they raise
  :class:`ValueError`.  Elimination rounds take any two or more survivors, because the last
  rounds of a bracket naturally have fewer.
* **Seat positions.**  Seat 0 acts first in a hand; to spread that luck, round robin and Swiss
  balance how often each entrant sits in each position (see each function for the bound);
  elimination tables, played once per entrant, get a random order.  For full luck control play
  each table as a *duplicate* table (:func:`duplicate_rotations`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "MAX_SEATS",
    "MIN_SEATS",
    "Round",
    "Table",
    "duplicate_rotations",
    "elimination_advancing",
    "elimination_round",
    "elimination_rounds_needed",
    "pair_counts",
    "round_robin_lower_bound",
    "round_robin_schedule",
    "seat_counts",
    "swiss_round",
    "table_plan",
]

MIN_SEATS = 2
MAX_SEATS = 6

#: Greedy attempts per round robin round (seats >= 3); the most valuable round is kept.  More
#: attempts shave a round or two off large schedules at a linear cost in time.
ROUND_ROBIN_ATTEMPTS = 4

#: Whole round robin constructions (seats >= 3) tried for a small field, keeping the shortest;
#: fewer for large fields, where one construction already costs more and a round matters less.
ROUND_ROBIN_RESTARTS = 8

#: Passes of improving swaps over each round robin round; a pass without a swap ends early.
ROUND_ROBIN_SWAP_PASSES = 4

#: Passes of the evening-out over a whole round robin schedule (see _even_out); a pass without
#: a swap ends early.
ROUND_ROBIN_EVEN_PASSES = 30

#: Steps of the simulated annealing tried on a round robin schedule that still has a pair too
#: busy after the evening-out: this many per possible swap (rounds * entrants ** 2), at most
#: ROUND_ROBIN_ANNEAL_MAX_STEPS.  A slower cooling finds more; it stops once the bound holds.
ROUND_ROBIN_ANNEAL_STEPS = 300
ROUND_ROBIN_ANNEAL_MAX_STEPS = 200_000

# A pair meeting in a round robin is worth about +1 while it still needs a meeting, and costs
# _REPEAT_PENALTY * (extra meetings) ** 2 after that, so repeats spread over many pairs instead of
# piling onto a few.  Going past the cap (see _covering_rounds) costs _OVER_CAP_PENALTY: it only
# happens when nothing else fits.
_REPEAT_PENALTY = 0.25
_OVER_CAP_PENALTY = 1000.0
# What a pair's missing meeting costs in _even_out: more than any evening-out swap can gain,
# so a swap never uncovers a pair.  In _anneal it costs less, so a swap may (for a while).
_MISSING_PENALTY = 1_000_000
_ANNEAL_MISSING_COST = 4

#: How many of the next-ranked entrants a Swiss table looks through for one its members have not
#: met, per seat.  Wide enough that a repeat-free choice almost always exists, narrow enough that
#: an entrant is not paired far outside its score group.
SWISS_WINDOW_PER_SEAT = 6

#: Passes of the Swiss repair over all tables; a pass without a swap ends it early.
SWISS_REPAIR_PASSES = 4


@dataclass(frozen=True)
class Table:
    """One game: the entrants in seat order (seat 0 first)."""

    seats: tuple[int, ...]

    def __post_init__(self) -> None:
        if not MIN_SEATS <= len(self.seats) <= MAX_SEATS:
            raise ValueError(f"a table seats {MIN_SEATS}-{MAX_SEATS}, got {len(self.seats)}")
        if len(set(self.seats)) != len(self.seats):
            raise ValueError(f"an entrant sits twice at table {self.seats}")


@dataclass(frozen=True)
class Round:
    """The tables played at the same time, and the entrants who sit this round out."""

    tables: tuple[Table, ...]
    byes: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        everyone = self.entrants
        if len(set(everyone)) != len(everyone):
            raise ValueError("an entrant appears twice in one round")

    @property
    def entrants(self) -> tuple[int, ...]:
        """Everybody in the round: seated entrants table by table, then the byes."""
        return tuple(e for table in self.tables for e in table.seats) + self.byes


# --- shared helpers ---------------------------------------------------------------------------


def _check_seats(seats: int) -> None:
    if not MIN_SEATS <= seats <= MAX_SEATS:
        raise ValueError(f"seats must be between {MIN_SEATS} and {MAX_SEATS}, got {seats}")


def _distinct(entrants: Sequence[int], *, minimum: int, what: str) -> list[int]:
    players = list(entrants)
    if len(set(players)) != len(players):
        raise ValueError(f"{what}: an entrant is listed twice")
    if len(players) < minimum:
        raise ValueError(f"{what} needs at least {minimum} entrants, got {len(players)}")
    return players


def table_plan(count: int, seats: int) -> tuple[tuple[int, ...], int]:
    """Table sizes (largest first) and the number of byes for ``count`` entrants.

    ``ceil(count / seats)`` tables whose sizes differ by at most one; at two seats an odd count
    leaves one bye, because a table of one is no game.  With three or more seats every entrant
    is seated.

    >>> table_plan(14, 6)
    ((5, 5, 4), 0)
    >>> table_plan(7, 2)
    ((2, 2, 2), 1)
    """
    _check_seats(seats)
    if count < MIN_SEATS:
        raise ValueError(f"a round needs at least {MIN_SEATS} entrants, got {count}")
    if seats == 2:
        return (2,) * (count // 2), count % 2
    tables = -(-count // seats)
    return _even_sizes(count, tables, largest_first=True), 0


def _even_sizes(count: int, tables: int, *, largest_first: bool) -> tuple[int, ...]:
    small, extra = divmod(count, tables)
    sizes = [small + 1] * extra + [small] * (tables - extra)
    return tuple(sizes if largest_first else reversed(sizes))


def pair_counts(rounds: Iterable[Round]) -> dict[tuple[int, int], int]:
    """How often each pair ``(low id, high id)`` shared a table."""
    counts: dict[tuple[int, int], int] = {}
    for played in rounds:
        for table in played.tables:
            members = sorted(table.seats)
            for i, a in enumerate(members):
                for b in members[i + 1 :]:
                    counts[a, b] = counts.get((a, b), 0) + 1
    return counts


def seat_counts(rounds: Iterable[Round]) -> dict[int, list[int]]:
    """For each entrant, how often it sat in seat position 0, 1, ... ``MAX_SEATS - 1``."""
    counts: dict[int, list[int]] = {}
    for played in rounds:
        for table in played.tables:
            for position, entrant in enumerate(table.seats):
                counts.setdefault(entrant, [0] * MAX_SEATS)[position] += 1
    return counts


def _met(rounds: Iterable[Round]) -> dict[int, dict[int, int]]:
    """For each entrant, how often it shared a table with each other entrant."""
    met: dict[int, dict[int, int]] = {}
    for played in rounds:
        for table in played.tables:
            for a in table.seats:
                row = met.setdefault(a, {})
                for b in table.seats:
                    if b != a:
                        row[b] = row.get(b, 0) + 1
    return met


def _order_seats(
    members: Sequence[int], deviation: dict[int, list[float]], rng: random.Random
) -> list[int]:
    """Seat order for one table that gives each member a position it has had too little.

    ``deviation[e][p]`` is how many times more than its fair share ``e`` already sat at position
    ``p``; it is updated for this table.  Giving ``e`` position ``p`` raises the sum of squared
    deviations by ``2 * deviation + 1``, so the cheapest assignment takes the smallest
    deviations first (greedy: exact enough for six seats, and fast).
    """
    size = len(members)
    share = 1.0 / size
    for e in members:
        row = deviation.setdefault(e, [0.0] * MAX_SEATS)
        for p in range(size):
            row[p] -= share
    options = sorted((deviation[e][p], rng.random(), e, p) for e in members for p in range(size))
    order: list[int | None] = [None] * size
    placed: set[int] = set()
    for _, _, e, p in options:
        if e not in placed and order[p] is None:
            order[p] = e
            placed.add(e)
            deviation[e][p] += 1.0
    return [e for e in order if e is not None]


# --- round robin ------------------------------------------------------------------------------


def round_robin_lower_bound(count: int, seats: int, *, meetings: int = 1) -> int:
    """Fewest rounds in which every pair of ``count`` entrants can meet ``meetings`` times.

    Two counting arguments over the tables of :func:`table_plan`: an entrant meets at most
    (largest table - 1) others per round, and a round holds a fixed number of pairs.  (At two
    seats with an odd count somebody sits out every round, which the circle method meets.)

    >>> round_robin_lower_bound(64, 6), round_robin_lower_bound(10, 6)
    (14, 3)
    """
    sizes, _ = table_plan(count, seats)
    per_entrant = -(-meetings * (count - 1) // (sizes[0] - 1))
    per_round = sum(s * (s - 1) // 2 for s in sizes)
    return max(per_entrant, -(-meetings * count * (count - 1) // 2 // per_round))


def round_robin_schedule(
    entrants: Sequence[int], seats: int, *, meetings: int = 1, rng: random.Random
) -> list[Round]:
    """Rounds in which every pair of entrants shares a table at least ``meetings`` times.

    **Two seats**: the circle method (Berger tables), repeated ``meetings`` times with the seat
    order flipped on every other repetition.  Every pair meets exactly ``meetings`` times in
    ``meetings * (n - 1)`` rounds (``meetings * n`` for odd ``n``, one bye per round, each
    entrant sitting out once per repetition).  Each entrant sits in seat 0 in half of its games,
    rounded up or down: ``|2 * seat0 - games| <= 1``.

    **Three to six seats**: every combination of tables would explode, so a covering is built
    greedily, round by round.  Each table starts from the entrant that still needs the most
    meetings and grows by whoever completes the most pairs still short of ``meetings``
    (weighted towards the neediest entrants, who decide how many rounds it takes; repeats cost
    more with each extra meeting); then members are swapped between tables while that helps.
    Each round is built :data:`ROUND_ROBIN_ATTEMPTS` times in random orders and the best kept,
    and the whole construction up to :data:`ROUND_ROBIN_RESTARTS` times for small fields (the
    shortest kept).  Then the meetings are evened out over the whole schedule: members of the
    busiest pairs are swapped between the tables of a round while that lowers the sum of
    squared meeting counts (:func:`_even_out`).  Tables follow :func:`table_plan`: no byes.
    Under a second for 64 entrants at 6 seats (``python -m bench.tournament``); the
    time grows like ``rounds * n ** 2``.  What holds:

    * every pair meets at least ``meetings`` times (by construction);
    * no pair meets more than the average number of meetings, rounded up, plus one (tested;
      e.g. 64 entrants at 6 seats: average 1.38, no pair more than 3 times).  When evening
      out leaves a pair above that, simulated annealing (:func:`_anneal`) looks further, and
      if that fails too, the shortest construction within the bound is taken, or rounds that
      keep the busiest pairs apart are added.  Of 550 cases (3-6 seats, up to 22 more
      entrants than seats, 1-3 meetings) that took a longer schedule only for 6 entrants at
      3-5 seats: every 4-round cover of two tables of 3 seats one pair together in all four
      rounds, so they play 5 rounds.  The bound is the best possible in general: 7 entrants
      at 6 seats (tables of 4 and 3) cannot avoid a pair meeting in all 3 rounds;
    * rounds: at least :func:`round_robin_lower_bound` are needed; the schedule is tested to
      stay within twice that, and in 600 random cases never took more than ``1.4 * bound + 1``
      (64 entrants at 6 seats: bound 14, 18 built; at 3 seats: 33 and 37);
    * seat positions: for each entrant and position, the times it sat there differ from its
      fair share (the sum of ``1 / table size`` over its tables that have that position) by
      less than 2 (tested), at most 1.2 in the random cases.

    Entrants are shuffled by ``rng`` first, so the same seed gives the same schedule.
    """
    _check_seats(seats)
    if meetings < 1:
        raise ValueError(f"meetings must be at least 1, got {meetings}")
    players = _distinct(entrants, minimum=seats, what=f"a {seats}-seat round robin")
    rng.shuffle(players)
    if seats == 2:
        return _circle_schedule(players, meetings)
    groups = _covering_rounds(len(players), seats, meetings, rng)
    tables = _balance_seats(groups, rng)
    return [
        Round(tables=tuple(Table(tuple(players[i] for i in table)) for table in played))
        for played in tables
    ]


def _circle_schedule(players: list[int], meetings: int) -> list[Round]:
    """Berger tables.  With ``arr[0]`` fixed and the rest rotating one place per round, a
    rotating entrant takes seat 0 when its index is odd (exactly one of ``i`` and ``n - 1 - i``
    is), and the fixed one on even rounds: that alternation is what balances seat 0."""
    arr: list[int | None] = [None, *players] if len(players) % 2 else list(players)
    n = len(arr)
    fixed, rest = arr[0], arr[1:]
    cycle: list[tuple[list[tuple[int, int]], tuple[int, ...]]] = []
    for r in range(n - 1):
        shift = r % (n - 1)
        line = [fixed, *(rest[-shift:] + rest[:-shift] if shift else rest)]
        pairs: list[tuple[int, int]] = []
        byes: list[int] = []
        for i in range(n // 2):
            a, b = line[i], line[n - 1 - i]
            first_is_seat0 = (r % 2 == 0) if i == 0 else (i % 2 == 1)
            if a is None or b is None:
                byes.extend(e for e in (a, b) if e is not None)
            else:
                pairs.append((a, b) if first_is_seat0 else (b, a))
        cycle.append((pairs, tuple(byes)))
    rounds: list[Round] = []
    for repetition in range(meetings):
        for pairs, sitting_out in cycle:
            if repetition % 2:
                pairs = [(b, a) for a, b in pairs]
            rounds.append(Round(tables=tuple(Table(p) for p in pairs), byes=sitting_out))
    return rounds


def _covering_rounds(
    n: int, seats: int, meetings: int, rng: random.Random
) -> list[list[list[int]]]:
    """Rounds of tables (as indices ``0..n-1``) covering every pair ``meetings`` times.

    The whole construction is repeated a few times (more for small fields, where it is cheap
    and where one wasted round matters most), each evened out (:func:`_even_out`), and the
    shortest kept (then one within the pair bound, then the one whose busiest pair met least).

    The pair bound: no pair more than ``ceil(average) + 1`` meetings.  Every round has the
    same tables, so the average is at least ``lower * per_round / pairs`` (and at least
    ``meetings``) whatever the schedule; the greedy keeps a pair to ``cap = 2 * that + 1``
    on every other construction, which steers it, and the evening out does the rest.  If the
    shortest schedule still breaks the bound it is annealed (:func:`_anneal`); failing that,
    the shortest construction within the bound is taken, or else rounds that keep the busiest
    pairs apart are added (each raises the average) until the bound holds.
    """
    sizes, _ = table_plan(n, seats)
    per_round = sum(s * (s - 1) // 2 for s in sizes)
    pairs = n * (n - 1) // 2
    lower = round_robin_lower_bound(n, seats, meetings=meetings)
    cap = math.floor(2 * max(meetings, lower * per_round / pairs) + 1)
    restarts = max(1, min(ROUND_ROBIN_RESTARTS, 16_000 // (n * n)))

    def allowed(length: int) -> int:
        # The pair bound for a schedule of `length` rounds: ceil(average meetings) + 1.
        return -(-length * per_round // pairs) + 1

    candidates: list[tuple[tuple[int, bool, int], int, list[list[list[int]]], list[list[int]]]]
    candidates = []
    for attempt in range(restarts):
        # Every other construction runs without the cap: when the schedule comes out longer
        # than the lower bound, the real average is higher and the cap was needlessly tight.
        limit = cap if attempt % 2 == 0 else n * n
        rounds, count = _cover_once(sizes, n, meetings, limit, rng)
        _even_out(rounds, count, meetings)
        busiest = _busiest(count)
        key = (len(rounds), busiest > allowed(len(rounds)), busiest)
        candidates.append((key, attempt, rounds, count))
    candidates.sort(key=lambda c: (c[0], c[1]))
    _, _, rounds, count = candidates[0]
    if _busiest(count) > allowed(len(rounds)):
        # The shortest breaks the bound: anneal it, or else take the shortest that keeps it
        # (a short try when there is one, since the try often fails: a full one when not).
        within = [c for c in candidates if not c[0][1]]
        effort = ROUND_ROBIN_ANNEAL_STEPS // 5 if within else ROUND_ROBIN_ANNEAL_STEPS
        _anneal(rounds, count, meetings, rng, effort, allowed(len(rounds)))
        if _busiest(count) > allowed(len(rounds)) and within:
            _, _, rounds, count = within[0]
    for _ in range(lower + 1):
        if _busiest(count) <= allowed(len(rounds)):
            break
        busiest = _busiest(count)
        value = [
            [-_OVER_CAP_PENALTY if c >= busiest else -_REPEAT_PENALTY * c * c for c in row]
            for row in count
        ]
        rounds.append(_best_round(sizes, value, [0] * n, rng))
        _record(rounds[-1], count, [0] * n, meetings)
        _even_out(rounds, count, meetings)
        if _busiest(count) > allowed(len(rounds)):
            _anneal(rounds, count, meetings, rng, ROUND_ROBIN_ANNEAL_STEPS, allowed(len(rounds)))
    return rounds


def _busiest(count: list[list[int]]) -> int:
    return max(max(row) for row in count)


def _anneal(
    rounds: list[list[list[int]]],
    count: list[list[int]],
    meetings: int,
    rng: random.Random,
    steps_per_swap: int,
    allowed: int,
) -> None:
    """Simulated annealing over swaps within a round, for a schedule that _even_out's downhill
    swaps leave with a pair met more than ``allowed`` times.

    The cost is the sum of squared meeting counts plus :data:`_ANNEAL_MISSING_COST` per meeting
    a pair is short of ``meetings``: finite, because a better spread is often only reached
    through a schedule that briefly leaves a pair short (the downhill swaps never do that, and
    get stuck).  Worse swaps are taken with a probability that falls as the temperature drops.
    The best covering schedule seen (busiest pair, then cost) is kept; it stops early once
    that is within ``allowed``.  Updates ``rounds`` and ``count`` in place.
    """
    movable = [played for played in rounds if len(played) > 1]
    if not movable:
        return
    steps = min(ROUND_ROBIN_ANNEAL_MAX_STEPS, steps_per_swap * len(rounds) * len(count) ** 2)

    def cost(c: int) -> int:
        return c * c + (_ANNEAL_MISSING_COST * (meetings - c) if c < meetings else 0)

    best_key = (_busiest(count), 0)
    best = [[list(t) for t in played] for played in rounds]
    total = missing = 0
    hot, cold = 3.0, 0.1
    for step in range(steps):
        played = rng.choice(movable)
        i, j = rng.sample(range(len(played)), 2)
        first, second = played[i], played[j]
        p, q = rng.randrange(len(first)), rng.randrange(len(second))
        x, y = first[p], second[q]
        cx, cy = count[x], count[y]
        delta = short = 0
        for a in first:
            if a != x:
                delta += cost(cx[a] - 1) - cost(cx[a]) + cost(cy[a] + 1) - cost(cy[a])
                short += (cx[a] <= meetings) - (cy[a] < meetings)
        for b in second:
            if b != y:
                delta += cost(cy[b] - 1) - cost(cy[b]) + cost(cx[b] + 1) - cost(cx[b])
                short += (cy[b] <= meetings) - (cx[b] < meetings)
        if delta > 0:
            temperature = hot * (cold / hot) ** (step / steps)
            if rng.random() >= math.exp(-delta / temperature):
                continue
        for a in first:
            if a != x:
                cx[a] -= 1
                count[a][x] -= 1
                cy[a] += 1
                count[a][y] += 1
        for b in second:
            if b != y:
                cy[b] -= 1
                count[b][y] -= 1
                cx[b] += 1
                count[b][x] += 1
        first[p], second[q] = y, x
        total += delta
        missing += short
        if missing == 0 and delta < 0 and (key := (_busiest(count), total)) < best_key:
            best_key = key
            best = [[list(t) for t in played] for played in rounds]
            if key[0] <= allowed:
                break
    rounds[:] = best
    for row in count:
        row[:] = [0] * len(row)
    for played in rounds:
        for table in played:
            for a in table:
                for b in table:
                    if a != b:
                        count[a][b] += 1


def _even_out(rounds: list[list[list[int]]], count: list[list[int]], meetings: int) -> None:
    """Swap entrants between the tables of one round so that pairs meet as evenly as possible.

    The table sizes fix the total number of meetings, so the most even spread is the one with
    the smallest sum of squared meeting counts; each swap lowers that sum, and none leaves a
    pair short of ``meetings`` (:data:`_MISSING_PENALTY`).  Only swaps that move a member of a
    pair met more than ``ceil(average)`` times are tried, which keeps this cheap.  Updates
    ``rounds`` and ``count`` in place.
    """
    n = len(count)
    total = sum(sum(row) for row in count) // 2
    ideal = max(meetings, -(-total // (n * (n - 1) // 2)))

    def more(c: int) -> int:  # the cost of one more meeting for a pair at c
        return 2 * c + 1 - (_MISSING_PENALTY if c < meetings else 0)

    def fewer(c: int) -> int:  # the cost of one meeting less
        return 1 - 2 * c + (_MISSING_PENALTY if c <= meetings else 0)

    for _ in range(ROUND_ROBIN_EVEN_PASSES):
        moved = False
        for played in rounds:
            for first in played:
                busy = [x for x in first if any(count[x][o] > ideal for o in first if o != x)]
                for x in busy:
                    if x not in first:
                        continue  # swapped away by an earlier move
                    rest = [a for a in first if a != x]
                    cx = count[x]
                    leave = sum(fewer(cx[a]) for a in rest)
                    best, best_delta = None, 0
                    for second in played:
                        if second is first:
                            continue
                        join = sum(more(cx[b]) for b in second)
                        for y in second:
                            cy = count[y]
                            delta = (
                                leave
                                + join
                                - more(cx[y])
                                + sum(more(cy[a]) for a in rest)
                                + sum(fewer(cy[b]) for b in second if b != y)
                            )
                            if delta < best_delta:
                                best, best_delta = (second, y), delta
                    if best is None:
                        continue
                    second, y = best
                    for a in rest:
                        cx[a] -= 1
                        count[a][x] -= 1
                        count[y][a] += 1
                        count[a][y] += 1
                    for b in second:
                        if b != y:
                            count[y][b] -= 1
                            count[b][y] -= 1
                            cx[b] += 1
                            count[b][x] += 1
                    first[first.index(x)] = y
                    second[second.index(y)] = x
                    moved = True
        if not moved:
            break


def _cover_once(
    sizes: Sequence[int], n: int, meetings: int, cap: int, rng: random.Random
) -> tuple[list[list[list[int]]], list[list[int]]]:
    """Greedy rounds until every pair has met ``meetings`` times; the rounds and the counts."""
    count = [[0] * n for _ in range(n)]
    need = [meetings * (n - 1)] * n  # meetings still missing, per entrant
    rounds: list[list[list[int]]] = []
    while any(need):
        value = _pair_values(count, need, meetings, cap)
        rounds.append(_best_round(sizes, value, need, rng))
        _record(rounds[-1], count, need, meetings)
    return rounds, count


def _best_round(
    sizes: Sequence[int], value: list[list[float]], need: list[int], rng: random.Random
) -> list[list[int]]:
    best: list[list[int]] = []
    best_value = -math.inf
    for _ in range(ROUND_ROBIN_ATTEMPTS):
        tables = _greedy_round(sizes, value, need, rng)
        total = _improve_round(tables, value)
        if total > best_value:
            best, best_value = tables, total
    return best


def _record(
    tables: list[list[int]], count: list[list[int]], need: list[int], meetings: int
) -> None:
    for table in tables:
        for i, a in enumerate(table):
            for b in table[i + 1 :]:
                if count[a][b] < meetings:
                    need[a] -= 1
                    need[b] -= 1
                count[a][b] += 1
                count[b][a] += 1


def _pair_values(
    count: list[list[int]], need: list[int], meetings: int, cap: int
) -> list[list[float]]:
    """What seating each pair together this round is worth.

    A pair still short of ``meetings`` is worth 1, plus up to 1 more the more its two entrants
    still need: they are the bottleneck that decides how many rounds the schedule takes.  A
    pair already covered costs more with each extra meeting (quadratically), so repeats spread
    over many pairs; going past ``cap`` costs so much that it only happens when nothing else
    fits.
    """
    most = max(max(need), 1)
    values: list[list[float]] = []
    for a, row in enumerate(count):
        line: list[float] = []
        for b, c in enumerate(row):
            if a == b:
                line.append(0.0)
            elif c < meetings:
                line.append(1.0 + (need[a] + need[b]) / (2 * most))
            elif c >= cap:
                line.append(-_OVER_CAP_PENALTY)
            else:
                line.append(-_REPEAT_PENALTY * (c - meetings + 1) ** 2)
        values.append(line)
    return values


def _greedy_round(
    sizes: Sequence[int], value: list[list[float]], need: list[int], rng: random.Random
) -> list[list[int]]:
    """One round: each table starts from the neediest free entrant and grows by the one whose
    pairs with the members are worth most."""
    noise = [rng.random() for _ in range(len(need))]
    free = set(range(len(need)))
    tables: list[list[int]] = []
    for size in sizes:
        head = max(free, key=lambda e: (need[e], noise[e]))
        free.discard(head)
        table = [head]
        gain = dict.fromkeys(free, 0.0)
        while len(table) < size:
            row = value[table[-1]]
            for x in free:
                gain[x] += row[x]
            pick = max(free, key=lambda e: (gain[e], need[e], noise[e]))
            free.discard(pick)
            del gain[pick]
            table.append(pick)
        tables.append(table)
    return tables


def _improve_round(tables: list[list[int]], value: list[list[float]]) -> float:
    """Swap entrants between tables while that raises the round's value; return the value.

    The greedy fills the last tables with whoever is left; this repair is what keeps those
    tables from repeating the same pairs round after round.  ``worth[x][t]`` (what ``x``'s
    pairs with the members of table ``t`` are worth) makes each candidate swap O(1), and a
    swap updates it in O(n).
    """
    worth = [[sum(row[o] for o in table) for table in tables] for row in value]
    for _ in range(ROUND_ROBIN_SWAP_PASSES):
        improved = False
        for a, first in enumerate(tables):
            for b in range(a + 1, len(tables)):
                second = tables[b]
                for p in range(len(first)):
                    for q in range(len(second)):
                        x, y = first[p], second[q]
                        wx, wy, crossed = worth[x], worth[y], value[x][y]
                        delta = wy[a] - wx[a] + wx[b] - wy[b] - 2 * crossed
                        if delta > 1e-9:
                            first[p], second[q] = y, x
                            for z, row in enumerate(value):
                                shift = row[y] - row[x]
                                worth[z][a] += shift
                                worth[z][b] -= shift
                            improved = True
        if not improved:
            break
    return sum(value[a][b] for table in tables for i, a in enumerate(table) for b in table[i + 1 :])


def _balance_seats(groups: list[list[list[int]]], rng: random.Random) -> list[list[list[int]]]:
    """Seat orders for a whole schedule: greedy round by round, then improving swaps.

    The swaps minimise the sum over entrants and positions of the squared difference between
    the times sat there and the fair share; each swap lowers it, so the passes end.
    """
    deviation: dict[int, list[float]] = {}
    ordered = [[_order_seats(table, deviation, rng) for table in played] for played in groups]
    for _ in range(50):
        improved = False
        for played in ordered:
            for table in played:
                for p in range(len(table)):
                    for q in range(p + 1, len(table)):
                        e, f = table[p], table[q]
                        de, df = deviation[e], deviation[f]
                        if 2 * (de[q] - de[p] + df[p] - df[q]) + 4 < -1e-9:
                            de[p] -= 1
                            de[q] += 1
                            df[q] -= 1
                            df[p] += 1
                            table[p], table[q] = f, e
                            improved = True
        if not improved:
            break
    return ordered


# --- Swiss ------------------------------------------------------------------------------------


def swiss_round(
    entrants: Sequence[int],
    seats: int,
    *,
    points: Mapping[int, float],
    history: Sequence[Round],
    rng: random.Random,
) -> Round:
    """The next Swiss round: tables of entrants close in the standings who have not met.

    * **Order.**  Entrants sorted by ``points`` (missing = 0), best first; equal points in a
      random order from ``rng``.
    * **Tables.**  Sizes from :func:`table_plan`, largest first, so any smaller tables are at
      the bottom.  Each table takes the best-ranked entrant not yet seated, then fills up with
      the next-ranked entrant who has met none of the table's members, looking at most
      ``SWISS_WINDOW_PER_SEAT * seats`` places down; when nobody in that window is new to all
      of them, the one with the fewest earlier meetings.  Then a repair pass: for every table
      that still holds a repeat pair, members are swapped with nearby tables (nearest first)
      whenever that lowers the total number of repeats.  Repeats are therefore minimised
      greedily, not provably: with ``n >= seats ** 2`` the first two rounds come out
      repeat-free (tested), and the bench's 1,000 entrants at 6 seats stay repeat-free for at
      least 8 rounds.
    * **Bye** (two seats, odd count only): the lowest-ranked entrant with the fewest byes so
      far, which is the lowest-ranked one without a bye until everybody has had one.  Byes are
      counted from ``history``.
    * **Seats.**  Each table's order gives every member the position it has had least often
      (relative to its fair share) in ``history``.

    About 0.01 s for 1,000 entrants at 6 seats after 5 rounds (``python -m
    bench.tournament``): the work is linear in entrants times the window.
    """
    _check_seats(seats)
    players = _distinct(entrants, minimum=seats, what=f"a {seats}-seat Swiss round")
    rng.shuffle(players)
    players.sort(key=lambda e: -points.get(e, 0.0))
    sizes, bye_count = table_plan(len(players), seats)
    byes: tuple[int, ...] = ()
    if bye_count:
        had: dict[int, int] = {}
        for played in history:
            for e in played.byes:
                had[e] = had.get(e, 0) + 1
        fewest = min(had.get(e, 0) for e in players)
        bye = next(e for e in reversed(players) if had.get(e, 0) == fewest)
        players.remove(bye)
        byes = (bye,)
    met = _met(history)
    tables = _swiss_tables(players, sizes, met, SWISS_WINDOW_PER_SEAT * seats)
    _repair_repeats(tables, met)
    deviation = _seat_deviation(history)
    return Round(
        tables=tuple(Table(tuple(_order_seats(t, deviation, rng))) for t in tables),
        byes=byes,
    )


_NOBODY: dict[int, int] = {}


def _repeats(entrant: int, others: Iterable[int], met: dict[int, dict[int, int]]) -> int:
    row = met.get(entrant, _NOBODY)
    return sum(row.get(o, 0) for o in others)


def _swiss_tables(
    ranked: list[int], sizes: Sequence[int], met: dict[int, dict[int, int]], window: int
) -> list[list[int]]:
    seated = [False] * len(ranked)
    start = 0
    tables: list[list[int]] = []
    for size in sizes:
        while seated[start]:
            start += 1
        seated[start] = True
        table = [ranked[start]]
        while len(table) < size:
            best, best_cost, looked = -1, math.inf, 0
            i = start + 1
            while i < len(ranked) and looked < window:
                if not seated[i]:
                    looked += 1
                    cost = _repeats(ranked[i], table, met)
                    if cost < best_cost:
                        best, best_cost = i, cost
                        if cost == 0:
                            break
                i += 1
            seated[best] = True
            table.append(ranked[best])
        tables.append(table)
    return tables


def _table_repeats(table: Sequence[int], met: dict[int, dict[int, int]]) -> int:
    return sum(_repeats(a, table[i + 1 :], met) for i, a in enumerate(table))


def _repair_repeats(tables: list[list[int]], met: dict[int, dict[int, int]]) -> None:
    """Swap members between tables while that lowers the number of repeat meetings.

    Every swap lowers the total, so this ends; a swap may move a repeat to the other table,
    hence the passes until one changes nothing (bounded, for pathological histories).
    """
    for _ in range(SWISS_REPAIR_PASSES):
        improved = False
        for a, table in enumerate(tables):
            while _table_repeats(table, met) and _improve_once(a, tables, met):
                improved = True
        if not improved:
            break


def _improve_once(a: int, tables: list[list[int]], met: dict[int, dict[int, int]]) -> bool:
    """One swap of a repeat-making member of ``tables[a]``, nearest table first."""
    table = tables[a]
    culprits = [(x, _repeats(x, (o for o in table if o != x), met)) for x in table]
    culprits = [(x, cost) for x, cost in culprits if cost]
    others = sorted((b for b in range(len(tables)) if b != a), key=lambda b: (abs(b - a), b))
    for b in others:
        other = tables[b]
        for x, x_here in culprits:
            rest_a = [o for o in table if o != x]
            for y in other:
                rest_b = [o for o in other if o != y]
                y_here = _repeats(y, rest_b, met)
                before = x_here + y_here
                after = _repeats(y, rest_a, met) + _repeats(x, rest_b, met)
                if after < before:
                    table[table.index(x)] = y
                    other[other.index(y)] = x
                    return True
    return False


def _seat_deviation(history: Iterable[Round]) -> dict[int, list[float]]:
    deviation: dict[int, list[float]] = {}
    for played in history:
        for table in played.tables:
            share = 1.0 / len(table.seats)
            for position, e in enumerate(table.seats):
                row = deviation.setdefault(e, [0.0] * MAX_SEATS)
                for p in range(len(table.seats)):
                    row[p] -= share
                row[position] += 1.0
    return deviation


# --- single elimination -----------------------------------------------------------------------


def elimination_rounds_needed(entrants: int, seats: int) -> int:
    """Rounds until one winner: the smallest ``r`` with ``seats ** r >= entrants``.

    >>> elimination_rounds_needed(64, 2), elimination_rounds_needed(37, 6)
    (6, 3)
    """
    _check_seats(seats)
    if entrants < 1:
        raise ValueError(f"an elimination needs at least one entrant, got {entrants}")
    rounds, capacity = 0, 1
    while capacity < entrants:
        capacity *= seats
        rounds += 1
    return rounds


def _seed_key(seeding: Sequence[int]) -> dict[int, int]:
    return {e: i for i, e in reversed(list(enumerate(seeding)))}


def elimination_round(
    alive: Sequence[int], seats: int, *, seeding: Sequence[int], rng: random.Random
) -> Round:
    """One round of a single elimination; each table's winner advances.

    With ``r = elimination_rounds_needed(len(alive), seats)`` rounds to go, this round leaves
    exactly ``seats ** (r - 1)`` entrants (so every later round is full tables of ``seats``,
    and the final is a full table unless the field was smaller than one).  It has the fewest
    byes that allows it, ``max(0, 2 * seats ** (r - 1) - n)``: byes go to the top seeds, and
    the rest play at tables whose sizes differ by at most one (2 to ``seats``), the smaller
    tables to the better seeds.

    ``seeding`` lists entrants best first (it may hold eliminated ones; alive entrants missing
    from it come last, by id).  The bracket is re-seeded every round: seeds are dealt to tables
    in snake order (1, 2, ..., t, then t, ..., 2, 1, ...), so the top seeds are spread over
    the tables as in a bracket (at two seats: 1 v 8, 2 v 7, 3 v 6, 4 v 5).  Seat order at a
    table is shuffled by ``rng``.
    """
    _check_seats(seats)
    players = _distinct(alive, minimum=2, what="an elimination round")
    key = _seed_key(seeding)
    players.sort(key=lambda e: (key.get(e, len(key)), e))
    n = len(players)
    after = seats ** (elimination_rounds_needed(n, seats) - 1)
    bye_count = max(0, 2 * after - n)
    sizes = _even_sizes(n - bye_count, after - bye_count, largest_first=False)
    tables: list[list[int]] = [[] for _ in sizes]
    forward = True
    queue = iter(players[bye_count:])
    while any(len(t) < s for t, s in zip(tables, sizes, strict=True)):
        order = range(len(tables)) if forward else range(len(tables) - 1, -1, -1)
        for i in order:
            if len(tables[i]) < sizes[i]:
                tables[i].append(next(queue))
        forward = not forward
    for table in tables:
        rng.shuffle(table)
    return Round(tables=tuple(Table(tuple(t)) for t in tables), byes=tuple(players[:bye_count]))


def elimination_advancing(
    round: Round, places: Mapping[Table, Mapping[int, int]], *, seeding: Sequence[int]
) -> list[int]:
    """Who goes on from a played elimination round, best seed first.

    The byes, and each table's winner: the entrant with the best (lowest) place.  Entrants who
    share first place are separated by the better seed (earlier in ``seeding``; unseeded ones
    after, by lower id) -- the seeding is the earned standing, so it is the fairest tie-break
    that needs no extra game.  ``places`` maps each table of the round to entrant -> place
    (``TableResult.places``).
    """
    key = _seed_key(seeding)

    def seed(e: int) -> tuple[int, int]:
        return key.get(e, len(key)), e

    winners: list[int] = []
    for table in round.tables:
        if table not in places:
            raise ValueError(f"no result for table {table.seats}")
        placed = places[table]
        if set(placed) != set(table.seats):
            raise ValueError(f"result for table {table.seats} names {sorted(placed)}")
        winners.append(min(table.seats, key=lambda e: (placed[e], *seed(e))))
    return sorted([*round.byes, *winners], key=seed)


# --- duplicate tables -------------------------------------------------------------------------


def duplicate_rotations(table: Table) -> list[Table]:
    """The seat rotations of a duplicate table, replayed with the same shuffle (seed).

    Rotation ``r`` puts ``seats[(i + r) % k]`` at seat ``i``, so over the ``k`` games every
    entrant plays every seat with the same cards, and card luck cancels out.
    """
    k = len(table.seats)
    return [Table(tuple(table.seats[(i + r) % k] for i in range(k))) for r in range(k)]
