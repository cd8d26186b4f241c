"""The fixed action space: every action text the engine can produce, numbered once and for all.

A learning bot chooses among a fixed set of outputs; the engine offers a varying list of texts
(`legal`). This module maps one to the other, in both directions, for any ruleset, variant and
table of 2 to 6 seats.

Seats are **relative** in the index space: `@+1` is the seat to the acting seat's left (the
next to play), `@+2` the one after, up to `@+5`. So `play felony @2` chosen by seat 1 is the
action `play felony @+1`, the same index as `play felony @0` chosen by seat 5 of six. A policy
that plays every seat then needs no seat arithmetic, and one trained at four seats means the
same thing by each output at five. Seat numbers in `legal` stay absolute, as the protocol sends
them: `to_index(text, seat, n)` and `to_text(index, seat, n)` convert.

The space, in this order (`python -m bots.sdk.actions` prints every index and its text):

- the words: `end`, `withdraw`, `done`, `accept`, `decline`, `give nothing`,
  `announce nothing`;
- `play CARD` for the cards played without an argument (Market Open, peddles, Heat Off, classic
  Pay Fine, Nirvana, classic paranoia, Market Close), in canonical card order;
- `play HEAT-ON @+k`, `play PARANOIA @+k` (modern), `play steal-your-neighbours-pot @+k`
  (classic) and `play steal-your-neighbours-pot @+k PEDDLE` (modern), k = 1..5;
- `play pay-fine PEDDLE` and `play pay-fine PEDDLE(p)` (modern: the peddle paid, unprotected or
  protected; Dr. Feelgood is never protected);
- `play PROTECTED GROUP`: every group of peddles (joined by `+`, canonical order) a Protected
  card can cover, by the full deck's counts;
- `discard CARD`, `deal @+k`, `swap MINE @+k THEIRS` (MINE differs from THEIRS);
- `give CARD`, `announce CARD`, `want CARD`, `accept CARD`, `pass CARD`, `keep CARD` for every
  card, and `offer PEDDLE`, `ask PEDDLE`, `waste PEDDLE`, `surrender PEDDLE`.

`tests/bots/test_actions.py` plays random games of every ruleset, variant and size and checks
that every legal action maps to an index and back to the same text. Standard library only, so
a bot in the ladder's runtime imports it as `bots.sdk.actions`.
"""

from __future__ import annotations

from bots.sdk.cards import FINE, HEAT_OFF, HEAT_ON, NIRVANA, PEDDLE, PROTECTED, STEAL

TYPE_CHECKING = False
if TYPE_CHECKING:  # bots start faster without importing typing
    from collections.abc import Iterable

CARDS = (
    "market-open",
    "home-grown",
    "mexico",
    "colombia",
    "jamaica",
    "panama",
    "dr-feelgood",
    "bust",
    "detained",
    "felony",
    "search-and-seizure",
    "immunity",
    "a-breeze-to-fly",
    "hearsay-evidence",
    "charges-dropped",
    "pay-fine",
    "lust-conquers-all",
    "grab-a-snack",
    "catch-a-buzz",
    "steal-your-neighbours-pot",
    "stonehigh",
    "euphoria",
    "sold-out",
    "double-crossed",
    "utterly-wiped-out",
    "the-banker",
    "market-close",
)
"""Every card's text, in canonical order (the engine's `Card` declaration order)."""

PEDDLES = tuple(c for c in CARDS if c in PEDDLE)
MAX_OTHERS = 5
"""The most other seats at a table (six players)."""
DECK_MAX = {
    "home-grown": 6,
    "mexico": 6,
    "colombia": 5,
    "jamaica": 5,
    "panama": 6,
    "dr-feelgood": 1,
}
"""The most copies of each peddle in either edition's deck: bounds the Protected groups."""


def _cover_groups(coverage: int) -> list[str]:
    """Every non-empty group of protectable peddles worth at most `coverage` (the engine's
    `protection_choices` over a whole deck), each joined in canonical order."""
    kinds = [c for c in PEDDLES if c != "dr-feelgood"]
    found: list[str] = []

    def walk(index: int, budget: int, chosen: list[str]) -> None:
        if index == len(kinds):
            if chosen:
                found.append("+".join(chosen))
            return
        card = kinds[index]
        take = 0
        while take <= DECK_MAX[card] and take * PEDDLE[card] <= budget:
            walk(index + 1, budget - take * PEDDLE[card], chosen + [card] * take)
            take += 1

    walk(0, coverage, [])
    return found


def _space() -> tuple[str, ...]:
    seats = [f"@+{k}" for k in range(1, MAX_OTHERS + 1)]
    plain = [
        c
        for c in CARDS
        if c == "market-open"
        or c in PEDDLE
        or c in HEAT_OFF
        or c == "pay-fine"
        or c in NIRVANA
        or c in FINE
        or c == "market-close"
    ]
    actions = ["end", "withdraw", "done", "accept", "decline", "give nothing", "announce nothing"]
    actions += [f"play {c}" for c in plain]
    actions += [f"play {c} {s}" for c in CARDS if c in HEAT_ON or c in FINE for s in seats]
    actions += [f"play {STEAL} {s}" for s in seats]
    actions += [f"play {STEAL} {s} {p}" for s in seats for p in PEDDLES]
    actions += [f"play pay-fine {p}" for p in PEDDLES]
    actions += [f"play pay-fine {p}(p)" for p in PEDDLES if p != "dr-feelgood"]
    actions += [
        f"play {c} {g}" for c in CARDS if c in PROTECTED for g in _cover_groups(PROTECTED[c])
    ]
    actions += [f"discard {c}" for c in CARDS]
    actions += [f"deal {s}" for s in seats]
    actions += [f"swap {m} {s} {t}" for s in seats for m in PEDDLES for t in PEDDLES if m != t]
    for verb in ("give", "announce", "want", "accept", "pass", "keep"):
        actions += [f"{verb} {c}" for c in CARDS]
    for verb in ("offer", "ask", "waste", "surrender"):
        actions += [f"{verb} {p}" for p in PEDDLES]
    return tuple(actions)


ACTIONS: tuple[str, ...] = _space()
"""The action space: index -> text with relative seats (`@+k`)."""
SIZE = len(ACTIONS)
INDEX: dict[str, int] = {text: i for i, text in enumerate(ACTIONS)}
"""Text with relative seats -> index."""

_TABLES: dict[tuple[int, int], tuple[dict[str, int], tuple[str | None, ...]]] = {}


def _table(seat: int, n: int) -> tuple[dict[str, int], tuple[str | None, ...]]:
    """For one seat of an n-seat table: absolute text -> index, and index -> absolute text
    (None for an action naming a seat the table does not have). Built once per (seat, n)."""
    key = (seat, n)
    table = _TABLES.get(key)
    if table is None:
        if not 2 <= n <= MAX_OTHERS + 1 or not 0 <= seat < n:
            raise ValueError(f"no seat {seat} at a table of {n}")
        texts: list[str | None] = []
        for text in ACTIONS:
            at = text.find(" @+")
            if at < 0:
                texts.append(text)
                continue
            k = int(text[at + 3])
            if k >= n:
                texts.append(None)
                continue
            texts.append(f"{text[:at]} @{(seat + k) % n}{text[at + 4 :]}")
        forward = {t: i for i, t in enumerate(texts) if t is not None}
        table = _TABLES[key] = (forward, tuple(texts))
    return table


def to_index(text: str, seat: int, n: int) -> int:
    """The index of `text` (an action with absolute seats, as in `legal`) chosen by `seat` at
    a table of `n`. Raises KeyError for a text outside the space."""
    return _table(seat, n)[0][text]


def to_text(index: int, seat: int, n: int) -> str:
    """The action text (absolute seats) of `index` for `seat` at a table of `n`; raises
    ValueError for an index that names a seat the table does not have."""
    text = _table(seat, n)[1][index]
    if text is None:
        raise ValueError(f"action {index} ({ACTIONS[index]}) names no seat at a table of {n}")
    return text


def indices(legal: Iterable[str], seat: int, n: int) -> list[int]:
    """The indices of the legal actions, in their order."""
    forward = _table(seat, n)[0]
    return [forward[text] for text in legal]


if __name__ == "__main__":
    for number, text in enumerate(ACTIONS):
        print(number, text)
