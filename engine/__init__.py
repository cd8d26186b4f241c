"""The rules of Grass: a deterministic, replayable engine with no dependencies.

    >>> from engine import new_game
    >>> game = new_game("modern", players=4, seed=7)
    >>> while not game.over:
    ...     game.apply(game.legal_actions()[0])
    >>> sorted(game.result["ranks"])[0]
    1

Rules are data (`Ruleset`, `Variants`); every rule and interpretation is in `engine/RULES.md`.
The game's state is a `Table` (`engine/state.py`), its log a list of events (`engine/events.py`);
`engine/hands.py`, `engine/effects.py` and `engine/deals.py` hold the rules by topic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.cards import FAMILY, INFO, VALUE, Card, Family
from engine.events import Event
from engine.game import ENGINE_VERSION, Decision, EventHook, Game, IllegalAction, Phase
from engine.observation import observe, redact
from engine.rules import CLASSIC, MODERN, RULESETS, Ruleset, Variants, resolve_ruleset
from engine.scoring import HandScore, HandTally, add_to_totals, finishing_ranks, score_hand
from engine.state import Seat, Table

__all__ = [
    "CLASSIC",
    "ENGINE_VERSION",
    "FAMILY",
    "INFO",
    "MODERN",
    "RULESETS",
    "VALUE",
    "Card",
    "Decision",
    "Event",
    "EventHook",
    "Family",
    "Game",
    "HandScore",
    "HandTally",
    "IllegalAction",
    "Phase",
    "Ruleset",
    "Seat",
    "Table",
    "Variants",
    "add_to_totals",
    "finishing_ranks",
    "new_game",
    "observe",
    "redact",
    "score_hand",
]


def new_game(
    ruleset: Ruleset | str = "modern",
    players: int | Sequence[str] = 4,
    seed: int = 0,
    variants: Variants | None = None,
    limits: Mapping[str, int] | None = None,
    on_event: EventHook | None = None,
) -> Game:
    """Start a game. `players` is a count (2-6) or the players' names, in seat order.
    `limits` overrides the platform limits `max_hands` and `max_deals_per_turn`; `on_event`
    hears of every event from the first (`Game.on_event`)."""
    variants = variants or Variants()
    names = [f"seat{i}" for i in range(players)] if isinstance(players, int) else list(players)
    rules = resolve_ruleset(ruleset, variants, limits)
    return Game(rules, variants, seed, names, on_event=on_event)
