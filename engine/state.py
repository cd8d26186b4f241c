"""The mutable table: what lies where. No rules here, only bookkeeping that keeps every card
somewhere (hand, hassle pile, marketplace, stack or Wasted pile)."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.cards import VALUE, Card


@dataclass(slots=True)
class Seat:
    """One player's cards and counters. Lists hold card kinds; order carries no meaning except
    `heat`, whose last element is the Heat On card on top of the hassle pile."""

    name: str
    hand: list[Card] = field(default_factory=list)
    market_open: bool = False
    """A Market Open card is on the hassle pile (it may be covered by heat)."""
    heat: list[Card] = field(default_factory=list)
    """Heat On cards covering the Market Open card, top last."""
    hassle_under: list[Card] = field(default_factory=list)
    """Cards in the hassle pile under its top card: cancelled heat, Heat Off and Pay Fine cards,
    Market Close, and (classic) the Steal cards played on this seat."""
    unprotected: list[Card] = field(default_factory=list)
    """Tabled peddles that no Protected card covers."""
    protected: list[tuple[Card, list[Card]]] = field(default_factory=list)
    """(Protected card, the peddles it covers) groups in the marketplace."""
    skips: int = 0
    """Turns this player must still skip."""
    extra_turns: int = 0
    """Extra turns owed (classic Nirvana)."""
    wiped_out: bool = False
    """Utterly Wiped Out took this seat's hassle pile this hand and it has not played a Market
    Open since (modern: it may not deal meanwhile, D-UWO-DEAL)."""
    notes: list[tuple[str, ...]] = field(default_factory=list)
    """This hand's private facts for this seat's observation (cards drawn, passed, received)."""

    @property
    def showing(self) -> bool:
        """The Market Open card is on top: peddles, protection and Market Close are allowed."""
        return self.market_open and not self.heat

    @property
    def at_risk(self) -> int:
        return sum(VALUE[c] for c in self.unprotected)

    @property
    def protected_value(self) -> int:
        return sum(VALUE[c] for _, group in self.protected for c in group)

    def tabled(self) -> int:
        return len(self.unprotected) + sum(len(group) for _, group in self.protected)

    def hassle_cards(self) -> list[Card]:
        """Every card on the hassle pile, for accounting and Utterly Wiped Out."""
        top = [Card.MARKET_OPEN] if self.market_open else []
        return [*self.hassle_under, *top, *self.heat]

    def table_cards(self) -> list[Card]:
        """Every card this seat has on the table: hassle pile and marketplace."""
        cards = self.hassle_cards() + list(self.unprotected)
        for prot, group in self.protected:
            cards.append(prot)
            cards.extend(group)
        return cards

    def clone(self) -> Seat:
        return Seat(
            name=self.name,
            hand=list(self.hand),
            market_open=self.market_open,
            heat=list(self.heat),
            hassle_under=list(self.hassle_under),
            unprotected=list(self.unprotected),
            protected=[(p, list(g)) for p, g in self.protected],
            skips=self.skips,
            extra_turns=self.extra_turns,
            wiped_out=self.wiped_out,
            notes=list(self.notes),
        )

    def clear_table(self) -> None:
        """Start of a hand: everything back into the deck."""
        self.hand.clear()
        self.market_open = False
        self.heat.clear()
        self.hassle_under.clear()
        self.unprotected.clear()
        self.protected.clear()
        self.skips = 0
        self.extra_turns = 0
        self.wiped_out = False
        self.notes.clear()
