"""A match's flow, read top to bottom: creating it with its seats (`match_create`), sending it
to the workers once it is committed (`enqueue_on_commit`), and running it (`match_run`): claim,
play, record, in that order.

What the flow hands on lives beside it, in the order a match reaches it:
- `claims` and `heartbeat`: the claim a run holds, and the sign of life it writes while it
  plays;
- `recording`: the played match written in one transaction (seats, result, status, ratings),
  tried again while the database is away;
- `files`: its log, replay and debug lines, which storage may refuse without failing it;
- `records`: its bots' records, added in the recording's transaction;
- `recovery`: the sweeps, which put lost and failed runs back in the queue under the retry
  rule (every claim counts one attempt, `max_attempts` of them) and send again the matches
  whose message was lost.

A run that fails for a host fault (`bots.runner.faults`) is not the match's: it gives its
attempt back and the match is queued again at once for a healthy peer (`match_give_back`), up
to GRASS_MATCH_MAX_HOST_FAULTS times.
"""

from __future__ import annotations

import logging
import random
import socket
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from bots.runner import runtime
from bots.runner.botfiles import BotSource
from bots.runner.faults import describe, is_host_fault
from bots.runner.match import play_match
from bots.runner.remote import RemoteAgent
from bots.runner.results import MatchStopped
from bots.runner.seats import TimeControl
from engine.rules import RULESETS, Variants
from ladder.bots.models import BotVersion
from ladder.bots.runtimes import expected_runtime, runtime_refusal
from ladder.bots.services import bot_version_runnable
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
            enqueue_on_commit(match_id=match.pk, lane=lane)
    return match


def _seat(match: Match, index: int, *, person: Any, version: BotVersion | None) -> MatchSeat:
    """Seat `index` of `match`: a person's, or a bot version's (with its bot, kept on the seat
    for the bot's index of matches)."""
    if person is not None:
        return MatchSeat(match=match, seat=index, player=person)
    assert version is not None
    return MatchSeat(match=match, seat=index, bot_version=version, bot_id=version.bot_id)


def enqueue_on_commit(*, match_id: int, lane: Lane | None = None, stored: bool = False) -> None:
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
            if failed and match.attempts >= max_attempts():
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
        enqueue_on_commit(match_id=match_id, stored=True)
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


def max_attempts() -> int:
    return settings.GRASS_MATCH_MAX_ATTEMPTS
