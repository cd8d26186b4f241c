"""What flowed between each ordered pair of seats in a finished game (issue 33, collusion).

Two bots that help each other move value through legal play: deals that are bad for the seat
that accepts them, forced swaps that give a good tabled peddle for a poor one, the best peddle
given up to a Stonehigh, and attacks left unplayed. None of it breaks a rule, so the only place
to see it is the log. `game_flows(events)` replays a log through the engine (so a forged line
fails as in `engine.log.replay`) and counts, for every ordered pair (giver, taker):

- deals: exchanges between the two (either proposing), the value they moved from giver to
  taker, and how many of the taker's proposals the giver granted and what they cost it;
- forced swaps the giver made on the taker, and the value they moved (positive = a gift);
- Nirvana peddles the giver chose to give the taker, and how much more they were worth than
  the cheapest it could have given;
- cards passed after paranoia (to the left-hand neighbour only), by value;
- attacks (Heat On, a modern paranoia card, a Steal) the giver aimed at the taker, and its
  turns on which one was legal (so an attack withheld shows as a chance not taken).

Values are the engine's own scoring (`card_value`): a peddle is worth its face value, a
paranoia card its fine as a negative amount (holding one costs that at scoring), anything
else nothing. Standard library only, like the rest of the engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields

from engine.cards import FAMILY, VALUE, Card, Family
from engine.events import Event
from engine.game import Game
from engine.log import HEADER_NOTES, LogError, encode, game_from_header
from engine.rules import Ruleset

ATTACKS = frozenset({Family.HEAT_ON, Family.PARANOIA, Family.STEAL})
"""Families of the cards played on an opponent (RULES.md R-WHERE): an attack on a seat."""


@dataclass(frozen=True, slots=True)
class PairFlow:
    """What went from `giver` to `taker` in one game. Value fields are in dollars by
    `card_value`; a positive value helped the taker at the giver's cost."""

    giver: int
    taker: int
    deals: int = 0
    """Deals done between the two, whoever proposed."""
    deal_value: int = 0
    """Net value those deals moved from giver to taker (hand cards and tabled peddles)."""
    asked: int = 0
    """Deals the taker proposed to the giver (the giver had to answer)."""
    granted: int = 0
    """Of those, the ones the giver accepted."""
    granted_value: int = 0
    """Value the deals the giver granted moved to the taker: what it gave up by consenting
    (value moved in deals it proposed itself is not here, only in `deal_value`)."""
    swaps: int = 0
    """Forced swaps (R-DEAL-SWAP) the giver made with the taker's marketplace."""
    swap_value: int = 0
    """Value those swaps moved to the taker: the giver's peddle less the one it took."""
    gifts: int = 0
    """Nirvana peddles the giver chose to give the taker (automatic gives not counted)."""
    gift_value: int = 0
    gift_excess: int = 0
    """How much more the chosen peddles were worth than the cheapest ones allowed."""
    passes: int = 0
    pass_value: int = 0
    """Value of the cards the giver passed to the taker after paranoia."""
    attacks: int = 0
    """Attacks the giver played on the taker."""
    attack_chances: int = 0
    """The giver's turns on which an attack on the taker was legal at some decision."""

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def card_value(ruleset: Ruleset, card: str) -> int:
    """A card's worth by the engine's scoring: a peddle's face value, minus a paranoia card's
    fine, zero for the rest (and for anything that is not a card)."""
    try:
        kind = Card(card)
    except ValueError:
        return 0
    if FAMILY[kind] is Family.PEDDLE:
        return VALUE[kind]
    return -ruleset.fine(kind)


def _target(action: str) -> int | None:
    """The seat an attack aims at (`play bust @2`), or None if the action is no attack."""
    parts = action.split()
    if len(parts) < 3 or parts[0] != "play" or not parts[2].startswith("@"):
        return None
    try:
        kind = Card(parts[1])
        seat = int(parts[2][1:])
    except ValueError:
        return None
    return seat if FAMILY[kind] in ATTACKS else None


def _bare(card: str) -> str:
    return card.removesuffix("(p)")


class _Tally:
    """Mutable counters while a game is read; frozen into `PairFlow`s at the end."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.counts: dict[tuple[int, int], dict[str, int]] = {
            (a, b): {} for a in range(n) for b in range(n) if a != b
        }

    def add(self, giver: int, taker: int, name: str, amount: int = 1) -> None:
        if (giver, taker) in self.counts:
            row = self.counts[giver, taker]
            row[name] = row.get(name, 0) + amount

    def frozen(self) -> dict[tuple[int, int], PairFlow]:
        return {pair: PairFlow(pair[0], pair[1], **row) for pair, row in self.counts.items()}


@dataclass(frozen=True, slots=True)
class _Decision:
    """A decision a seat took itself, with what it could have done instead."""

    seat: int
    active: int
    """Whose turn it is (the Nirvana's player when a seat surrenders a peddle)."""
    phase: str
    action: str
    legal: tuple[str, ...]


def _replay(events: Sequence[Event]) -> tuple[Game, list[_Decision]]:
    """Replay the log, keeping every non-automatic decision with its legal actions. The
    finished game's log must equal the given one line for line (as `engine.log.replay`)."""
    log = [e for e in events if e.get("e") != "note"]
    if not log:
        raise LogError(1, "the log is empty")
    game = game_from_header(log[0])
    for key in HEADER_NOTES:
        if key in log[0]:
            game.events[0][key] = log[0][key]
    decisions: list[_Decision] = []
    for number, line in enumerate(log[1:], start=2):
        if line.get("e") != "act" or line.get("auto"):
            continue
        if game.over:
            raise LogError(number, "lines after the result")
        action = line.get("action")
        if line.get("seat") != game.to_act or not isinstance(action, str):
            raise LogError(number, f"seat {line.get('seat')} acts, but it is seat {game.to_act}'s")
        legal = tuple(game.moves)
        if action not in legal:
            raise LogError(number, f"{action!r} is not legal here")
        decisions.append(
            _Decision(game.to_act, game.table.active, str(line.get("phase", "")), action, legal)
        )
        game.apply(action)
    mine = [encode(e) for e in game.events]
    theirs = [encode(e) for e in log]
    if mine != theirs:
        at = next((i for i, (a, b) in enumerate(zip(mine, theirs, strict=False)) if a != b), None)
        at = min(len(mine), len(theirs)) if at is None else at
        raise LogError(at + 1, "the log disagrees with the engine here")
    return game, decisions


def game_flows(events: Iterable[Event]) -> dict[tuple[int, int], PairFlow]:
    """Flows of a game's log (finished, or as far as it goes), keyed by (giver, taker).
    Raises `LogError` if the log is not one the engine would write."""
    events = list(events)
    game, decisions = _replay(events)
    ruleset = game.ruleset
    tally = _Tally(game.n)

    def value(card: str) -> int:
        return card_value(ruleset, _bare(card))

    # Decisions: attacks aimed and withheld, surrender choices, forced swaps.
    chances: set[tuple[int, int]] = set()
    turn_seat: int | None = None

    def close_turn() -> None:
        for giver, taker in chances:
            tally.add(giver, taker, "attack_chances")
        chances.clear()

    for d in decisions:
        if d.phase == "turn":
            if d.seat != turn_seat:
                close_turn()
                turn_seat = d.seat
            for legal in d.legal:
                target = _target(legal)
                if target is not None:
                    chances.add((d.seat, target))
            target = _target(d.action)
            if target is not None:
                tally.add(d.seat, target, "attacks")
            parts = d.action.split()
            if parts[0] == "swap" and len(parts) == 4:
                taker = int(parts[2][1:])
                tally.add(d.seat, taker, "swaps")
                tally.add(d.seat, taker, "swap_value", value(parts[1]) - value(parts[3]))
            if d.action == "end":
                close_turn()
                turn_seat = None
        elif d.phase == "surrender":
            options = [value(a.split()[1]) for a in d.legal if a.startswith("surrender ")]
            given = value(d.action.split()[1])
            # The taker is the seat whose turn it is: the one that played the Nirvana.
            tally.add(d.seat, d.active, "gifts")
            tally.add(d.seat, d.active, "gift_value", given)
            tally.add(d.seat, d.active, "gift_excess", given - min(options, default=given))
    close_turn()

    # Events: deals, offers and answers, passes.
    for e in game.events:
        kind = e["e"]
        if kind == "offer":
            tally.add(e["partner"], e["seat"], "asked")
        elif kind == "exchange":
            active, partner = e["seat"], e["partner"]
            hand = e.get("secret") or e
            moved = value(hand.get("gave", "")) - value(hand.get("got", ""))
            moved += sum(value(c) for c in e["offer"]) - sum(value(c) for c in e["ask"])
            tally.add(partner, active, "granted")
            tally.add(partner, active, "granted_value", -moved)
            for giver, taker, amount in ((active, partner, moved), (partner, active, -moved)):
                tally.add(giver, taker, "deals")
                tally.add(giver, taker, "deal_value", amount)
        elif kind == "pass":
            tally.add(e["seat"], e["to"], "passes")
            tally.add(e["seat"], e["to"], "pass_value", value(e["secret"]["card"]))
    return tally.frozen()
