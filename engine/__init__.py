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

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from engine.cards import FAMILY, INFO, VALUE, Card, Family
    from engine.events import Event
    from engine.game import ENGINE_VERSION, Decision, EventHook, Game, IllegalAction, Phase
    from engine.moves import Move
    from engine.observation import observe, redact
    from engine.rules import CLASSIC, MODERN, RULESETS, Ruleset, Variants
    from engine.scoring import HandScore, HandTally, add_to_totals, finishing_ranks, score_hand
    from engine.state import Seat, Table

_HOMES = {
    **dict.fromkeys(("FAMILY", "INFO", "VALUE", "Card", "Family"), "engine.cards"),
    "Event": "engine.events",
    **dict.fromkeys(
        ("ENGINE_VERSION", "Decision", "EventHook", "Game", "IllegalAction", "Phase"),
        "engine.game",
    ),
    "Move": "engine.moves",
    **dict.fromkeys(("observe", "redact"), "engine.observation"),
    **dict.fromkeys(("CLASSIC", "MODERN", "RULESETS", "Ruleset", "Variants"), "engine.rules"),
    **dict.fromkeys(
        ("HandScore", "HandTally", "add_to_totals", "finishing_ranks", "score_hand"),
        "engine.scoring",
    ),
    **dict.fromkeys(("Seat", "Table"), "engine.state"),
}
"""Where each name of the package lives. They load on first use (PEP 562), so a bot that
imports one small module (`engine.moves` to read its moves) does not pay for the whole engine
(about 75 ms of imports)."""


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


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
    "Move",
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
    from engine.game import Game
    from engine.rules import Variants, resolve_ruleset

    variants = variants or Variants()
    names = [f"seat{i}" for i in range(players)] if isinstance(players, int) else list(players)
    rules = resolve_ruleset(ruleset, variants, limits)
    return Game(rules, variants, seed, names, on_event=on_event)
