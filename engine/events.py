"""The events of a game log, one `TypedDict` per kind (the `e` field names the kind).

The engine logs these as it plays (`Game.events`, written one per line by `engine.log`). Cards
are `Card` values, which are strings, so an event is JSON as it stands. Secrets (cards only some
seats may see) sit under `secret`, with the seats that see them in `see`
(`engine.observation.redact` removes them for everyone else); an `act` in a secret phase has
`see` and no `secret`: others learn that the choice was made, not what it was.

Code that reads logs from files (or sends events on) uses the general `Event`, a plain dict:
a log is checked against the engine (`engine.log.replay`) before anything trusts its fields.
"""

# No `from __future__ import annotations` here: TypedDict reads NotRequired from the
# annotations as they are evaluated.
from typing import Any, Literal, NotRequired, TypedDict

from engine.cards import Card

Event = dict[str, Any]
"""Any event as a plain dict (what a log line parses to)."""


class HeaderEvent(TypedDict):
    """Line 1: what a replay needs to start the same game."""

    e: Literal["header"]
    format: str
    """`grass-log/1`."""
    engine: str
    """The engine version whose rules the game plays (engine/RULES.md, section 6)."""
    ruleset: str
    limits: dict[str, int]
    variants: dict[str, bool | int]
    seed: int
    players: list[str]
    position: NotRequired[dict[str, Any]]
    """A game set up mid-hand (`engine.position.Position.as_dict`)."""
    runtime: NotRequired[str]
    """Where the game was played, written by whoever ran it (the bots' runtime image, as
    `engine.log.HEADER_NOTES`): not a rule, so a replay takes it from the log."""


class HandEvent(TypedDict):
    e: Literal["hand"]
    hand: int
    dealer: int
    deck: int
    """Cards in this hand's deck."""
    deals: bool
    """Whether negotiation is allowed this hand (learning hand 1 has none)."""


class CardsSecret(TypedDict):
    cards: list[Card]


class CardSecret(TypedDict):
    card: Card


class DealtEvent(TypedDict):
    e: Literal["dealt"]
    seat: int
    secret: CardsSecret
    see: list[int]


class DrawEvent(TypedDict):
    e: Literal["draw"]
    seat: int
    secret: CardSecret
    see: list[int]


class ActEvent(TypedDict):
    """A decision taken: by the seat, or by the engine when only one action was legal."""

    e: Literal["act"]
    seat: int
    phase: str
    action: str
    auto: NotRequired[Literal[True]]
    see: NotRequired[list[int]]
    """A secret choice (pass, draft, hidden deals): only this seat learns the action."""


class SkipEvent(TypedDict):
    e: Literal["skip"]
    seat: int


class ExtraTurnEvent(TypedDict):
    e: Literal["extra-turn"]
    seat: int


class WasteEvent(TypedDict):
    """Tabled peddles lost to the Wasted pile (paranoia, Pay Fine)."""

    e: Literal["waste"]
    seat: int
    cards: list[Card]


MoveEvent = TypedDict("MoveEvent", {"e": Literal["move"], "from": int, "to": int, "card": Card})
"""A tabled peddle going from one marketplace to another (Steal, Nirvana)."""


class PassEvent(TypedDict):
    """A card passed face down to the left after paranoia."""

    e: Literal["pass"]
    seat: int
    to: int
    secret: CardSecret
    see: list[int]


TakeEvent = TypedDict(
    "TakeEvent",
    {
        "e": Literal["take"],
        "seat": int,
        "from": int,
        "secret": CardSecret,
        "see": list[int],
    },
)
"""Lucky or not: a card taken at random from the right-hand neighbour's hand."""


class OfferEvent(TypedDict):
    """A deal proposed (hand cards as announced, in Hidden deals)."""

    e: Literal["offer"]
    seat: int
    partner: int
    give: Card | None
    want: Card | None
    offer: list[Card]
    ask: list[Card]


class ExchangeSecret(TypedDict):
    gave: Card
    got: Card


class ExchangeEvent(TypedDict):
    """A deal done: the hand cards (secret in Hidden deals) and the tabled peddles moved."""

    e: Literal["exchange"]
    seat: int
    partner: int
    gave: NotRequired[Card]
    got: NotRequired[Card]
    secret: NotRequired[ExchangeSecret]
    see: NotRequired[list[int]]
    offer: list[Card]
    ask: list[Card]


class ScoreLine(TypedDict):
    protected: int
    at_risk: int
    banker: int
    fines: int
    best_held: int
    bonus: int
    score: int


class HandEndEvent(TypedDict):
    e: Literal["hand-end"]
    hand: int
    held: list[list[Card]]
    """The cards each seat held at the end, shown to all."""
    scores: list[ScoreLine]
    totals: list[int]


class ResultEvent(TypedDict):
    """The last line."""

    e: Literal["result"]
    hands: int
    totals: list[int]
    hand_scores: list[list[int]]
    ranks: list[int]
    winners: list[int]
    reason: Literal["target", "hand-limit"]


class NoteEvent(TypedDict):
    """Written by the bot runner, not the engine: a fault, a strike or a forfeit. Replays skip
    notes and do not verify them."""

    e: Literal["note"]
    seat: int
    kind: str
    detail: str
    strike: NotRequired[int]
    played: NotRequired[str]


GameEvent = (
    HeaderEvent
    | HandEvent
    | DealtEvent
    | DrawEvent
    | ActEvent
    | SkipEvent
    | ExtraTurnEvent
    | WasteEvent
    | MoveEvent
    | PassEvent
    | TakeEvent
    | OfferEvent
    | ExchangeEvent
    | HandEndEvent
    | ResultEvent
)
"""Every event the engine logs."""

SCHEMAS: dict[str, type] = {
    "header": HeaderEvent,
    "hand": HandEvent,
    "dealt": DealtEvent,
    "draw": DrawEvent,
    "act": ActEvent,
    "skip": SkipEvent,
    "extra-turn": ExtraTurnEvent,
    "waste": WasteEvent,
    "move": MoveEvent,
    "pass": PassEvent,
    "take": TakeEvent,
    "offer": OfferEvent,
    "exchange": ExchangeEvent,
    "hand-end": HandEndEvent,
    "result": ResultEvent,
    "note": NoteEvent,
}
"""The schema of each kind of event, by its `e`."""
