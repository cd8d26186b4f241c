"""The collusion test for a pair of bots, match by match (issue 33): pure maths, no Django.

Per shared match, `pair_match` reduces the engine's flows (`engine.flows`) between the pair's
two seats to what collusion changes, each direction measured against how the same seat treated
the other seats of the same match, so the bots' own styles cancel out:

- **help**: value the seat chose to move to the other (deals it granted, forced swaps it made,
  the excess of its Nirvana gifts), less the most it moved to any other seat of the match;
- **spared**: the share of its chances to attack the other seat that it left unused, less the
  same share for the other seats;
- **asks**: deals proposed to the other beyond the most proposed to any other seat;
- **first**: whether one of the pair placed first.

`PairTest` is the sequential test, updated after every shared match and valid however often it
is looked at: two test martingales ("e-processes", betting on the null hypothesis), each a
product of one factor per match with mean at most 1 when the pair is honest, so by Ville's
inequality an honest pair's wealth ever reaches 1/alpha with probability at most alpha, at any
number of looks. One bets on the flows: the match's `score` exceeding `THRESHOLD`, which the
honest baseline (the examples random, greedy and strong in every combination) does with
probability at most `NULL_RATE`. The other bets on the lift: one of the pair placing first,
against the probability the caller expects from the two bots' ratings. The pair's evidence is
the mean of the two (a mean of e-processes is one); it is flagged when the evidence reaches
`tests / alpha`: with `tests` the number of tests kept, the chance that any honest one is ever
flagged is at most alpha (a union bound over the tests).

The ladder keeps two kinds of tests (`ladder.fairplay.models`): one per pair of bots, and one
per pair of seating circles, fed by every match of every pair of their bots (one observation a
match: a circle holds one seat of a rated table). A pair of circles whose bots are all honest
sees only honest pairs' matches, so its test is valid as a pair's is, and one union bound
covers both kinds: `watches(pairs)` counts them as twice the pairs of bots under test, since
every pair of circles under test has a pair of bots under test of its own (two of its bots
that shared a table) and so there are no more of them than pairs of bots. With at most `pairs`
pairs of bots under test, the chance that any honest pair of bots or of circles is ever
flagged is at most alpha. (While circles keep their ids: a link that merges two circles starts
watches under the merged id beside the old ones, a few more tests than counted.)

The constants were measured on a bank of played games (`python -m bench.collusion`,
docs/fairplay.md), which says how well it separates colluders from honest play.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from engine.flows import PairFlow

SCALE = 100_000
"""Dollars per unit of help in `score` (a Dr Feelgood)."""
SPARED_WEIGHT = 1.0
"""Units of `score` for a seat that never attacks the other when it attacks everyone else."""
THRESHOLD = 1.5
"""A match whose `score` exceeds this counts as a collusive-looking match."""
ASK_THRESHOLD = 60
"""So does one where a bot proposed this many more deals to the other than to any other seat
(honest bots: the random example, which proposes hundreds of deals a game at random, at most
47 in the first 200 games of the baseline; a partner asking its feeder for what it needs, a
hundred or more)."""
NULL_RATE = 0.04
"""The most often an honest pair's match is a hit (`PairMatch.hit`): the worst combination of
the examples measured 1.1% (random with random, 4 of 367 matches, 95% upper bound 2.8%; no
other combination had one in 1,037 matches); taken as 4% (docs/fairplay.md)."""
LIFT_MARGIN = 0.1
"""Added to the ratings' chance that one of a pair places first before the lift martingale bets
against it: ratings are estimates (and Elo's multi-player reading here an approximation), and
a chance read 0.1 too low would, over a thousand matches, let an honest pair's lift alone
approach the bar. The flows carry the test; the lift catches a pair that wins far more."""
ALPHA = 0.01
"""Chance that any honest pair is ever flagged, over all pairs under test."""


@dataclass(frozen=True, slots=True)
class PairMatch:
    """One shared match of bots A and B, reduced to what the test reads."""

    help_ab: float
    """Dollars A moved to B beyond the most it moved to any other seat."""
    help_ba: float
    spared_ab: float
    """Share of A's chances to attack B it left unused, less the same share for the others."""
    spared_ba: float
    first: bool
    """Whether A or B placed first (a shared first counts)."""
    asks_ab: int = 0
    """Deals A proposed to B beyond the most it proposed to any other seat."""
    asks_ba: int = 0

    @property
    def hit(self) -> bool:
        """A collusive-looking match: the flow score over THRESHOLD, or one of the two
        proposing deals to the other far more than to anyone else (ASK_THRESHOLD)."""
        return self.score > THRESHOLD or max(self.asks_ab, self.asks_ba) > ASK_THRESHOLD

    @property
    def cause(self) -> Cause:
        """Which way the hit went, if it is one (it is exactly when `cause.hit`)."""
        return hit_cause(
            self.help_ab, self.help_ba, self.spared_ab, self.spared_ba, self.asks_ab, self.asks_ba
        )

    @property
    def score(self) -> float:
        """The larger direction's help (in SCALE units) plus its sparing, weighted."""
        return max(
            self.help_ab / SCALE + SPARED_WEIGHT * self.spared_ab,
            self.help_ba / SCALE + SPARED_WEIGHT * self.spared_ba,
        )


def way_hits(help_: float, spared: float, asks: int | None) -> tuple[bool, bool]:
    """What one direction's own play would make of a match: a hit by its flow score (its help
    in SCALE units plus its sparing, as in `PairMatch.score`), and a hit by its asks (None:
    not kept). A match is a hit when either holds in either direction (`PairMatch.hit`)."""
    by_flows = help_ / SCALE + SPARED_WEIGHT * spared > THRESHOLD
    return by_flows, asks is not None and asks > ASK_THRESHOLD


@dataclass(frozen=True, slots=True)
class Cause:
    """Which way a match's hit went: what A's play toward B made of it, and B's toward A."""

    flows_ab: bool
    asks_ab: bool
    flows_ba: bool
    asks_ba: bool

    @property
    def hit(self) -> bool:
        return self.flows_ab or self.asks_ab or self.flows_ba or self.asks_ba

    @property
    def asks_alone(self) -> str | None:
        """ "ab" or "ba" when the hit is one bot's deal proposals and nothing else: no flow
        score over the threshold either way, the other's asks under it. One bot makes that
        by itself (flooding a rival with offers it refuses), so it says nothing of the
        other."""
        if self.flows_ab or self.flows_ba or self.asks_ab == self.asks_ba:
            return None
        return "ab" if self.asks_ab else "ba"


def hit_cause(
    help_ab: float,
    help_ba: float,
    spared_ab: float,
    spared_ba: float,
    asks_ab: int | None,
    asks_ba: int | None,
) -> Cause:
    """A match's hit by direction (`way_hits` each way), from what a shared match keeps."""
    return Cause(*way_hits(help_ab, spared_ab, asks_ab), *way_hits(help_ba, spared_ba, asks_ba))


def _help(flow: PairFlow) -> int:
    # Only what the giver chose to give: deals it granted (not the ones it proposed: a weak
    # bot's offers that a shrewd one accepts move value too, honestly), forced swaps it made,
    # the excess of its Nirvana gifts. Passes are left out: they only ever go to the left-hand
    # neighbour, so a seat would look generous (or mean) by where it sits.
    return flow.granted_value + flow.swap_value + flow.gift_excess


def _spared(flow: PairFlow) -> float | None:
    if flow.attack_chances == 0:
        return None
    return 1 - flow.attacks / flow.attack_chances


def _direction(flows: Mapping[tuple[int, int], PairFlow], a: int, b: int) -> tuple[float, float]:
    others = sorted({t for (g, t) in flows if g == a and t != b})
    toward = flows[a, b]
    spared = _spared(toward)
    spared_others = [s for c in others if (s := _spared(flows[a, c])) is not None]
    if spared is None or not spared_others:
        spared_rel = 0.0
    else:
        spared_rel = spared - sum(spared_others) / len(spared_others)
    # Beyond the most it gave any other seat: a bot that gives at random (the random example
    # swaps down as often as up) gives to everyone alike; a feeder gives to one seat.
    most_elsewhere = max([0, *(_help(flows[a, c]) for c in others)])
    return _help(toward) - most_elsewhere, spared_rel


def _asks(flows: Mapping[tuple[int, int], PairFlow], a: int, b: int) -> int:
    """Deals `a` proposed to `b` (`PairFlow.asked` counts them at the answering end) beyond
    the most it proposed to any other seat."""
    others = [c for (g, c) in flows if g == a and c != b]
    return flows[b, a].asked - max([0, *(flows[c, a].asked for c in others)])


def pair_match(
    flows: Mapping[tuple[int, int], PairFlow], a: int, b: int, ranks: Sequence[int]
) -> PairMatch:
    """The pair's statistics for one match: seats `a` and `b`, the game's `flows`
    (`engine.flows.game_flows`) and its finishing ranks (1 = first)."""
    help_ab, spared_ab = _direction(flows, a, b)
    help_ba, spared_ba = _direction(flows, b, a)
    first = min(ranks[a], ranks[b]) == 1
    return PairMatch(
        help_ab, help_ba, spared_ab, spared_ba, first, _asks(flows, a, b), _asks(flows, b, a)
    )


BETS = (0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.9)
"""The stakes a martingale mixes, as shares of the most it may stake (1 / the null's mean):
a small stake grows slowly but steadily on a weak signal, a big one fast on a strong signal;
their mean is itself a test martingale, so the test need not guess which it faces."""


def _bet(logs: tuple[float, ...], hit: float, null: float) -> tuple[float, ...]:
    """Each stake's log-wealth after one more match: hit in [0, 1], null its mean if honest."""
    return tuple(
        log + math.log1p(share / null * (hit - null)) for log, share in zip(logs, BETS, strict=True)
    )


def _mean_wealth(logs: tuple[float, ...]) -> float:
    return sum(math.exp(min(log, 700.0)) for log in logs) / len(logs)


START = (0.0,) * len(BETS)


@dataclass(frozen=True, slots=True)
class PairTest:
    """The running test of one pair: update with `observe` after every shared match."""

    matches: int = 0
    hits: int = 0
    """Matches whose score exceeded THRESHOLD."""
    firsts: int = 0
    expected_firsts: float = 0.0
    """Sum over matches of the chance one of the pair placed first, by their ratings."""
    log_flow: tuple[float, ...] = START
    """Log-wealth of the flow martingale, one per stake in BETS."""
    log_lift: tuple[float, ...] = START
    flagged_at: int | None = None
    """The match count at which the evidence first reached the bar, if it has."""

    @property
    def flow_evidence(self) -> float:
        return _mean_wealth(self.log_flow)

    @property
    def lift_evidence(self) -> float:
        return _mean_wealth(self.log_lift)

    @property
    def evidence(self) -> float:
        """The mean of the two martingales: a pair is flagged when it reaches `bar`."""
        return (self.flow_evidence + self.lift_evidence) / 2

    def observe(
        self, match: PairMatch, expected_first: float, *, pairs: int = 1, alpha: float = ALPHA
    ) -> PairTest:
        """The test after one more shared match. `expected_first`: the chance one of the pair
        places first if both play as their ratings say (for a 4-seat table of equals, 0.5;
        more than the truth is safe, less is not)."""
        hit = match.hit
        expected = lift_null(expected_first)
        new = replace(
            self,
            matches=self.matches + 1,
            hits=self.hits + hit,
            firsts=self.firsts + match.first,
            expected_firsts=self.expected_firsts + expected_first,
            log_flow=_bet(self.log_flow, hit, NULL_RATE),
            log_lift=_bet(self.log_lift, match.first, expected) if expected < 1 else self.log_lift,
        )
        if new.flagged_at is None and new.evidence >= bar(pairs, alpha):
            new = replace(new, flagged_at=new.matches)
        return new


def lift_null(expected_first: float) -> float:
    """What the lift martingale takes as an honest pair's chance of placing first: the ratings'
    chance plus LIFT_MARGIN, at most 1 (then it bets nothing)."""
    return min(max(expected_first, 0.0) + LIFT_MARGIN, 1.0)


def bar(pairs: int = 1, alpha: float = ALPHA) -> float:
    """The evidence at which a pair is flagged, with `pairs` tests kept (`watches`)."""
    return max(pairs, 1) / alpha


def watches(pairs: int) -> int:
    """The tests the bar's union bound counts when `pairs` pairs of bots are under test: a
    watch per pair of bots and one per pair of circles, no more of those than of these."""
    return 2 * max(pairs, 1)


def first_chance(ratings: Sequence[float], seats: Sequence[int], scale: float = 400.0) -> float:
    """The chance one of `seats` places first, by the seats' Elo ratings (strength
    10^(rating/scale) each, a seat first in proportion to its strength: the multi-player
    reading of the ladder's Elo expectation)."""
    top = max(ratings)
    strength = [10 ** ((r - top) / scale) for r in ratings]
    return sum(strength[s] for s in seats) / sum(strength)
