"""The 27 kinds of Grass card, their families and the numbers printed on them.

A card's *kind* is all the engine needs: two Panamas are interchangeable, so hands, piles and
marketplaces hold `Card` values, not card instances. The string value of each kind is its stable
text encoding in actions and logs (lower-case, hyphenated, never renamed).
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple


class Family(StrEnum):
    """The seven suits of the classic rules, split where cards of a suit play differently."""

    MARKET_OPEN = "market-open"
    """Opens a player's hassle pile; without it no peddle may be tabled."""
    PEDDLE = "peddle"
    """Money: tabled in the marketplace, scored at the end of the hand."""
    HEAT_ON = "heat-on"
    """Played on an opponent's open market; blocks peddling until matched."""
    HEAT_OFF = "heat-off"
    """Cancels the matching Heat On on one's own hassle pile."""
    PAY_FINE = "pay-fine"
    """Cancels any Heat On at the price of a tabled peddle."""
    PROTECTED = "protected"
    """Covers tabled peddles up to its value against attacks."""
    STEAL = "steal"
    """Steal Your Neighbour's Pot: takes an opponent's unprotected tabled peddle."""
    NIRVANA = "nirvana"
    """Stonehigh and Euphoria: every opponent gives the player a tabled peddle."""
    PARANOIA = "paranoia"
    """Sold Out, Double Crossed, Utterly Wiped Out: lose peddles and turns, pass a card left."""
    BANKER = "banker"
    """Held at the end of a hand: skims the opponents' unprotected peddles."""
    MARKET_CLOSE = "market-close"
    """Ends the hand when played on one's own open, unheated hassle pile."""


class Card(StrEnum):
    """One kind of card. Declaration order is the canonical sort order everywhere."""

    MARKET_OPEN = "market-open"
    HOME_GROWN = "home-grown"
    MEXICO = "mexico"
    COLOMBIA = "colombia"
    JAMAICA = "jamaica"
    PANAMA = "panama"
    DR_FEELGOOD = "dr-feelgood"
    BUST = "bust"
    DETAINED = "detained"
    FELONY = "felony"
    SEARCH_AND_SEIZURE = "search-and-seizure"
    IMMUNITY = "immunity"
    A_BREEZE_TO_FLY = "a-breeze-to-fly"
    HEARSAY_EVIDENCE = "hearsay-evidence"
    CHARGES_DROPPED = "charges-dropped"
    PAY_FINE = "pay-fine"
    LUST_CONQUERS_ALL = "lust-conquers-all"
    GRAB_A_SNACK = "grab-a-snack"
    CATCH_A_BUZZ = "catch-a-buzz"
    STEAL = "steal-your-neighbours-pot"
    STONEHIGH = "stonehigh"
    EUPHORIA = "euphoria"
    SOLD_OUT = "sold-out"
    DOUBLE_CROSSED = "double-crossed"
    UTTERLY_WIPED_OUT = "utterly-wiped-out"
    BANKER = "the-banker"
    MARKET_CLOSE = "market-close"


class CardInfo(NamedTuple):
    """What is printed on a card: its family, its title and its one number, if any. (A named
    tuple, not a dataclass, like `engine.moves.Move`: bots import these modules at start.)"""

    family: Family
    title: str
    value: int = 0
    """Peddle value, or a Protected card's coverage, in dollars."""
    cancels: Card | None = None
    """For a Heat Off card, the Heat On card it matches."""


INFO: dict[Card, CardInfo] = {
    Card.MARKET_OPEN: CardInfo(Family.MARKET_OPEN, "Market Open"),
    Card.HOME_GROWN: CardInfo(Family.PEDDLE, "Home Grown", 5_000),
    Card.MEXICO: CardInfo(Family.PEDDLE, "Mexico", 5_000),
    Card.COLOMBIA: CardInfo(Family.PEDDLE, "Colombia", 25_000),
    Card.JAMAICA: CardInfo(Family.PEDDLE, "Jamaica", 25_000),
    Card.PANAMA: CardInfo(Family.PEDDLE, "Panama", 50_000),
    Card.DR_FEELGOOD: CardInfo(Family.PEDDLE, "Dr. Feelgood", 100_000),
    Card.BUST: CardInfo(Family.HEAT_ON, "Heat On: Bust"),
    Card.DETAINED: CardInfo(Family.HEAT_ON, "Heat On: Detained"),
    Card.FELONY: CardInfo(Family.HEAT_ON, "Heat On: Felony"),
    Card.SEARCH_AND_SEIZURE: CardInfo(Family.HEAT_ON, "Heat On: Search & Seizure"),
    Card.IMMUNITY: CardInfo(Family.HEAT_OFF, "Heat Off: Immunity", cancels=Card.BUST),
    Card.A_BREEZE_TO_FLY: CardInfo(
        Family.HEAT_OFF, "Heat Off: A Breeze to Fly", cancels=Card.DETAINED
    ),
    Card.HEARSAY_EVIDENCE: CardInfo(
        Family.HEAT_OFF, "Heat Off: Hearsay Evidence", cancels=Card.FELONY
    ),
    Card.CHARGES_DROPPED: CardInfo(
        Family.HEAT_OFF, "Heat Off: Charges Dropped", cancels=Card.SEARCH_AND_SEIZURE
    ),
    Card.PAY_FINE: CardInfo(Family.PAY_FINE, "Pay Fine / Heat Off"),
    Card.LUST_CONQUERS_ALL: CardInfo(Family.PROTECTED, "Protected: Lust Conquers All", 50_000),
    Card.GRAB_A_SNACK: CardInfo(Family.PROTECTED, "Protected: Grab a Snack", 25_000),
    Card.CATCH_A_BUZZ: CardInfo(Family.PROTECTED, "Protected: Catch a Buzz", 25_000),
    Card.STEAL: CardInfo(Family.STEAL, "Steal Your Neighbour's Pot"),
    Card.STONEHIGH: CardInfo(Family.NIRVANA, "Stonehigh"),
    Card.EUPHORIA: CardInfo(Family.NIRVANA, "Euphoria"),
    Card.SOLD_OUT: CardInfo(Family.PARANOIA, "Sold Out"),
    Card.DOUBLE_CROSSED: CardInfo(Family.PARANOIA, "Double Crossed"),
    Card.UTTERLY_WIPED_OUT: CardInfo(Family.PARANOIA, "Utterly Wiped Out"),
    Card.BANKER: CardInfo(Family.BANKER, "The Banker"),
    Card.MARKET_CLOSE: CardInfo(Family.MARKET_CLOSE, "Market Close"),
}

# Flat lookups used on the engine's hot path (legal-action generation runs per decision).
FAMILY: dict[Card, Family] = {card: info.family for card, info in INFO.items()}
VALUE: dict[Card, int] = {card: info.value for card, info in INFO.items()}
ORDER: dict[Card, int] = {card: index for index, card in enumerate(Card)}
PEDDLES: tuple[Card, ...] = tuple(c for c in Card if FAMILY[c] is Family.PEDDLE)


def distinct(cards: list[Card]) -> list[Card]:
    """The kinds among `cards`, once each, in canonical card order."""
    return sorted(set(cards), key=_ORDER_OF)


_ORDER_OF = ORDER.__getitem__


def parse_card(text: str) -> Card:
    """The card kind for its text encoding, with an error that lists the valid names."""
    try:
        return Card(text)
    except ValueError:
        names = ", ".join(c.value for c in Card)
        raise ValueError(f"unknown card {text!r}; cards are: {names}") from None
