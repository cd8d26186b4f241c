"""Scoring a hand and ranking a game: pure functions over plain numbers.

Kept apart from the game flow so the seeds' worked examples can be checked line by line and so
the ladder can recompute anything from a log without running a game.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.cards import FAMILY, VALUE, Card, Family
from engine.rules import Ruleset


@dataclass(frozen=True, slots=True)
class HandTally:
    """What scoring needs to know about one seat when a hand ends."""

    protected: int
    """Sum of the seat's protected tabled peddles."""
    at_risk: int
    """Sum of the seat's unprotected tabled peddles."""
    held: tuple[Card, ...]
    """The cards left in the seat's hand."""


@dataclass(frozen=True, slots=True)
class HandScore:
    """One seat's hand score, line by line in the seeds' order."""

    protected: int
    at_risk: int
    banker: int
    """Positive for the Banker's holder, negative for the players it skimmed."""
    fines: int
    """Paranoia cards held (a positive amount, subtracted)."""
    best_held: int
    """Value of the best peddle left in hand (a positive amount, subtracted)."""
    bonus: int
    score: int
    """protected + at_risk + banker - fines - best_held + bonus."""

    @property
    def net(self) -> int:
        """The score before the bonus: what the bonus compares."""
        return self.score - self.bonus


def score_hand(ruleset: Ruleset, tallies: Sequence[HandTally]) -> tuple[HandScore, ...]:
    """Score one hand for every seat.

    The Banker goes to whoever holds it. Every seat tied for the highest net score gets the
    bonus (RULES.md, decision D-BONUS-TIE).
    """
    banker_seat = next((i for i, t in enumerate(tallies) if Card.BANKER in t.held), None)
    banker = [0] * len(tallies)
    if banker_seat is not None:
        for i, tally in enumerate(tallies):
            if i == banker_seat or tally.at_risk <= 0:
                continue
            take = min(tally.at_risk, ruleset.banker_fee)
            take += tally.at_risk * ruleset.banker_percent // 100
            banker[i] -= take
            banker[banker_seat] += take
    nets: list[int] = []
    parts: list[tuple[int, int]] = []
    for i, tally in enumerate(tallies):
        fines = sum(ruleset.fine(card) for card in tally.held)
        best = max((VALUE[card] for card in tally.held if FAMILY[card] is Family.PEDDLE), default=0)
        parts.append((fines, best))
        nets.append(tally.protected + tally.at_risk + banker[i] - fines - best)
    top = max(nets)
    return tuple(
        HandScore(
            protected=tally.protected,
            at_risk=tally.at_risk,
            banker=banker[i],
            fines=parts[i][0],
            best_held=parts[i][1],
            bonus=ruleset.bonus if nets[i] == top else 0,
            score=nets[i] + (ruleset.bonus if nets[i] == top else 0),
        )
        for i, tally in enumerate(tallies)
    )


def add_to_totals(
    ruleset: Ruleset, totals: Sequence[int], scores: Sequence[HandScore]
) -> tuple[int, ...]:
    """Running totals after a hand. Under a zero floor a negative hand never takes a total
    below zero, which also makes a negative first hand count as zero."""
    new = [total + score.score for total, score in zip(totals, scores, strict=True)]
    if ruleset.total_floor_zero:
        new = [max(0, total) for total in new]
    return tuple(new)


def finishing_ranks(totals: Sequence[int]) -> tuple[int, ...]:
    """1-based place of each seat by total, ties sharing a place ("1, 1, 3")."""
    return tuple(1 + sum(other > total for other in totals) for total in totals)
