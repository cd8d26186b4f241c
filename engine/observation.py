"""One seat's view of a game: everything that player may know, and nothing else.

The view is a plain JSON-ready dict so the bot protocol can send it unchanged. Hidden facts
reach it only through the seat's own hand, its private notes, and this hand's event history
with every other seat's secrets removed (events carry `secret` and `see`; see `redact`).
"""

from __future__ import annotations

from typing import Any

from engine.cards import ORDER, Card
from engine.game import Event, Game, Phase
from engine.rules import ruleset_limits


def _sorted(cards: list[Card]) -> list[str]:
    return [c.value for c in sorted(cards, key=ORDER.__getitem__)]


def redact(event: Event, seat: int | None) -> Event:
    """The event as `seat` saw it (seat None: a spectator who sees only public facts).

    Private parts live under `secret` and are kept only for the seats in `see`; the `auto`
    flag is dropped because it would tell others that a player had no choice.
    """
    if event.get("e") == "header":
        return dict(event)
    shown = {k: v for k, v in event.items() if k not in ("secret", "see", "auto")}
    see = event.get("see")
    if "secret" in event and see is not None and seat in see:
        shown.update(event["secret"])
    elif see is not None and "secret" not in event and seat not in see:
        # A secret decision (a pass, a draft pick): others learn only that it was made.
        shown.pop("action", None)
    return shown


def observe(game: Game, seat: int, since: int | None = None) -> dict[str, Any]:
    """What `seat` knows now. Raises IndexError for a seat that is not in the game.

    `history` holds this hand's events as the seat saw them; with `since` (an index into
    `game.events`, e.g. `history_end` of the previous view) only the events after it, so a bot
    protocol can send each event once.
    """
    if not 0 <= seat < game.n:
        raise IndexError(f"no seat {seat} in a {game.n}-player game")
    me = game.seats[seat]
    view: dict[str, Any] = {
        "seat": seat,
        "players": list(game.names),
        "ruleset": game.ruleset.name,
        "variants": game.variants.as_dict(),
        "target": game.ruleset.target,
        "limits": ruleset_limits(game.ruleset),
        "hand_number": game.hand_no,
        "dealer": game.dealer,
        "active": game.active,
        "to_act": game.to_act,
        "phase": game.phase.value,
        "legal": list(game.moves) if game.to_act == seat else [],
        "hand": _sorted(me.hand),
        "stack": len(game.stack),
        "wasted": [c.value for c in game.wasted],
        "seats": [
            {
                "name": s.name,
                "cards": len(s.hand),
                "market_open": s.market_open,
                "heat": [c.value for c in s.heat],
                "hassle_under": [c.value for c in s.hassle_under],
                "unprotected": _sorted(s.unprotected),
                "protected": [
                    {"card": p.value, "covers": _sorted(group)} for p, group in s.protected
                ],
                "skips": s.skips,
                "extra_turns": s.extra_turns,
            }
            for s in game.seats
        ],
        "totals": list(game.totals),
        "hand_scores": [[score.score for score in hand] for hand in game.hand_scores],
        "notes": [list(note) for note in me.notes],
        "turn": {
            "played": game.played,
            "swapped": game.swapped,
            "deals_made": game.deals_made,
        },
        "deal": game.deal.public() if game.deal is not None else None,
        "history": [
            redact(event, seat)
            for event in game.events[game.hand_start_event if since is None else since :]
        ],
        "history_end": len(game.events),
    }
    if game.phase is Phase.DRAFT and game.packets:
        view["packet"] = _sorted(game.packets[seat])
        view["kept"] = _sorted(game.kept[seat])
    return view
