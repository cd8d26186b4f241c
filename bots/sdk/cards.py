"""Card facts and value judgements shared by the example bots (and free for any bot to use).

Plain dictionaries over the cards' text encodings, so a bot needs no engine import to use them.
"""

from __future__ import annotations

PEDDLE = {
    "home-grown": 5_000,
    "mexico": 5_000,
    "colombia": 25_000,
    "jamaica": 25_000,
    "panama": 50_000,
    "dr-feelgood": 100_000,
}
FINE = {"sold-out": 25_000, "double-crossed": 50_000, "utterly-wiped-out": 100_000}
HEAT_ON = frozenset({"bust", "detained", "felony", "search-and-seizure"})
HEAT_OFF = {
    "immunity": "bust",
    "a-breeze-to-fly": "detained",
    "hearsay-evidence": "felony",
    "charges-dropped": "search-and-seizure",
}
PROTECTED = {"lust-conquers-all": 50_000, "grab-a-snack": 25_000, "catch-a-buzz": 25_000}
NIRVANA = frozenset({"stonehigh", "euphoria"})
STEAL = "steal-your-neighbours-pot"


def keep_value(card: str, market_open: bool, under_heat: bool) -> int:
    """How much a dealer would like to keep `card` in hand (higher = keep, negative = dump).

    Paranoia cards cost their fine at the end of the hand; peddles are worth their value once
    played (but cost it if still held); a spare Market Open is close to worthless.
    """
    if card in FINE:
        return -FINE[card]
    if card in PEDDLE:
        return PEDDLE[card]
    if card == "market-open":
        return 60_000 if not market_open else -1_000
    if card in HEAT_OFF or card == "pay-fine":
        return 20_000 if under_heat else 8_000
    if card in PROTECTED or card in NIRVANA or card == STEAL:
        return 30_000
    if card == "the-banker":
        return 40_000
    if card == "market-close":
        return 15_000
    return 10_000


MARKET_OPEN_NEEDED = 28_000
"""What a Market Open is worth in a deal to a seat whose market is closed and that holds no
other: it lets every other card be played, but it is only a key. It is worth less than any card
that is itself worth money (Panama and Dr Feelgood, the Banker, Nirvana, Protected, Steal), so
no deal takes one of those for it; more than a Colombia or a Jamaica."""


def trade_value(card: str, *, market_open: bool, under_heat: bool, spare_open: bool) -> int:
    """What `card` in hand is worth to a seat, for weighing a deal: what it gives up against
    what it gets. `spare_open`: the seat holds a Market Open besides this card (a second one
    is worth nothing to it).

    As `keep_value`, except a Market Open: `keep_value` rates it high so that a closed market
    keeps one through passes and discards, which would make any card look cheap beside it.
    """
    if card == "market-open":
        return MARKET_OPEN_NEEDED if not market_open and not spare_open else -1_000
    return keep_value(card, market_open, under_heat)
