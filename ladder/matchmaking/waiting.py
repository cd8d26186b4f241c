"""Where waiting work stands (issue 35): a queued match's place in its queue, and about when
it starts. The match page and API, the live table and `grass challenge --wait` show it; a
waiting challenge's place is the challenges app's (`challenges.selectors.challenge_place`),
with the same estimate.

What it reads does not grow with the ladder: the queued and running matches (the capacity
keeps them few) and a lane's RECENT_GAMES latest finished games (one index range). The
capacity is the matchmaker's (`capacity`: the workers' answer, cached briefly).

The estimate is a rough one, said as "about": a match waits for the games ahead of it, less
the places free now, each of its lane's places ending a game every typical game's time (the
median of the lane's latest games).
"""

from __future__ import annotations

from dataclasses import dataclass

from ladder.matches.lanes import Lane, lane_slots
from ladder.matches.models import Match
from ladder.matches.selectors import lane_running_count, lane_typical_seconds, match_queue_ahead
from ladder.matchmaking.capacity import match_places, now_capacity, person_places


@dataclass(frozen=True)
class Place:
    """A waiting item's place: `ahead` of it in its queue, and about when it starts."""

    lane: str
    """background (the ladder's games), person, challenge or first (`lanes.Lane`)."""
    ahead: int
    estimate_s: int | None
    """About how many seconds until it starts: 0 when a place is free for it; None when
    there is nothing to go by (no worker, or no game of its lane played yet)."""

    @property
    def position(self) -> int:
        return self.ahead + 1

    def as_dict(self) -> dict[str, int | str | None]:
        """What the APIs and the live table's socket answer (`QueueSerializer`)."""
        return {
            "position": self.position,
            "ahead": self.ahead,
            "estimate_seconds": self.estimate_s,
            "lane": self.lane,
        }

    @property
    def text(self) -> str:
        """Where it stands as a page says it: "3rd in the queue, about 40 s"."""
        said = f"{ordinal(self.position)} in the queue"
        if self.estimate_s == 0:
            return said + ", starting in a moment"
        if self.estimate_s is not None:
            return said + f", about {duration(self.estimate_s)}"
        return said


def ordinal(number: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st..."""
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    if 11 <= number % 100 <= 13:
        suffix = "th"
    return f"{number}{suffix}"


def duration(seconds: int) -> str:
    """40 s, 3 min, 2 h: a wait as the pages say it (rounded)."""
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{round(seconds / 3600)} h"


def lane_name(lane: Lane | None) -> str:
    return "background" if lane is None else lane.name.lower()


def lane_places(lane: Lane | None) -> int:
    """How many games of `lane` are played at once: its share of the `now` pool
    (`lanes.lane_slots`), the people's tables (`capacity.person_places`), or the match workers'
    processes for the background games."""
    if lane is None:
        return match_places(waiting=True)
    if lane == Lane.PERSON:
        return person_places(waiting=True)
    return lane_slots(lane, capacity=now_capacity(waiting=True))


def estimate_seconds(*, ahead: int, free: int, places: int, typical: float | None) -> int | None:
    """About how long until an item with `ahead` others before it starts: 0 if one of the
    `free` places takes it; otherwise the games that must end first (those ahead and its
    own, less the free places) times a game's `typical` time, over the `places` that play
    at once. None with no place at all or no typical time."""
    waits_for = ahead + 1 - max(free, 0)
    if waits_for <= 0:
        return 0
    if places <= 0 or typical is None:
        return None
    return round(waits_for * typical / places)


def match_place(match: Match) -> Place | None:
    """The queued `match`'s place in its queue and about when it starts; None once a worker
    has taken it (or it is over)."""
    if match.status != Match.Status.QUEUED:
        return None
    lane = None if match.lane is None else Lane(match.lane)
    places = lane_places(lane)
    ahead = match_queue_ahead(match=match)
    estimate = estimate_seconds(
        ahead=ahead,
        free=places - lane_running_count(lane=lane),
        places=places,
        typical=lane_typical_seconds(lane=lane),
    )
    return Place(lane=lane_name(lane), ahead=ahead, estimate_s=estimate)


def match_place_of(*, match_id: int) -> Place | None:
    """`match_place` of the match `match_id` (None if there is no such match)."""
    match = Match.objects.filter(pk=match_id).first()
    return None if match is None else match_place(match)
