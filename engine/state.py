"""The mutable table: what lies where, whose turn it is, and what the game is waiting for.

No rules here, only bookkeeping that keeps every card somewhere (hand, hassle pile,
marketplace, stack or Wasted pile). A `Table` holds everything that changes during a game; a
`Game` (`engine/game.py`) plays the rules on one, and `Game.from_table` starts a game from any
table (copies for search, positions, sampled states).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from engine.cards import VALUE, Card
from engine.scoring import HandScore


class Phase(StrEnum):
    """What kind of choice a decision is."""

    DRAFT = "draft"
    """Give me five: keep one card of the packet, pass the rest on."""
    TURN = "turn"
    """The active player: play or discard one card, deal, swap, end the turn."""
    DEAL_GIVE = "deal-give"
    """The proposer names the hand card offered (announces it, in Hidden deals)."""
    DEAL_WANT = "deal-want"
    """The proposer names the card wanted in return."""
    DEAL_STASH = "deal-stash"
    """Classic: the proposer adds tabled peddles to either side of the deal."""
    DEAL_ANSWER = "deal-answer"
    """The partner accepts or declines."""
    DEAL_HAND_OVER = "deal-hand-over"
    """Hidden deals: the proposer picks the card that really travels, face down."""
    WASTE = "waste"
    """Sold Out (modern): the victim picks the unprotected peddle to lose."""
    SURRENDER = "surrender"
    """Stonehigh (modern): each opponent picks the unprotected peddle to give."""
    PASS = "pass"
    """After paranoia: the card passed, face down, to the left."""
    OVER = "over"
    """The game has ended; nothing more to decide."""


PHASE_TEXT: dict[Phase, str] = {phase: phase.value for phase in Phase}
"""Each phase's text as a plain string (an enum's `.value` is slow on the hot path)."""


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
            self.name,
            self.hand[:],
            self.market_open,
            self.heat[:],
            self.hassle_under[:],
            self.unprotected[:],
            [(p, g[:]) for p, g in self.protected],
            self.skips,
            self.extra_turns,
            self.wiped_out,
            self.notes[:],
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


@dataclass(slots=True)
class DealDraft:
    """A deal being put together by the active player (R-DEAL-*)."""

    partner: int
    hand_part: bool = False
    give: Card | None = None
    """The proposer's hand card: the real one, or the announced one in Hidden deals."""
    want: Card | None = None
    offer: list[Card] = field(default_factory=list)
    ask: list[Card] = field(default_factory=list)
    answer: Card | None = None
    """Hidden deals: the card the partner really hands over."""

    def public(self) -> dict[str, Any]:
        return {
            "partner": self.partner,
            "give": self.give,
            "want": self.want,
            "offer": list(self.offer),
            "ask": list(self.ask),
        }

    def copy(self) -> DealDraft:
        return DealDraft(
            self.partner,
            self.hand_part,
            self.give,
            self.want,
            self.offer[:],
            self.ask[:],
            self.answer,
        )


def _copy_random(rng: random.Random) -> random.Random:
    """A stream in the same state, without seeding a new one from the OS first (a quarter of
    the cost of copying a table)."""
    copy = random.Random.__new__(random.Random)
    copy.setstate(rng.getstate())
    return copy


@dataclass(slots=True)
class Table:
    """Everything about a game that changes as it is played; a `Game` adds the rules.

    A table is always at a decision (`phase`, `to_act`) or over. The events are part of it:
    they are the log so far, and this hand's part of them (`hand_start_event` on) is what
    observations show as history.
    """

    seats: list[Seat]
    rng: random.Random
    """Deals only (first dealer, shuffles): the same seed deals the same cards in every hand
    whatever the players do, which duplicate tournaments rely on."""
    play_rng: random.Random
    """Chance during play (Lucky or not's takes), kept apart from the deals."""
    stack: list[Card] = field(default_factory=list)
    """The Grass Stack; the top card is the last element."""
    wasted: list[Card] = field(default_factory=list)
    out_of_play: list[Card] = field(default_factory=list)
    """Learning hands: cards removed from this hand's deck."""
    hand_no: int = 0
    dealer: int = -1
    active: int = -1
    """Whose turn it is."""
    to_act: int = -1
    """Who decides now (-1 when the game is over)."""
    phase: Phase = Phase.OVER
    totals: list[int] = field(default_factory=list)
    hand_scores: list[tuple[HandScore, ...]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    hand_start_event: int = 0
    """Index in `events` of this hand's `hand` line."""
    # The turn.
    played: bool = False
    swapped: bool = False
    deals_made: int = 0
    last_turn: bool = False
    """The active player drew the last card of the stack: the hand ends with this turn."""
    hand_ended: bool = False
    """Market Close was played: the hand ends with this turn."""
    deal: DealDraft | None = None
    # Steps that go round the table.
    queue: list[int] = field(default_factory=list)
    """Seats still to decide in a PASS, SURRENDER or DRAFT round, in order."""
    passes: dict[int, Card] = field(default_factory=dict)
    """Cards chosen so far in a PASS or DRAFT round, by seat."""
    initiator: int = -1
    """Who played the card that started the current PASS or SURRENDER round."""
    packets: list[list[Card]] = field(default_factory=list)
    """Give me five: the packets being drafted, by seat."""
    kept: list[list[Card]] = field(default_factory=list)
    """Give me five: the cards kept so far, by seat."""
    result: dict[str, Any] | None = None

    @classmethod
    def new(cls, names: list[str] | tuple[str, ...], seed: int) -> Table:
        """An empty table before the first hand, with the game's random streams."""
        return cls(
            seats=[Seat(name) for name in names],
            rng=random.Random(seed),
            play_rng=random.Random(f"play:{seed}"),
            totals=[0] * len(names),
        )

    def copy(self) -> Table:
        """An independent copy: no list, seat, deal or random stream is shared (events are
        never changed once logged, so the copy's list holds the same event dicts)."""
        return Table(
            [seat.clone() for seat in self.seats],
            _copy_random(self.rng),
            _copy_random(self.play_rng),
            self.stack[:],
            self.wasted[:],
            self.out_of_play[:],
            self.hand_no,
            self.dealer,
            self.active,
            self.to_act,
            self.phase,
            self.totals[:],
            self.hand_scores[:],
            self.events[:],
            self.hand_start_event,
            self.played,
            self.swapped,
            self.deals_made,
            self.last_turn,
            self.hand_ended,
            None if self.deal is None else self.deal.copy(),
            self.queue[:],
            dict(self.passes),
            self.initiator,
            [p[:] for p in self.packets],
            [k[:] for k in self.kept],
            self.result,
        )

    def all_cards(self) -> list[Card]:
        """Every card of this hand's deck, wherever it lies (for accounting checks)."""
        cards = [*self.stack, *self.wasted]
        for seat in self.seats:
            cards.extend(seat.hand)
            cards.extend(seat.table_cards())
        for packet in self.packets:
            cards.extend(packet)
        for kept in self.kept:
            cards.extend(kept)
        return cards
