"""Where a replay's decisions are: the frames at which a seat chose, so that the viewer can step
from one decision to the next (the events in between shown together) and jump to a chosen
seat's next decision.

The engine takes a decision with one legal action itself (an `auto` act). The replay of every
card face up (the public one, of a finished match) leaves those out: they are no one's choice.
A seat's view leaves out only its own: another seat's forced moves look like its choices there,
as its lines do (`engine.observation.redact` drops `auto` from others' events), since knowing
that a seat had no choice tells something of its hand.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def decision_marks(events: Iterable[dict[str, Any]], seat: int | None) -> list[list[int]]:
    """`[frame, seat]` for each decision shown in the replay of `events` as `seat` sees it
    (None: every card face up). A frame is an event's index among the log's events, runner
    notes aside (`engine.replay_frames.frames`)."""
    marks: list[list[int]] = []
    frame = -1
    for event in events:
        if event.get("e") == "note":
            continue
        frame += 1
        if event.get("e") != "act":
            continue
        who = event.get("seat")
        if not isinstance(who, int):
            continue
        if event.get("auto") and (seat is None or who == seat):
            continue
        marks.append([frame, who])
    return marks
