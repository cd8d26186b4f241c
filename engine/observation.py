"""One seat's view of a game: everything that player may know, and nothing else.

The view is a plain JSON-ready dict so the bot protocol can send it unchanged. Hidden facts
reach it only through the seat's own hand, its private notes, and this hand's event history
with every other seat's secrets removed (events carry `secret` and `see`; see `redact`).
"""

from __future__ import annotations

from typing import Any

from engine.cards import ORDER, Card
from engine.game import Event, Game
from engine.rules import ruleset_limits
from engine.state import PHASE_TEXT, Phase, Seat

_TEXT: dict[Card, str] = {card: card.value for card in Card}
_ORDER_OF = ORDER.__getitem__


def _sorted(cards: list[Card]) -> list[str]:
    return [_TEXT[c] for c in sorted(cards, key=_ORDER_OF)]


def _texts(cards: list[Card]) -> list[str]:
    return [_TEXT[c] for c in cards]


_PRIVATE = ("secret", "see", "auto")


def redact(event: Event, seat: int | None) -> Event:
    """The event as `seat` saw it (seat None: a spectator who sees only public facts).

    Private parts live under `secret` and are kept only for the seats in `see`; the `auto`
    flag is dropped because it would tell others that a player had no choice.
    """
    if "see" not in event and "auto" not in event and "secret" not in event:
        return dict(event)  # public as it stands (the header too)
    if event.get("e") == "header":
        return dict(event)
    shown = {k: v for k, v in event.items() if k not in _PRIVATE}
    see = event.get("see")
    if "secret" in event and see is not None and seat in see:
        shown.update(event["secret"])
    elif see is not None and "secret" not in event and seat not in see:
        # A secret decision (a pass, a draft pick): others learn only that it was made.
        shown.pop("action", None)
    return shown


def public_seat(s: Seat) -> dict[str, Any]:
    """A seat as every player sees it: `observe()`'s entry in `seats`. Shared with whatever
    sends observations as changes (the bot runner's protocol version 2), so that a seat's entry
    has one definition."""
    return {
        "name": s.name,
        "cards": len(s.hand),
        "market_open": s.market_open,
        "heat": _texts(s.heat),
        "hassle_under": _texts(s.hassle_under),
        "unprotected": _sorted(s.unprotected),
        "protected": [{"card": _TEXT[p], "covers": _sorted(group)} for p, group in s.protected],
        "skips": s.skips,
        "extra_turns": s.extra_turns,
    }


def observe(game: Game, seat: int, since: int | None = None) -> dict[str, Any]:
    """What `seat` knows now. Raises IndexError for a seat that is not in the game.

    `history` holds this hand's events as the seat saw them; with `since` (an index into
    `game.events`, e.g. `history_end` of the previous view) only the events after it, so a bot
    protocol can send each event once. A bot's loop should pass `since`: the whole hand's
    history again at every decision costs more than the rest of the view.
    """
    if not 0 <= seat < game.n:
        raise IndexError(f"no seat {seat} in a {game.n}-player game")
    t = game.table
    me = t.seats[seat]
    events = t.events
    view: dict[str, Any] = {
        "seat": seat,
        "players": list(game.names),
        "ruleset": game.ruleset.name,
        "variants": game.variants.as_dict(),
        "target": game.ruleset.target,
        "limits": ruleset_limits(game.ruleset),
        "hand_number": t.hand_no,
        "dealer": t.dealer,
        "active": t.active,
        "to_act": t.to_act,
        "phase": PHASE_TEXT[t.phase],
        "legal": list(game.moves) if t.to_act == seat else [],
        "hand": _sorted(me.hand),
        "stack": len(t.stack),
        "wasted": _texts(t.wasted),
        "seats": [public_seat(s) for s in t.seats],
        "totals": list(t.totals),
        "hand_scores": [[score.score for score in hand] for hand in t.hand_scores],
        "notes": [list(note) for note in me.notes],
        "turn": {
            "played": t.played,
            "swapped": t.swapped,
            "deals_made": t.deals_made,
        },
        "deal": t.deal.public() if t.deal is not None else None,
        "history": [
            redact(event, seat)
            for event in events[t.hand_start_event if since is None else since :]
        ],
        "history_end": len(events),
    }
    if t.phase is Phase.DRAFT and t.packets:
        view["packet"] = _sorted(t.packets[seat])
        view["kept"] = _sorted(t.kept[seat])
    return view
