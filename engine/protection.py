"""Which sets of tabled peddles one Protected card may cover.

Seed 000: the covered peddles must already be tabled, their sum may not exceed the card's
value, and Dr. Feelgood can never be protected. Any non-empty set meeting that is a legal choice
(covering a $5,000 peddle with a $50,000 card is "a bit stupid", not illegal).
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

from engine.cards import ORDER, VALUE, Card


def protection_choices(unprotected: list[Card], coverage: int) -> list[tuple[Card, ...]]:
    """Every non-empty multiset of `unprotected` (minus Dr. Feelgood) worth at most
    `coverage`, each in canonical card order."""
    counts = Counter(c for c in unprotected if c is not Card.DR_FEELGOOD)
    key = tuple(sorted(counts.items(), key=lambda item: ORDER[item[0]]))
    return list(_choices(key, coverage))


@lru_cache(maxsize=4096)
def _choices(counts: tuple[tuple[Card, int], ...], coverage: int) -> tuple[tuple[Card, ...], ...]:
    found: list[tuple[Card, ...]] = []

    def walk(index: int, budget: int, chosen: tuple[Card, ...]) -> None:
        if index == len(counts):
            if chosen:
                found.append(chosen)
            return
        card, available = counts[index]
        take = 0
        while take <= available and take * VALUE[card] <= budget:
            walk(index + 1, budget - take * VALUE[card], chosen + (card,) * take)
            take += 1

    walk(0, coverage, ())
    return tuple(found)
