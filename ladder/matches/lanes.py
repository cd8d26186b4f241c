"""Latency classes: work a person waits for never queues behind the ladder's background games.

The matchmaker fills every process of the match workers (`-Q matches`) with rated games by
design, so anything sent there waits for the shortest running game to end (128-591 s on a
2-slot ladder with `strong` in its games, issue 35). Work someone waits for goes instead to
the `now` queue, read by a pool of its own (`-Q now,challenges`, Procfile and
deploy/systemd/grass-worker-now.service) whose processes never take a background game:

- a person's game (`Lane.PERSON`): the person is at the table;
- a challenge (`Lane.CHALLENGE`): its author waits for the result;
- a new version's first rated game in the home page's ruleset (`Lane.FIRST`, the fast lane):
  its author waits for a rating (`ladder.matchmaking.services.matchmaker_first_games`).

Each lane holds its own share of that pool's processes (`lane_slots`), so a lane's work starts
as soon as a process of its share is free however busy the other lanes are; the shares add up
to the pool, so under them nothing waits at all. The CPU is not reserved: an idle process of
the pool costs memory only, and while it plays, the host's cores are shared with the
background games, whose bots lose nothing by it (their clocks are CPU time, `bots.runner.clock`).

A person's game mostly waits for the person (120 s a decision), so by default it goes to a
queue of its own, `tables` (GRASS_PLAY_QUEUE), read by the table host (`grass-worker-tables`: a
Celery worker with a pool of threads, one per table, hundreds on one process, docs/play.md): a
person who thinks holds a thread, not a process of the `now` pool, and the `now` pool is then
the challenges' and first games' alone, shared in proportion to their shares (`lane_share`).
A site may still send people's games to `now` (GRASS_PLAY_QUEUE=now: GRASS_PLAY_SHARE of it).

A lane's value is also its message's priority in the broker (kombu's Redis transport reads a
queue's priority lists 0, 3, 6, 9 in that order), so when a pool is short of processes a
person's game is taken before a challenge, and a challenge before a first game.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

NOW_QUEUE = "now"
"""The queue of the work someone waits for (CELERY_TASK_QUEUES)."""
TABLES_QUEUE = "tables"
"""The table host's queue: people's games, by default (GRASS_PLAY_QUEUE)."""


class Lane(models.IntegerChoices):
    PERSON = 0, "a person's game"
    CHALLENGE = 3, "a challenge"
    FIRST = 6, "a first rated game"


def lane_queue(lane: Lane | None) -> str:
    """The queue a match of `lane` is sent to: background games (None) to run_match's own
    (`matches`), a person's game to GRASS_PLAY_QUEUE (the table host's `tables` unless the
    site says otherwise), the others to `now`."""
    if lane is None:
        return str(settings.CELERY_TASK_ROUTES["ladder.matches.tasks.run_match"]["queue"])
    if lane == Lane.PERSON:
        return str(settings.GRASS_PLAY_QUEUE)
    return NOW_QUEUE


def lane_share(lane: Lane) -> int:
    """The percent of the `now` pool's processes `lane` may hold, queued or running. With
    people's games on a pool of their own (the table host, by default), the pool is the other
    lanes' alone: each share is then of what they hold together (25 and 25: half each), and
    the person lane's is 0 of it."""
    shares = {
        Lane.PERSON: int(settings.GRASS_PLAY_SHARE),
        Lane.CHALLENGE: int(settings.GRASS_CHALLENGE_SHARE),
        Lane.FIRST: int(settings.GRASS_FIRST_GAMES_SHARE),
    }
    if lane_queue(Lane.PERSON) == NOW_QUEUE:
        return shares[lane]
    if lane == Lane.PERSON:
        return 0
    together = shares[Lane.CHALLENGE] + shares[Lane.FIRST]
    return shares[lane] * 100 // together if together > 0 else 0


def lane_slots(lane: Lane, *, capacity: int) -> int:
    """How many matches `lane` may hold, queued or running, of a `now` pool of `capacity`
    processes: its share, rounded down, at least one while there is any room (none for
    people's games sent to the table hosts, which are not of this pool)."""
    if capacity <= 0 or lane_queue(lane) != NOW_QUEUE:
        return 0
    return max(1, capacity * lane_share(lane) // 100)
