"""Rulesets and variants as data.

Every difference between the 2018 (modern) and 1979 (classic) editions is a field of `Ruleset`;
the game code reads fields, never a ruleset's name. `engine/RULES.md` cites the seed passage
behind each value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import lru_cache

from engine.cards import Card, Family

ENGINE_VERSION = "1.2.0"
"""The engine's version, written in every log header. A log plays under the readings of the
rules of the version that wrote it (`rules_as_of`):

- 1.0: the first engine.
- 1.1: Lucky or not's random takes come from a stream of their own (`Game.play_rng`), so a seed
  fixes every hand's deal whatever is played; 1.0 drew them from the dealing stream (its
  Lucky-or-not logs cannot be replayed, `engine/log.py`).
- 1.2: three readings of the seeds' words (issue 14): Utterly Wiped Out's victim may not deal
  until it plays a Market Open again (modern, D-UWO-DEAL); classic deals only after the draw and
  before the play (D-CLASSIC-DEAL-TIMING); the classic Steal card stays in the victim's hassle
  pile (D-CLASSIC-STEAL). `READINGS` lists the switches.
"""


def version_tuple(version: str) -> tuple[int, int]:
    """(major, minor) of an engine version such as "1.2.0"; ValueError if it is not one."""
    parts = version.split(".")
    if len(parts) != 3 or not all(p.isdigit() and len(p) < 6 for p in parts):
        raise ValueError(f"not an engine version: {version!r}")
    return int(parts[0]), int(parts[1])


class Pick(StrEnum):
    """Which tabled peddle(s) an effect takes."""

    CHOOSE = "choose"
    """The player named by the rule chooses among the eligible peddles."""
    SMALLEST = "smallest"
    """The lowest-valued eligible peddle, chosen by the engine."""
    LARGEST = "largest"
    """The highest-valued eligible peddle, chosen by the engine."""
    ALL = "all"
    """Every eligible peddle."""


@dataclass(frozen=True, slots=True)
class ParanoiaEffect:
    """What playing one paranoia card does to its victim."""

    peddles: Pick
    """Which of the victim's unprotected tabled peddles go to the Wasted pile."""
    turns_lost: int
    """How many of the victim's next turns are skipped."""
    wastes_hassle_pile: bool = False
    """Utterly Wiped Out: the whole hassle pile, Market Open included, goes to the Wasted pile."""


MODERN_DECK: tuple[tuple[Card, int], ...] = (
    (Card.MARKET_OPEN, 10),
    (Card.HOME_GROWN, 6),
    (Card.MEXICO, 6),
    (Card.COLOMBIA, 5),
    (Card.JAMAICA, 5),
    (Card.PANAMA, 6),
    (Card.DR_FEELGOOD, 1),
    (Card.BUST, 3),
    (Card.DETAINED, 3),
    (Card.FELONY, 3),
    (Card.SEARCH_AND_SEIZURE, 3),
    (Card.IMMUNITY, 5),
    (Card.A_BREEZE_TO_FLY, 5),
    (Card.HEARSAY_EVIDENCE, 5),
    (Card.CHARGES_DROPPED, 5),
    (Card.PAY_FINE, 4),
    (Card.LUST_CONQUERS_ALL, 2),
    (Card.GRAB_A_SNACK, 2),
    (Card.CATCH_A_BUZZ, 2),
    (Card.STEAL, 4),
    (Card.STONEHIGH, 4),
    (Card.EUPHORIA, 1),
    (Card.SOLD_OUT, 4),
    (Card.DOUBLE_CROSSED, 3),
    (Card.UTTERLY_WIPED_OUT, 1),
    (Card.BANKER, 1),
    (Card.MARKET_CLOSE, 5),
)

# The classic deck differs in two counts: five Panama and five Stonehigh (seed 002, card list).
CLASSIC_DECK: tuple[tuple[Card, int], ...] = tuple(
    (card, {Card.PANAMA: 5, Card.STONEHIGH: 5}.get(card, count)) for card, count in MODERN_DECK
)

PARANOIA_FINES: tuple[tuple[Card, int], ...] = (
    (Card.SOLD_OUT, 25_000),
    (Card.DOUBLE_CROSSED, 50_000),
    (Card.UTTERLY_WIPED_OUT, 100_000),
)


@dataclass(frozen=True, slots=True)
class LearningStage:
    """One of the classic rules' four learning hands: cards left out and whether deals are on."""

    removed: frozenset[Card]
    deals: bool


_BASIC_REMOVED = frozenset(
    {
        Card.STONEHIGH,
        Card.EUPHORIA,
        Card.LUST_CONQUERS_ALL,
        Card.GRAB_A_SNACK,
        Card.CATCH_A_BUZZ,
        Card.SOLD_OUT,
        Card.DOUBLE_CROSSED,
        Card.UTTERLY_WIPED_OUT,
        Card.STEAL,
        Card.BANKER,
    }
)
LEARNING_STAGES: tuple[LearningStage, ...] = (
    LearningStage(_BASIC_REMOVED, deals=False),
    LearningStage(_BASIC_REMOVED, deals=True),
    LearningStage(
        frozenset(
            {
                Card.STONEHIGH,
                Card.EUPHORIA,
                Card.SOLD_OUT,
                Card.DOUBLE_CROSSED,
                Card.UTTERLY_WIPED_OUT,
            }
        ),
        deals=True,
    ),
)
"""Hands 1-3 of the learning sequence; hand 4 and later use the whole deck."""


@dataclass(frozen=True, slots=True)
class Ruleset:
    """Everything that differs between editions, as counts and switches."""

    name: str
    deck: tuple[tuple[Card, int], ...]
    hand_size: int = 6
    target: int = 250_000
    bonus: int = 25_000
    fines: tuple[tuple[Card, int], ...] = PARANOIA_FINES
    banker_fee: int = 0
    """Flat amount the Banker's holder takes from each opponent with at-risk profit (modern)."""
    banker_percent: int = 0
    """Percentage of each opponent's at-risk profit the Banker's holder skims (classic)."""
    total_floor_zero: bool = True
    """A running total never drops below zero (modern: a negative first hand scores nothing)."""
    heat_stacks: bool = False
    """Heat On may be played on an opponent already under heat; the top card must be matched."""
    heat_on_blocked_by_own_heat: bool = False
    """A player under heat may not play Heat On."""
    pay_fine_pick: Pick = Pick.CHOOSE
    """Which tabled peddle (protected or not) a Pay Fine costs."""
    steal_pick: Pick = Pick.CHOOSE
    """Which unprotected peddle Steal Your Neighbour's Pot takes."""
    steal_victim_must_be_clear: bool = True
    """Steal needs the victim's Market Open showing (no heat on it)."""
    paranoia_on_opponent: bool = True
    """Paranoia is played on an opponent, who suffers it; else on the Wasted pile, costing the
    player who plays it."""
    paranoia: tuple[tuple[Card, ParanoiaEffect], ...] = ()
    nirvana_extra_turn: bool = False
    nirvana_clears_heat: bool = False
    stonehigh_pick: Pick = Pick.CHOOSE
    """Which unprotected peddle each opponent gives for a Stonehigh (CHOOSE: the giver picks)."""
    euphoria_pick: Pick = Pick.LARGEST
    forced_swap: bool = False
    """Once per turn the active player may swap unprotected tabled peddles with an opponent."""
    stash_deals: bool = False
    """Deals may include unprotected tabled peddles (stash-to-stash)."""
    undiscardable: frozenset[Family] = frozenset()
    """Families that may not be put on the Wasted pile as a plain discard."""
    wiped_out_stops_dealing: bool = False
    """A seat whose hassle pile Utterly Wiped Out took may not deal (propose deals, swap) until
    it plays a Market Open again (modern, engine 1.2 on; D-UWO-DEAL)."""
    deals_before_play_only: bool = False
    """Deals (and swaps) only after the draw and before the card is played, while the player
    holds seven cards (classic, engine 1.2 on; D-CLASSIC-DEAL-TIMING)."""
    steal_card_stays: bool = False
    """The Steal card stays in the victim's hassle pile, under its top card; else it goes to the
    Wasted pile (classic, engine 1.2 on; D-CLASSIC-STEAL)."""
    max_deals_per_turn: int = 3
    """Platform limit: deal proposals per turn (the seeds allow any number; bots must stop)."""
    max_hands: int = 30
    """Platform limit: a game that reaches this many hands ends with the totals as they stand."""
    engine: str = ENGINE_VERSION
    """The engine version whose readings of the rules these are (`rules_as_of`); a log's header
    names it."""

    @property
    def deck_size(self) -> int:
        return sum(count for _, count in self.deck)

    def paranoia_effect(self, card: Card) -> ParanoiaEffect:
        return dict(self.paranoia)[card]

    def fine(self, card: Card) -> int:
        return dict(self.fines).get(card, 0)


MODERN = Ruleset(
    name="modern",
    deck=MODERN_DECK,
    banker_fee=5_000,
    total_floor_zero=True,
    paranoia=(
        (Card.SOLD_OUT, ParanoiaEffect(Pick.CHOOSE, turns_lost=0)),
        (Card.DOUBLE_CROSSED, ParanoiaEffect(Pick.LARGEST, turns_lost=1)),
        (Card.UTTERLY_WIPED_OUT, ParanoiaEffect(Pick.ALL, turns_lost=1, wastes_hassle_pile=True)),
    ),
    forced_swap=True,
    undiscardable=frozenset({Family.PARANOIA}),
    wiped_out_stops_dealing=True,
)

CLASSIC = Ruleset(
    name="classic",
    deck=CLASSIC_DECK,
    banker_percent=20,
    total_floor_zero=False,
    heat_stacks=True,
    heat_on_blocked_by_own_heat=True,
    pay_fine_pick=Pick.SMALLEST,
    steal_pick=Pick.LARGEST,
    steal_victim_must_be_clear=False,
    paranoia_on_opponent=False,
    paranoia=(
        (Card.SOLD_OUT, ParanoiaEffect(Pick.SMALLEST, turns_lost=1)),
        (Card.DOUBLE_CROSSED, ParanoiaEffect(Pick.LARGEST, turns_lost=2)),
        (Card.UTTERLY_WIPED_OUT, ParanoiaEffect(Pick.ALL, turns_lost=2, wastes_hassle_pile=True)),
    ),
    nirvana_extra_turn=True,
    nirvana_clears_heat=True,
    stonehigh_pick=Pick.SMALLEST,
    stash_deals=True,
    # On the Wasted pile, Nirvana and Paranoia cards are played, not discarded (seed 002).
    undiscardable=frozenset({Family.NIRVANA, Family.PARANOIA}),
    deals_before_play_only=True,
    steal_card_stays=True,
)

RULESETS: Mapping[str, Ruleset] = {r.name: r for r in (MODERN, CLASSIC)}

MIN_PLAYERS, MAX_PLAYERS = 2, 6
"""R-PLAYERS: "GRASS is a draw game for 2 to 6 players." (002:5)"""

READINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("1.2.0", ("wiped_out_stops_dealing", "deals_before_play_only", "steal_card_stays")),
)
"""Switches that an engine version turned on (for the editions that have them): a game logged
by an older engine plays with them off."""


def rules_as_of(ruleset: Ruleset, engine: str) -> Ruleset:
    """`ruleset` as engine version `engine` read it (an older log plays under its own rules).
    Raises ValueError for a version this engine does not know (newer than itself)."""
    wanted = version_tuple(engine)
    if wanted > version_tuple(ENGINE_VERSION):
        raise ValueError(f"engine {engine} is newer than this engine ({ENGINE_VERSION})")
    off = {
        name: False for since, names in READINGS if wanted < version_tuple(since) for name in names
    }
    return replace(ruleset, **off, engine=engine)  # type: ignore[arg-type]


def readings(ruleset: Ruleset) -> str:
    """Which readings of the rules a game plays under, in words (for `grass verify`)."""
    older = [since for since, _ in READINGS if version_tuple(ruleset.engine) < version_tuple(since)]
    if not older:
        return f"rules of engine {ruleset.engine}"
    return (
        f"rules of engine {ruleset.engine}, before the readings of engine "
        f"{', '.join(older)} (engine/RULES.md, section 6)"
    )


TARGETS: tuple[int, ...] = (250_000, 500_000, 1_000_000)


@dataclass(frozen=True, slots=True)
class Variants:
    """Optional rules, combinable. All off gives the plain edition."""

    give_me_five: bool = False
    """Draft the starting hands, passing five, four, ... cards; direction reverses each hand."""
    hidden_deals: bool = False
    """Hand-to-hand deals travel face down: what is announced need not be what arrives."""
    lucky_or_not: bool = False
    """After paranoia, each player takes a random card from the right-hand neighbour instead of
    passing one left."""
    learning_hands: bool = False
    """Hands 1-4 follow the classic learning sequence of decks and rules."""
    target: int = 250_000
    """Winning total; the seeds name $250,000, $500,000 and $1,000,000."""

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            allowed = ", ".join(str(t) for t in TARGETS)
            raise ValueError(f"target must be one of {allowed}, not {self.target}")

    def as_dict(self) -> dict[str, bool | int]:
        return {
            "give_me_five": self.give_me_five,
            "hidden_deals": self.hidden_deals,
            "lucky_or_not": self.lucky_or_not,
            "learning_hands": self.learning_hands,
            "target": self.target,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Variants:
        known = set(cls().as_dict())
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown variant(s) {sorted(unknown)}; known: {sorted(known)}")
        return cls(**data)  # type: ignore[arg-type]

    @classmethod
    def from_names(cls, names: list[str]) -> Variants:
        """Variants from command-line style names: `give-me-five`, `target=500000`, ..."""
        values: dict[str, object] = {}
        for name in names:
            key, _, raw = name.partition("=")
            key = key.replace("-", "_")
            if key == "target":
                values[key] = int(raw)
            else:
                values[key] = True
        return cls.from_dict(values)


def resolve_ruleset(
    ruleset: Ruleset | str,
    variants: Variants,
    overrides: Mapping[str, int] | None = None,
    engine: str | None = None,
) -> Ruleset:
    """The ruleset actually in force: the named edition, with platform limits overridden
    (`max_hands`, `max_deals_per_turn`) and the variants' target applied; with `engine`, as
    that engine version read the rules (`rules_as_of`, for replaying older logs)."""
    if isinstance(ruleset, str):
        try:
            ruleset = RULESETS[ruleset]
        except KeyError:
            raise ValueError(
                f"unknown ruleset {ruleset!r}; rulesets are: {', '.join(RULESETS)}"
            ) from None
    limits = dict(overrides or {})
    unknown = set(limits) - set(OVERRIDABLE)
    if unknown:
        raise ValueError(f"only {', '.join(OVERRIDABLE)} may be overridden, not {sorted(unknown)}")
    for key, value in limits.items():
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{key} must be a positive integer, not {value!r}")
    return _resolved(ruleset, variants.target, tuple(sorted(limits.items())), engine)


@lru_cache(maxsize=64)
def _resolved(
    ruleset: Ruleset, target: int, limits: tuple[tuple[str, int], ...], engine: str | None
) -> Ruleset:
    """`resolve_ruleset` once its input is checked. Kept (rulesets are frozen), so a game's
    clones and a search bot's sampled states get the very same object back, and do not pay
    for the copies again (as much as the rest of a sampled state)."""
    ruleset = replace(ruleset, target=target)
    for key, value in limits:
        ruleset = replace(ruleset, **{key: value})  # type: ignore[arg-type]
    if engine is not None and engine != ruleset.engine:
        ruleset = rules_as_of(ruleset, engine)
    return ruleset


OVERRIDABLE = ("max_hands", "max_deals_per_turn")
"""Ruleset fields a game may set for itself (platform limits, not rules); the log header
records them under `limits`."""


def ruleset_limits(ruleset: Ruleset) -> dict[str, int]:
    """The platform limits of a ruleset, as written in a log header."""
    return {key: getattr(ruleset, key) for key in OVERRIDABLE}


def learning_stage(variants: Variants, hand: int) -> LearningStage | None:
    """The learning stage for a 1-based hand number, or None when the full game applies."""
    if variants.learning_hands and hand <= len(LEARNING_STAGES):
        return LEARNING_STAGES[hand - 1]
    return None
