"""Recovery by heartbeat, not age (issue 35): a person's game whose worker beats is never
taken back, however long it lasts, and is recorded once; a run whose claim was taken back stops
at once, sends nothing more and records nothing; a run stuck in one step stops beating, so
that the sweep takes it back as it takes back a dead worker's.

A person plays through the real channel layer (Redis), answered by a test standing in for the
browser's consumer; the sweep is the real `match_requeue_stale`, run in a thread of its own
every few hundred milliseconds while the game is played, with heartbeats every second and the
age rule's setting cut to one second (production: 10 s, 45 s, 30 minutes). A worker killed
mid-match, whose heartbeat stops, is taken back in tests/e2e/test_pipeline.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, transaction
from django.db.models.functions import Now

from bots.runner.fouls import safe_default
from ladder.matches.claims import match_claim
from ladder.matches.heartbeat import Progress, match_heartbeat
from ladder.matches.models import Match
from ladder.matches.recovery import match_requeue_stale
from ladder.matches.services import match_create, match_run
from ladder.matches.tasks import run_match
from ladder.relay import groups
from tests.ladder.live.conftest import channel_layer, run_async  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("channel_layer")]

SWEEP_EVERY_S = 0.3


@pytest.fixture
def short_clocks(settings: Any) -> Any:
    """Heartbeats every second, silent after three, the age rule at one second; bots as plain
    processes (the sandbox's teardown is tested in tests/bots), frames for people only."""
    settings.GRASS_SANDBOXED = False
    settings.GRASS_MATCH_HEARTBEAT_SECONDS = 1
    settings.GRASS_MATCH_SILENT_SECONDS = 3
    settings.GRASS_MATCH_STALE_SECONDS = 1
    settings.GRASS_LIVE_FRAMES_PER_SECOND = 0
    return settings


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The match ids the sweep sends back to the workers, instead of sending them."""
    ids: list[int] = []
    monkeypatch.setattr(run_match, "delay", ids.append)
    # A person's game goes to GRASS_PLAY_QUEUE by name.
    monkeypatch.setattr(run_match, "apply_async", lambda args, **_: ids.append(args[0]))
    return ids


class Sweeper:
    """The sweep on beat, sped up: `match_requeue_stale` every SWEEP_EVERY_S in a thread with
    its own database connection, keeping what it took back."""

    def __init__(self) -> None:
        self.runs = 0
        self.requeued: list[int] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            while not self.stop.wait(SWEEP_EVERY_S):
                self.requeued += match_requeue_stale()
                self.runs += 1
        finally:
            connection.close()

    def __enter__(self) -> Sweeper:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join(10)


def _person_game(owner: Any, valid_version: Any, *, decision_s: int) -> Match:
    """A one-hand game of `owner` (seat 0) against a random bot, as the Play page makes it."""
    return match_create(
        versions=[valid_version("r")],
        people={0: owner},
        limits={"max_hands": 1},
        rated=False,
        time_control={"remote_decision_ms": decision_s * 1000},
    )


def _children() -> set[int]:
    """The processes this one started that are still alive (the bots, without the sandbox)."""
    me, alive = os.getpid(), set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me and fields[0] != "Z":
            alive.add(int(stat.parent.name))
    return alive


def _worker(match_id: int) -> Match:
    """`match_run` as a worker's process runs it, closing its database connection after."""
    try:
        return match_run(match_id=match_id)
    finally:
        connection.close()


async def _play_as_person(
    match_id: int, *, answer_after_s: float, answer: bool = True, think_first_s: float = 0
) -> dict[str, Any]:
    """Run the match on a worker thread and be the person's page: every request is answered
    (after `answer_after_s`, the first after `think_first_s`) with a bot's safe default (games
    stay short). Returns the messages the page got, when the run ended, and what the run
    returned."""
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    me = await layer.new_channel()
    await layer.group_add(groups.seat(match_id, 0), me)
    run = asyncio.ensure_future(asyncio.to_thread(_worker, match_id))
    got: list[dict[str, Any]] = []
    answered: set[int] = set()
    while not run.done():
        try:
            message = await asyncio.wait_for(layer.receive(me), 0.2)
        except TimeoutError:
            continue
        got.append(message)
        if message["type"] != "live.frame" or not answer:
            continue
        request = json.loads(message["frame"])["request"]
        if request is None or request["id"] in answered:
            continue
        await asyncio.sleep(think_first_s if not answered else answer_after_s)
        answered.add(request["id"])
        act, legal = {"type": "live.act", "seat": 0, "request": request["id"]}, request["legal"]
        await layer.group_send(groups.worker(match_id), {**act, "action": safe_default(legal)})
    returned = await run
    ended = time.monotonic()
    # Whatever the run sent last is in the channel by now, or never comes.
    while True:
        try:
            got.append(await asyncio.wait_for(layer.receive(me), 1.0))
        except TimeoutError:
            break
    await layer.flush()
    return {"got": got, "returned": returned, "ended": ended, "answered": len(answered)}


def test_a_persons_long_game_whose_worker_beats_is_played_once_and_recorded_once(
    short_clocks: Any, owner: Any, valid_version: Any, sent: list[int]
) -> None:
    """The game lasts several times GRASS_MATCH_STALE_SECONDS and GRASS_MATCH_SILENT_SECONDS
    while the sweep runs every few hundred milliseconds: the old rule took it back as soon as
    it was claimed longer than GRASS_MATCH_STALE_SECONDS ago (then played it again, with
    the first run playing on); now it is never taken back, is claimed once and finishes
    once, and the person's page hears one end, "finished"."""
    match = _person_game(owner, valid_version, decision_s=30)
    with Sweeper() as sweeper:
        started = time.monotonic()
        # The person thinks over their first decision for longer than both settings together,
        # so the game outlasts them on any machine; then answers at once.
        think = short_clocks.GRASS_MATCH_STALE_SECONDS + short_clocks.GRASS_MATCH_SILENT_SECONDS
        out = run_async(_play_as_person(match.pk, answer_after_s=0.05, think_first_s=think + 1))
        lasted = out["ended"] - started
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED and match.failure_reason == ""
    # Long enough that both rules had their chance: the age rule's and the silence's.
    stale, silent = short_clocks.GRASS_MATCH_STALE_SECONDS, short_clocks.GRASS_MATCH_SILENT_SECONDS
    assert lasted > stale + silent and sweeper.runs >= 5
    assert sweeper.requeued == [] and sent == []
    assert match.attempts == 1 and match.log and match.result["hands"] == 1
    seats = list(match.seats.order_by("seat"))
    assert seats[0].player_id == owner.pk and seats[0].decisions >= out["answered"] > 10
    assert not seats[0].forfeited and seats[0].strikes == 0
    ends = [m for m in out["got"] if m["type"] == "live.end"]
    assert ends == [{"type": "live.end", "match": match.pk, "status": "finished"}]


def test_a_run_whose_claim_is_taken_back_stops_at_once_sends_nothing_and_records_nothing(
    short_clocks: Any, owner: Any, valid_version: Any, sent: list[int]
) -> None:
    """The person has 60 s a decision and does not answer. While the run waits on them, the
    sweep takes the match back (its heartbeat looked silent: a network cut, a stalled host):
    at its next beat the run finds its claim gone and stops, long before the person's time
    is up; its bot's process is gone, its page is sent no frame and no end after the take-back
    (the newer run speaks to it now), and the match is left as the sweep left it: queued for
    the next run, with nothing of this one recorded."""
    match = _person_game(owner, valid_version, decision_s=60)
    before = _children()
    taken: list[float] = []

    def take_back_once_asked() -> None:
        # The person's first request is out once the table shows the game: then the sweep.
        deadline = time.monotonic() + 30
        while not Match.objects.filter(pk=match.pk, status=Match.Status.RUNNING).exists():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(1.5)
        with transaction.atomic():
            # In one transaction, so that no beat slips in between: silent, then swept.
            Match.objects.filter(pk=match.pk).update(heartbeat=Now() - timedelta(minutes=1))
            assert match_requeue_stale() == [match.pk]
        taken.append(time.monotonic())
        connection.close()

    sweep = threading.Thread(target=take_back_once_asked, daemon=True)
    sweep.start()
    out = run_async(_play_as_person(match.pk, answer_after_s=0, answer=False))
    sweep.join(10)

    assert taken, "the take-back did not happen"
    # Within a few beats of the take-back, not after the person's 60 s.
    assert out["ended"] - taken[0] < 20
    frames = [m for m in out["got"] if m["type"] == "live.frame"]
    assert frames and json.loads(frames[0]["frame"])["request"]["id"] == 1
    assert all(m["type"] != "live.end" for m in out["got"])
    assert len(frames) == 1  # the request, and nothing from this run after it
    assert _children() <= before  # its bot's process is gone
    match.refresh_from_db()
    assert out["returned"].status == match.status == Match.Status.QUEUED
    assert (match.attempts, match.started, match.result, match.log.name) == (1, None, None, "")
    assert all(seat.place is None and seat.decisions == 0 for seat in match.seats.all())
    assert sent == [match.pk]  # sent back to the workers, for the next run


@pytest.fixture
def beats_every_second(settings: Any) -> Iterator[Any]:
    settings.GRASS_MATCH_HEARTBEAT_SECONDS = 1
    settings.GRASS_MATCH_SILENT_SECONDS = 3
    yield settings


def test_a_stuck_run_stops_beating_so_that_the_sweep_takes_it_back(
    beats_every_second: Any, valid_version: Any, sent: list[int]
) -> None:
    """With no age rule, a hung run (its heartbeat thread alive, its game not moving) would
    hold its match for ever: once it has not moved for longer than any step of its game may
    take, its heartbeat stops and its lease is lost, and the sweep takes it back."""
    match = match_create(versions=[valid_version("a"), valid_version("b")])
    claim = match_claim(match_id=match.pk)
    assert claim is not None
    progress = Progress(longest_step_s=1.5)
    with match_heartbeat(claim=claim, progress=progress) as lease:
        deadline = time.monotonic() + 30
        while lease.lost is None:
            assert time.monotonic() < deadline, "the stuck run kept its lease"
            time.sleep(0.1)
        assert lease.lost.startswith("stuck: no decision for")
        last = Match.objects.values_list("heartbeat", flat=True).get(pk=match.pk)
        time.sleep(2.5)  # more than two beats' time: none comes
        assert Match.objects.values_list("heartbeat", flat=True).get(pk=match.pk) == last
        assert match_requeue_stale(silent_for=timedelta(seconds=2)) == [match.pk]
    assert sent == [match.pk]


def test_a_newer_runs_table_stops_the_older_run_at_once(short_clocks: Any) -> None:
    """The older run may learn of the take-back before its next beat: the newer run's table
    announces its attempt to the match's worker group as it starts, and an older table gives
    its run up (through the lease, so the referee stops too); a table never gives itself up for
    its own or an older announcement, and a table with no run to tell goes silent itself."""
    from ladder.relay.table import LiveTable

    match_id = 4545
    told: dict[int, list[str]] = {1: [], 2: []}
    older = LiveTable(
        match_id=match_id,
        people={0: "ann"},
        frames_per_second=0,
        attempt=1,
        superseded=told[1].append,
    )
    newer = LiveTable(
        match_id=match_id,
        people={0: "ann"},
        frames_per_second=0,
        attempt=2,
        superseded=told[2].append,
    )
    bystander = LiveTable(match_id=match_id, people={0: "ann"}, frames_per_second=0, attempt=1)
    try:
        older._kick()  # its thread starts, announces attempt 1 and listens
        bystander._kick()
        time.sleep(1.0)
        assert told == {1: [], 2: []} and not bystander.abandoned
        newer._kick()
        deadline = time.monotonic() + 15
        while not told[1] or not bystander.abandoned:
            assert time.monotonic() < deadline, "the older tables did not hear the newer one"
            time.sleep(0.05)
        assert told[1] == ["superseded: attempt 2 of the match started its live table"]
        assert told[2] == [] and not newer.abandoned
    finally:
        for table in (older, newer, bystander):
            table.close()
