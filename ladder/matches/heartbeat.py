"""A running match's heartbeat: while a worker process plays a match, a thread of that process
writes the database's clock into the match's row every GRASS_MATCH_HEARTBEAT_SECONDS.

The sweep takes a match back only when its heartbeat stopped (`recovery.match_requeue_stale`:
silent for GRASS_MATCH_SILENT_SECONDS), never for its age: a person's game of two hours beats
like any other and is played once (issue 35; the sweep used to take back any match claimed 30
minutes ago, and a person's game was played twice). The time written is the database's
(`Now()`), and the sweep compares it with the database's, so the hosts' clocks never matter. A
thread, not the game loop: the game runs in the sandboxed runner, which knows nothing of the
database, and a thread beats just the same while a bot or a person thinks.

Each beat is a conditional update on the claim (`claims.Claim.held`: running, this claim's
start and attempt number). When it changes no row, the match was taken back (the sweep thought
this worker lost): the run's lease is lost, and the run stops at its next decision
(`play_match`'s `stop`), sends no more frames (its live table is abandoned), tears its bots'
boxes down and records nothing (`recording._match_record` checks the claim again).

A run that is stuck (no decision for longer than any step of its game may take,
`Progress`) stops beating on purpose, so that the sweep takes back a hung run as it takes back
a dead one, and loses its lease, so that it records nothing if it ever wakes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

from django.conf import settings
from django.db import Error, connection
from django.db.models.functions import Now

from ladder.matches.claims import Claim
from ladder.matches.models import Match

logger = logging.getLogger(__name__)

RETRY_SECONDS = 1.0
"""How soon a beat that failed (the database unreachable) is tried again: once the database is
back, the match must show a fresh heartbeat before a sweep judges it silent."""
JOIN_SECONDS = 5.0
"""How long the end of a match waits for a beat in progress (one UPDATE; a database that does
not answer leaves the thread to finish on its own, a daemon)."""


class Lease:
    """What a run knows of its claim: held, until the heartbeat finds the claim gone or the
    run stuck; `lost` then says why, once and for good, and every listener is told (the live
    table, which then sends nothing more). Read from the run's thread, set from the
    heartbeat's."""

    def __init__(self, claim: Claim) -> None:
        self.claim = claim
        self.lost: str | None = None
        self._listeners: list[Callable[[str], None]] = []
        self._lock = threading.Lock()

    def lose(self, reason: str) -> None:
        """The claim is gone (or must be treated so): say why, and tell the listeners once."""
        with self._lock:
            if self.lost is not None:
                return
            self.lost = reason
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(reason)
            except Exception:
                logger.exception(
                    "match %s: a listener of the lost claim failed", self.claim.match_id
                )

    def when_lost(self, listener: Callable[[str], None]) -> None:
        """Call `listener` with the reason when the claim is lost (at once if it is)."""
        with self._lock:
            if self.lost is None:
                self._listeners.append(listener)
                return
            reason = self.lost
        listener(reason)


STEP_SLACK_SECONDS = 60.0
"""Added to the longest a step of a game may take (`TimeControl.longest_step_s`) before a run
that has not moved is judged stuck: starting boxes on a loaded host, building frames, the
pauses between two decisions."""


class Progress:
    """When the run last moved: `moved` is called before every decision and as each answer
    comes back (`play_match`'s `stop`), `done` when the game is over (recording it is judged
    by its own retries, not by steps). A run that has not moved for longer than
    `longest_step_s` is stuck: a hung worker, whose heartbeat thread would beat for ever."""

    def __init__(self, *, longest_step_s: float) -> None:
        self.longest_step_s = longest_step_s
        self.at = time.monotonic()
        self.playing = True

    def moved(self) -> None:
        self.at = time.monotonic()

    def done(self) -> None:
        self.playing = False

    def stuck(self) -> str | None:
        """Why the run is stuck, or None."""
        still = time.monotonic() - self.at
        if not self.playing or still <= self.longest_step_s:
            return None
        return (
            f"stuck: no decision for {still:.0f} s, longer than any step of this game may take "
            f"({self.longest_step_s:.0f} s)"
        )


def match_heartbeat_write(*, claim: Claim) -> bool:
    """Write the heartbeat of the match `claim` holds; returns whether the claim still holds
    (False: the match was taken back or is recorded, and must not beat again). One row
    changed, or none: a conditional update, no lock held."""
    return claim.held().update(heartbeat=Now()) == 1


@contextmanager
def match_heartbeat(*, claim: Claim, progress: Progress | None = None) -> Iterator[Lease]:
    """Beat for the match `claim` holds while the block runs (its play and its recording),
    from a thread that opens a database connection of its own for each beat; the block is
    given the run's lease, lost when a beat finds the claim gone or `progress` stuck."""
    lease = Lease(claim)
    stop = threading.Event()
    thread = threading.Thread(
        target=_beat,
        args=(lease, progress, stop),
        name=f"heartbeat-{claim.match_id}",
        daemon=True,
    )
    thread.start()
    try:
        yield lease
    finally:
        stop.set()
        thread.join(JOIN_SECONDS)


def _beat(lease: Lease, progress: Progress | None, stop: threading.Event) -> None:
    claim = lease.claim
    match_id = claim.match_id
    interval = float(settings.GRASS_MATCH_HEARTBEAT_SECONDS)
    wait, failing, warned_unseen = interval, False, False
    try:
        while not stop.wait(wait):
            stuck = progress.stuck() if progress is not None else None
            if stuck is not None:
                # No more beats: the sweep takes the match back once it is silent, as it
                # would a dead worker's, and this run records nothing if it ever wakes.
                logger.error(
                    "match %s: %s; its heartbeat stops, so that the sweep takes it back",
                    match_id,
                    stuck,
                )
                lease.lose(stuck)
                return
            try:
                holds = match_heartbeat_write(claim=claim)
                # Recorded (or failed) by this run between two beats: the claim ended as it
                # should, and nothing is lost.
                concluded = not holds and claim.concluded()
                # A match row this connection cannot see at all was not taken back by anyone:
                # it was deleted, or its run started inside a transaction not yet committed (a
                # test's, or a caller's own). Nobody else plays it, so this run goes on; its
                # recording is conditional on the claim, as always.
                unseen = not holds and not Match.objects.filter(pk=match_id).exists()
            except Error as exc:
                if not failing:
                    logger.warning("match %s: heartbeat not written, retrying: %s", match_id, exc)
                failing, wait = True, min(RETRY_SECONDS, interval)
                continue
            finally:
                # One connection per beat, closed at once: a playing process holds no second
                # session between beats (PostgreSQL's connections are the scarce part), and a
                # restart of the server leaves nothing stale to stumble on.
                _drop_connection()
            if failing:
                logger.info("match %s: heartbeat written again", match_id)
            failing, wait = False, interval
            if unseen:
                if not warned_unseen:
                    logger.warning(
                        "match %s: its row is not visible to the heartbeat (deleted, or not "
                        "committed yet); no other run holds it, so this one plays on",
                        match_id,
                    )
                    warned_unseen = True
                continue
            if not holds:
                if concluded:
                    return
                logger.warning(
                    "match %s: taken back from this worker (thought lost): its claim (%s) no "
                    "longer holds; this run stops and records nothing",
                    match_id,
                    claim,
                )
                lease.lose(f"taken back: its claim ({claim}) no longer holds")
                return
    finally:
        _drop_connection()


def _drop_connection() -> None:
    """Close this thread's database connection (a broken one is replaced at the next query)."""
    with suppress(Error):
        connection.close()
