"""What a live table shows, built from the engine's own views so that the site never decides
what may be seen: a person's seat gets `engine.observe()` of that seat (what a bot in the seat
is sent), watchers get the part of an observation every seat shares (no hand, no notes, no
secret of any event), and once the game is over everyone gets the hands face up.

A frame is a JSON-ready dict, whole (never a change to an earlier one), so a watcher that
missed frames or joined late needs only the latest: `view` (an observation's fields; `hand`
None and `legal` empty for watchers), `lines` (the last LINES_KEPT events in words, as the
viewer may read them), `over`, and at the end `hands` (every seat's cards) and `result`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

from engine.game import Event, Game
from engine.observation import observe, redact
from engine.replay_frames import omniscient_state
from engine.transcript import describe

Frame = dict[str, Any]

LINES_KEPT = 40
"""Lines a frame carries: the table's recent story, bounded whatever the game's length."""

PUBLIC_KEYS = (
    "players",
    "ruleset",
    "variants",
    "target",
    "limits",
    "hand_number",
    "dealer",
    "active",
    "to_act",
    "phase",
    "stack",
    "wasted",
    "seats",
    "totals",
    "hand_scores",
    "turn",
    "deal",
)
"""The fields of an observation that every seat sees alike (`engine.observe`); a watcher's
view is made of these alone, named one by one, so a field added to observations later stays
out until it is added here."""

_SECRET_WORDS = {
    "draft": "keeps a card and passes the packet on",
    "pass": "chooses a card to pass left",
    "deal-hand-over": "hands a card over face down",
    "deal-answer": "answers the deal",
}


def watcher_view(game: Game) -> dict[str, Any]:
    """The table as someone who holds no seat sees it: public fields only."""
    seen = observe(game, 0, since=len(game.events))
    view = {key: seen[key] for key in PUBLIC_KEYS}
    view.update(seat=None, hand=None, legal=[], notes=[])
    return view


def seat_view(observation: dict[str, Any]) -> dict[str, Any]:
    """A person's view: their seat's observation as the engine gives it, but its `history`,
    which the frame's `lines` tell in words (from the same redaction, `redact`)."""
    return {key: value for key, value in observation.items() if key != "history"}


def hidden_lines(event: Event, names: Sequence[str]) -> list[str] | None:
    """Words for an event whose secret the viewer does not share (None: no such words). They
    read nothing under the event's `secret`: not even how many cards it holds."""
    kind = event.get("e")
    name = names[event["seat"]] if isinstance(event.get("seat"), int) else "?"
    if kind == "dealt":
        return [f"{name} is dealt a hand"]
    if kind == "draw":
        return [f"{name} draws a card"]
    if kind == "pass":
        return [f"{name} passes a card to {names[event['to']]}"]
    if kind == "take":
        return [f"{name} takes a card at random from {names[event['from']]}"]
    if kind == "act":
        return [f"{name} {_SECRET_WORDS.get(event.get('phase', ''), 'makes a secret choice')}"]
    return None


def event_lines(event: Event, names: Sequence[str], viewer: int | None) -> list[str]:
    """One event in words as `viewer` (a seat, or None for a watcher) may read it. The header
    is left out: it holds the seed, which decides every shuffle."""
    if event.get("e") in ("header", "note"):
        return []
    see = event.get("see")
    if see is not None and viewer not in see:
        hidden = hidden_lines(event, names)
        if hidden is not None:
            return hidden
        shown = redact(event, viewer)
    else:
        # Public, or a secret the viewer shares: the words read it where it is. Not `auto`,
        # which would tell that the seat had no choice (as `redact` drops it).
        shown = {key: value for key, value in event.items() if key != "auto"}
    try:
        return [line.strip() for line in describe(shown, names)]
    except (KeyError, IndexError, TypeError):
        return [f"({shown.get('e')})"]


class Lines:
    """The last LINES_KEPT lines of the game as one viewer may read them, kept as the game
    goes on: each event is put in words once."""

    def __init__(self, names: Sequence[str], viewer: int | None) -> None:
        self.names = list(names)
        self.viewer = viewer
        self.lines: deque[str] = deque(maxlen=LINES_KEPT)
        self.seen = 0

    def update(self, events: Sequence[Event]) -> list[str]:
        for event in events[self.seen :]:
            self.lines.extend(event_lines(event, self.names, self.viewer))
        self.seen = len(events)
        return list(self.lines)


class TableViews:
    """The frames of one match as it is played: the watchers' and each person's seat."""

    def __init__(self, game: Game, people: Iterable[int]) -> None:
        names = list(game.names)
        self.lines: dict[int | None, Lines] = {None: Lines(names, None)}
        for seat in people:
            self.lines[seat] = Lines(names, seat)

    def frames(
        self, game: Game, asked: dict[int, dict[str, Any]] | None = None
    ) -> dict[int | None, Frame]:
        """A frame per view (None: the watchers'; a seat: its person's). `asked` holds the
        observations of the seats a request is waiting on (built once, by the runner)."""
        events = game.events
        over = game.over
        hands = _hands(game) if over else None
        frames: dict[int | None, Frame] = {}
        for viewer, lines in self.lines.items():
            if viewer is None:
                view = watcher_view(game)
            elif asked and viewer in asked:
                view = seat_view(asked[viewer])
            else:
                view = seat_view(observe(game, viewer, since=len(events)))
            frames[viewer] = {
                "view": view,
                "lines": lines.update(events),
                "over": over,
                "hands": hands,
                "result": game.result if over else None,
            }
        return frames


def _hands(game: Game) -> list[list[str]]:
    """Every seat's cards, face up: only once the game is over."""
    assert game.over
    return [seat["hand"] for seat in omniscient_state(game)["seats"]]
