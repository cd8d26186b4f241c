"""Writing matches: creating one with its seats, running it (claim, play, record, rate), putting
lost and failed runs back in the queue a bounded number of times.

The retry rule: every claim of a match counts one attempt. A run that raises marks the match
failed; a worker that dies mid-match leaves it "running" until `match_requeue_stale` notices.
Either way the match is queued again while it has had fewer than GRASS_MATCH_MAX_ATTEMPTS
attempts, and is otherwise failed for good ("gave up after N attempts"). A finished match is
never queued again, so its ratings are applied exactly once. A run that fails for a host fault
(`bots.runner.faults`) gives its attempt back: the match is queued again at once for a healthy
peer (`match_give_back`), up to GRASS_MATCH_MAX_HOST_FAULTS times.

A played game is never failed because of its log: a log the media storage refuses (a full
disk) waits in the database (PendingLog) and the sweep writes it once there is room.
"""

from __future__ import annotations

import logging
import random
import socket
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q, QuerySet
from django.db.models.functions import Now
from django.utils import timezone

from bots.runner import runtime
from bots.runner.botfiles import BotSource
from bots.runner.faults import describe, is_host_fault
from bots.runner.match import MatchStopped, TimeControl, play_match
from bots.runner.remote import RemoteAgent
from engine.rules import RULESETS, Variants
from ladder.bots.models import BotVersion
from ladder.bots.runtimes import expected_runtime, runtime_refusal
from ladder.bots.services import bot_version_runnable
from ladder.matches.broker import matches_waiting
from ladder.matches.claims import Claim, match_claim
from ladder.matches.heartbeat import STEP_SLACK_SECONDS, Progress, match_heartbeat
from ladder.matches.lanes import Lane, lane_queue
from ladder.matches.models import FAILURE_REASON_CHARS, Match, MatchSeat
from ladder.matches.recording import match_record_retrying, settle_on_commit
from ladder.matches.selectors import (
    match_seats,
)
from ladder.relay.table import LiveTable, live_table_open
from ladder.task_sending import send_on_commit

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)


def match_create(
    *,
    versions: Sequence[BotVersion],
    people: Mapping[int, User] | None = None,
    ruleset: str = "modern",
    variants: dict[str, Any] | None = None,
    limits: dict[str, int] | None = None,
    seed: int | None = None,
    shuffle: bool = True,
    rated: bool = True,
    time_control: dict[str, int] | None = None,
    enqueue: bool = False,
    lane: Lane | None = None,
) -> Match:
    """A queued match between `versions`, seated in a random order that is recorded.

    `shuffle=False` seats them in the order given (a tournament's seat rotations, a benchmark
    that replays the same games); `seed` fixes the shuffle of the cards (duplicate tables).
    `rated=False` keeps the result out of ladder Elo. `time_control` overrides fields of
    `TimeControl`. With `enqueue`, the match is sent to the workers once the surrounding
    transaction commits (never before: a worker must find the row), on its `lane`'s queue
    (`lanes.lane_queue`: who waits for it; None, the ladder's background games, on
    run_match's own `matches`); a match with people in it is always in the person lane.

    A version holds one seat. A bot holds one seat in a rated match (ratings are per bot); an
    unrated one may seat two versions of one bot (an author's new version against its last).
    `people` seats persons, by seat index, who play in the browser (`ladder.live`); the bots
    fill the other seats. A match with people in it is never rated: its bots' ratings measure
    bot against bot.
    """
    people = dict(people or {})
    seats = len(versions) + len(people)
    if not 2 <= seats <= 6:
        held = "seats" if people else "bots"
        raise ValueError(f"a match needs 2 to 6 {held}, got {seats}")
    if len({v.pk for v in versions}) != len(versions):
        raise ValueError("a version cannot hold two seats in one match")
    if rated and len({v.bot_id for v in versions}) != len(versions):
        raise ValueError("a bot cannot hold two seats in one match")
    if any(not 0 <= index < seats for index in people):
        raise ValueError(f"people's seats must be among the {seats} seats")
    if len({user.pk for user in people.values()}) != len(people):
        raise ValueError("a person cannot hold two seats in one match")
    if people and rated:
        raise ValueError("a match with people in it is never rated")
    if ruleset not in RULESETS:
        raise ValueError(f"unknown ruleset {ruleset!r}; rulesets are: {', '.join(RULESETS)}")
    variants = Variants.from_dict(variants or {}).as_dict()
    time_control = time_control or {}
    unknown = set(time_control) - {f.name for f in fields(TimeControl)}
    if unknown:
        raise ValueError(f"unknown time control fields: {', '.join(sorted(unknown))}")
    if people:
        lane = Lane.PERSON
    order = list(versions)
    if shuffle:
        random.SystemRandom().shuffle(order)
    extra: dict[str, Any] = {} if seed is None else {"seed": seed}
    with transaction.atomic():
        match = Match.objects.create(
            ruleset=ruleset,
            variants=variants,
            limits=limits or {},
            rated=rated,
            time_control=time_control,
            runtime=expected_runtime(),
            lane=lane,
            **extra,
        )
        bots = iter(order)
        MatchSeat.objects.bulk_create(
            _seat(match, index, person=people.get(index), version=None)
            if index in people
            else _seat(match, index, person=None, version=next(bots))
            for index in range(seats)
        )
        if enqueue:
            _enqueue_on_commit(match_id=match.pk, lane=lane)
    return match


def _seat(match: Match, index: int, *, person: Any, version: BotVersion | None) -> MatchSeat:
    """Seat `index` of `match`: a person's, or a bot version's (with its bot, kept on the seat
    for the bot's index of matches)."""
    if person is not None:
        return MatchSeat(match=match, seat=index, player=person)
    assert version is not None
    return MatchSeat(match=match, seat=index, bot_version=version, bot_id=version.bot_id)


def _enqueue_on_commit(*, match_id: int, lane: Lane | None = None, stored: bool = False) -> None:
    """Send the match to its lane's queue, with the lane as the message's priority
    (`ladder.matches.lanes`); `stored`: read the lane from its row (a match sent again)."""
    # Imported here: tasks import services, not the other way round at import time.
    from ladder.matches.tasks import run_match

    if stored:
        value = Match.objects.filter(pk=match_id).values_list("lane", flat=True).first()
        lane = None if value is None else Lane(value)
    # With the broker down, the match stays queued and stored (not a 500): the sweep resends
    # a queued match whose message is not in the broker.
    send_on_commit(
        run_match,
        match_id,
        queue=None if lane is None else lane_queue(lane),  # None: run_match's route
        priority=None if lane is None else int(lane),
        recovery="the sweep resends it (GRASS_MATCH_RESEND_SECONDS)",
    )


def match_run(*, match_id: int) -> Match:
    """Play a queued match and record it; safe to call twice for the same match.

    The match is claimed with a conditional update (queued -> running) that exactly one caller
    wins (`claims.match_claim`), so a duplicate delivery, or a match already running, finished
    or failed, does nothing. The claim's start and attempt number are its token: a worker
    thought dead whose match was requeued and claimed again can no longer record or fail it.
    The claim records this host and process, and from then until the match is recorded a
    thread writes its heartbeat (`heartbeat.match_heartbeat`), by which the sweep knows it is
    still being played. When a beat finds the claim gone (taken back), the run stops at its
    next decision (`play_match`'s `stop`), its live table goes silent, its bots' boxes are torn
    down and nothing is recorded; a run stuck in one step stops beating, so that the sweep
    takes it back. Bots play with no transaction or lock held. The log, the seats' results,
    the status and the rating changes are then written in one transaction, tried again while
    the database connection fails (`match_record_retrying`). An exception marks the match
    failed with the reason; `attempts` counts the claims, and `match_retry_failed` queues it
    again while it has attempts left. A host fault (`bots.runner.faults`) is not the match's:
    the match is given back (`match_give_back`, its attempt returned) and the fault raised
    again, for the worker to count toward stopping itself (`ladder.breaker`).

    A worker whose bots' runtime image is not the match's does not claim it (the error says
    so): the match stays queued for a worker that has the image.
    """
    refusal = runtime_refusal()
    needed = Match.objects.filter(pk=match_id).values_list("runtime", flat=True).first()
    if refusal is None and needed and needed != runtime.identity():
        here = runtime.identity()
        refusal = (
            f"match {match_id} must be played on runtime image {needed}, this worker's is {here}"
        )
    if refusal is not None and settings.GRASS_SANDBOXED:
        logger.error("match %s: not played here: %s", match_id, refusal)
        return Match.objects.get(pk=match_id)
    claim = match_claim(match_id=match_id)
    if claim is None:
        logger.info("match %s: not queued, nothing to do", match_id)
        return Match.objects.get(pk=match_id)
    live: LiveTable | None = None
    try:
        match = Match.objects.get(pk=match_id)
        time_control = TimeControl(**match.time_control)
        progress = Progress(longest_step_s=time_control.longest_step_s() + STEP_SLACK_SECONDS)
        with match_heartbeat(claim=claim, progress=progress) as lease:
            seats = list(match_seats(match_id=match_id))
            # The live table: frames for the match page's watchers, and the people's seats.
            live = live_table_open(
                match_id=match_id,
                people={s.seat: s.holder for s in seats if s.player_id},
                attempt=claim.attempt,
                superseded=lease.lose,  # a newer run's table announced itself
            )
            lease.when_lost(live.abandon)

            def stop() -> str | None:
                # Asked before every decision and as each answer comes back: the run moves.
                progress.moved()
                return lease.lost

            # No database session is held while the game plays (minutes, or hours with a
            # person): a table host's hundreds of tables would otherwise hold as many idle
            # sessions, and PostgreSQL's are the scarce part. Recording opens one again.
            _release_connection()
            played = play_match(
                _seat_sources(seats, live),
                ruleset=match.ruleset,
                variants=Variants.from_dict(match.variants),
                seed=match.seed,
                limits=match.limits or None,
                time_control=time_control,
                sandboxed=settings.GRASS_SANDBOXED,
                watch=live.watch,
                stop=stop,
            )
            progress.done()
            if lease.lost is not None:
                raise MatchStopped(lease.lost)
            return match_record_retrying(claim=claim, seats=seats, played=played)
    except MatchStopped as exc:
        # Taken back from this run (or stuck): its seats are torn down, its table silent, and
        # the match is the newer claim's to play and record.
        logger.warning("match %s: this run stopped and recorded nothing: %s", match_id, exc)
        return Match.objects.get(pk=match_id)
    except Exception as exc:
        if live is not None:
            live.fail(str(exc))
        if is_host_fault(exc):
            # Not the match's fault nor a bot's: no attempt used, nothing rated; the caller
            # (the worker's task) counts it toward stopping this worker (`breaker`).
            match_give_back(claim=claim, fault=exc)
            raise
        logger.exception("match %s failed", match_id)
        reason = f"{type(exc).__name__}: {exc}"[:FAILURE_REASON_CHARS]
        with transaction.atomic():
            failed = claim.held().update(
                status=Match.Status.FAILED, failure_reason=reason, finished=timezone.now()
            )
            match = Match.objects.get(pk=match_id)
            if failed and match.attempts >= _max_attempts():
                settle_on_commit(match)
        return match
    finally:
        if live is not None:
            live.close()


def _release_connection() -> None:
    """Close this thread's database connection, unless a transaction holds it (a caller's, or
    a test's: the match is then recorded on the same connection)."""
    if not connection.in_atomic_block:
        connection.close()


def match_give_back(*, claim: Claim, fault: BaseException) -> bool:
    """Give back a match whose run failed for a host fault (`bots.runner.faults`): queued again
    and sent to the workers (after commit), its claim's attempt returned, its `host_faults`
    counted and the fault kept as its `failure_reason`, so that a healthy peer plays it as if
    this run never happened. After GRASS_MATCH_MAX_HOST_FAULTS host faults it is failed for good
    instead ("gave up after N host faults"), unrated like any failed match. Only while the
    claim still holds (`Claim.held`: a conditional update, the row locked); returns whether
    it was given back."""
    match_id = claim.match_id
    host = socket.gethostname()[:255]
    reason = f"host fault on {host}: {describe(fault)}"[:FAILURE_REASON_CHARS]
    logger.error("match %s: given back to the queue, not charged: %s", match_id, reason)
    with transaction.atomic():
        held_by_run = claim.held()
        held = held_by_run.select_for_update().values_list("host_faults", flat=True).first()
        if held is None:  # taken back meanwhile (the sweep): the newer claim's
            return False
        given_back = {"attempts": F("attempts") - 1, "host_faults": F("host_faults") + 1}
        if held + 1 >= settings.GRASS_MATCH_MAX_HOST_FAULTS:
            held_by_run.update(
                **given_back,
                status=Match.Status.FAILED,
                failure_reason=f"gave up after {held + 1} host faults (the last: {reason})"[
                    :FAILURE_REASON_CHARS
                ],
                finished=timezone.now(),
            )
            settle_on_commit(Match.objects.get(pk=match_id))
            return False
        held_by_run.update(
            **given_back,
            status=Match.Status.QUEUED,
            failure_reason=reason,
            started=None,
            queued=timezone.now(),
        )
        _enqueue_on_commit(match_id=match_id, stored=True)
    return True


def _seat_sources(seats: list[MatchSeat], live: LiveTable) -> list[BotSource | RemoteAgent]:
    """The seats as the runner plays them: bots named `owner/bot` (their players' names in the
    log and replay; two versions of one bot, in an unrated match, are told apart by their
    numbers, `owner/bot v3`), and people's seats as their live table's remote agents."""
    sources = {
        seat.seat: bot_version_runnable(version=seat.bot_version)
        for seat in seats
        if seat.bot_version is not None
    }
    names = Counter(source.name for source in sources.values())
    players: list[BotSource | RemoteAgent] = []
    for seat in seats:
        if seat.bot_version is None:
            players.append(live.agent(seat.seat))
            continue
        source = sources[seat.seat]
        if names[source.name] > 1:
            source = replace(source, name=f"{source.name} v{seat.bot_version.number}")
        players.append(source)
    return players


def _max_attempts() -> int:
    return settings.GRASS_MATCH_MAX_ATTEMPTS


def _gave_up(attempts: int) -> str:
    return f"gave up after {attempts} attempts"


def match_requeue_stale(
    *, silent_for: timedelta | None = None, older_than: timedelta | None = None
) -> list[int]:
    """Put back the running matches whose worker is gone; returns their ids.

    Gone: its heartbeat (`heartbeat.match_heartbeat`) is older than `silent_for` (default
    GRASS_MATCH_SILENT_SECONDS: the worker was killed, its host lost, or its run is stuck and
    stopped beating on purpose, `heartbeat.Progress`). Never for its age: a match whose worker
    beats is left to it however long it plays (a person's game of two hours), since taking it
    back played it twice (issue 35). `older_than` (default GRASS_MATCH_STALE_SECONDS) judges
    only a match claimed without a heartbeat, by a worker of an earlier release. Heartbeats
    are judged in the database's clock, and not at all while the database has been up for
    less than `silent_for`: a restart silenced every worker for a while, and their next beats
    come within seconds.

    A match with fewer than GRASS_MATCH_MAX_ATTEMPTS attempts goes back to "queued" and is sent
    to the workers after commit; one that has used them all is failed with the reason "gave up
    after N attempts". Each match changes with a conditional update on its status and claim
    (its start and attempt), so a worker that records the match meanwhile wins and the sweep
    leaves it alone; the run it was taken from finds its claim gone at its next beat and stops.
    """
    if silent_for is None:
        silent_for = timedelta(seconds=settings.GRASS_MATCH_SILENT_SECONDS)
    if older_than is None:
        older_than = timedelta(seconds=settings.GRASS_MATCH_STALE_SECONDS)
    gone = Q(heartbeat__isnull=True, started__lt=timezone.now() - older_than)
    if not _database_started_within(silent_for):
        gone |= Q(heartbeat__lt=Now() - silent_for)
    stale = Match.objects.filter(gone, status=Match.Status.RUNNING)
    requeued = []
    lost_by = {}
    for match_id, started, attempts, host, pid in stale.values_list(
        "id", "started", "attempts", "host", "pid"
    ):
        if _requeue_or_give_up(
            match_id=match_id, status=Match.Status.RUNNING, started=started, attempts=attempts
        ):
            requeued.append(match_id)
            lost_by[match_id] = f"{host or '?'} pid {pid}"
    if requeued:
        logger.warning("requeued matches lost by their workers: %s (%s)", requeued, lost_by)
    return requeued


def _database_started_within(period: timedelta) -> bool:
    """Whether the database server (PostgreSQL) started less than `period` ago."""
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_postmaster_start_time() > now() - make_interval(secs => %s)",
            [period.total_seconds()],
        )
        row = cursor.fetchone()
    return bool(row and row[0])


def match_resend_lost(*, older_than: timedelta | None = None) -> list[int]:
    """Send again the queued matches whose message is lost; returns their ids.

    By default: queued for longer than GRASS_MATCH_RESEND_SECONDS with no message waiting in
    the broker's matches queue (`broker.matches_waiting`): a Redis restart without persistence
    lost it, or a worker that died took it. A match that waits its turn is left alone, so the
    queue never fills with copies. When the broker cannot be read, the matches queued for
    longer than GRASS_MATCH_STALE_SECONDS are sent again instead. With `older_than` (a starting
    worker of `make run`, an operator), every match queued for longer, whatever the broker
    holds. A duplicate message is harmless: the claim in `match_run` lets exactly one run play
    the match.
    """
    now = timezone.now()
    waiting: set[int] = set()
    if older_than is None:
        older_than = timedelta(seconds=settings.GRASS_MATCH_RESEND_SECONDS)
        # A message taken by a worker between this read and the claim is not waiting: its
        # match is then claimed (the update below skips it) or sent twice, harmlessly.
        found = matches_waiting() if _queued_before(now - older_than).exists() else set()
        if found is None:  # the broker cannot tell: time alone, as long as a match may take
            older_than = timedelta(seconds=settings.GRASS_MATCH_STALE_SECONDS)
        else:
            waiting = found
    lost = _queued_before(now - older_than)
    resent = []
    for match_id, queued in lost.values_list("id", "queued"):
        if match_id in waiting:
            continue
        with transaction.atomic():
            if Match.objects.filter(pk=match_id, status=Match.Status.QUEUED, queued=queued).update(
                queued=now
            ):
                _enqueue_on_commit(match_id=match_id, stored=True)
                resent.append(match_id)
    if resent:
        logger.warning("sent again matches queued since before %s: %s", now - older_than, resent)
    return resent


def _queued_before(moment: datetime) -> QuerySet[Match]:
    return Match.objects.filter(status=Match.Status.QUEUED, queued__lt=moment)


def match_retry_failed() -> list[int]:
    """Queue again the failed matches that have had fewer than GRASS_MATCH_MAX_ATTEMPTS attempts
    (sent to the workers after commit); returns their ids. `failure_reason` keeps the last
    failure until the match finishes. A match given up on has used all its attempts, so it
    stays failed.
    """
    failed = Match.objects.filter(
        status=Match.Status.FAILED,
        attempts__lt=_max_attempts(),
        host_faults__lt=settings.GRASS_MATCH_MAX_HOST_FAULTS,  # given up for host faults
    )
    requeued = []
    for match_id, started, attempts in failed.values_list("id", "started", "attempts"):
        if _requeue_or_give_up(
            match_id=match_id, status=Match.Status.FAILED, started=started, attempts=attempts
        ):
            requeued.append(match_id)
    return requeued


def _requeue_or_give_up(
    *, match_id: int, status: str, started: datetime | None, attempts: int
) -> bool:
    with transaction.atomic():
        # The claim as the caller read it (its start and attempt): a worker that records or
        # fails the match meanwhile, or a newer claim, leaves it alone.
        unchanged = Match.objects.filter(
            pk=match_id, status=status, started=started, attempts=attempts
        )
        if attempts < _max_attempts():
            requeue = {"status": Match.Status.QUEUED, "started": None, "finished": None}
            if unchanged.update(**requeue, queued=timezone.now()) != 1:
                return False
            _enqueue_on_commit(match_id=match_id, stored=True)
            return True
        if unchanged.update(
            status=Match.Status.FAILED, failure_reason=_gave_up(attempts), finished=timezone.now()
        ):
            settle_on_commit(Match.objects.get(pk=match_id))
        return False
