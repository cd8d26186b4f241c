"""What a live table shows, built from the engine's observer (`engine.observation`) so that
the site never decides what may be seen: a person's seat gets `engine.observe()` of that seat
(what a bot in the seat is sent), watchers get the engine's public view (no hand, no notes, no
secret of any event), and once the game is over everyone gets the hands face up (the full
view). The lines are the engine's words for each event as the viewer may read them
(`event_lines`), the same as a replay's of the same view.

A frame is a JSON-ready dict, whole (never a change to an earlier one), so a watcher that
missed frames or joined late needs only the latest: `view` (an observation's fields; `hand`
None and `legal` empty for watchers), `lines` (the last LINES_KEPT events in words, as the
viewer may read them, oldest first), `line_first` (the number of the first of them among all
the lines told so far, from 1: the page numbers them so), `over`, and at the end `hands`
(every seat's cards) and `result`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

from engine.game import Event, Game
from engine.observation import Sight, Viewer, event_lines, full_view, observe, public_view

Frame = dict[str, Any]

LINES_KEPT = 40
"""Lines a frame carries: the table's recent story, bounded whatever the game's length."""


def watcher_view(game: Game) -> dict[str, Any]:
    """The table as someone who holds no seat sees it: the engine's public view alone."""
    view = public_view(game)
    view.update(seat=None, hand=None, legal=[], notes=[])
    return view


def seat_view(observation: dict[str, Any]) -> dict[str, Any]:
    """A person's view: their seat's observation as the engine gives it, but its `history`,
    which the frame's `lines` tell in words (from the same redaction, `redact`)."""
    return {key: value for key, value in observation.items() if key != "history"}


class Lines:
    """The last LINES_KEPT lines of the game as one viewer may read them, kept as the game
    goes on: each event is put in words once."""

    def __init__(self, names: Sequence[str], viewer: int | None) -> None:
        self.names = list(names)
        self.viewer = viewer
        self.lines: deque[str] = deque(maxlen=LINES_KEPT)
        self.seen = 0
        self.told = 0
        """Lines told so far, those no longer kept included."""

    def update(self, events: Sequence[Event]) -> list[str]:
        viewer: Viewer = Sight.PUBLIC if self.viewer is None else self.viewer
        for event in events[self.seen :]:
            told = event_lines(event, self.names, viewer)
            self.lines.extend(told)
            self.told += len(told)
        self.seen = len(events)
        return list(self.lines)

    @property
    def first(self) -> int:
        """The number (from 1) of the first line kept among all the lines told."""
        return self.told - len(self.lines) + 1


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
                "line_first": lines.first,
                "over": over,
                "hands": hands,
                "result": game.result if over else None,
            }
        return frames


def _hands(game: Game) -> list[list[str]]:
    """Every seat's cards, face up (the engine's full view): only once the game is over."""
    assert game.over
    return [own["hand"] for own in full_view(game, since=len(game.events))["own"]]
