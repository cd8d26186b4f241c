"""Lost work back in about a minute (issue 25): a running match's heartbeat, the sweep that
takes back a silent one, the resend of a queued match whose message the broker lost, a
recording that survives a lost database connection, and who played a match.

The faults are real where it matters: the database connection is cut by the server
(`pg_terminate_backend` from another session, what a PostgreSQL restart does to every client),
and the broker is the tests' Redis database. Celery workers killed mid-match are in tests/e2e.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.db.models.functions import Now
from django.utils import timezone
from psycopg import sql

from ladder.matches import recovery
from ladder.matches import services as match_services
from ladder.matches.claims import Claim
from ladder.matches.heartbeat import match_heartbeat
from ladder.matches.models import Match
from ladder.matches.recovery import match_requeue_stale, match_resend_lost
from ladder.matches.services import match_create, match_run
from ladder.matches.tasks import run_match
from ladder.ratings.models import BotRating, RatingChange
from tests import redis_server

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The match ids sent to the workers (run_match.delay), instead of sending them."""
    ids: list[int] = []
    monkeypatch.setattr(run_match, "delay", ids.append)
    return ids


def _claimed(match: Match, *, started_ago: timedelta, silent_for: timedelta | None) -> None:
    """A match claimed `started_ago`, whose worker last beat `silent_for` ago (None: a claim
    by a worker of an earlier release, which wrote no heartbeat)."""
    Match.objects.filter(pk=match.pk).update(
        status=Match.Status.RUNNING,
        started=timezone.now() - started_ago,
        attempts=1,
        heartbeat=None if silent_for is None else Now() - silent_for,
    )


def test_the_sweep_takes_back_a_silent_match_within_a_minute_and_never_a_beating_one(
    valid_version: Any, sent: list[int], settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """The heartbeat tells a dead worker's match (silent) from a long one (beating) in under a
    minute, and a match that beats is never taken back, however long ago it was claimed (issue
    35: a person's game claimed 30 minutes ago was taken back mid-game and played twice).
    GRASS_MATCH_STALE_SECONDS judges only a claim of an earlier release, with no heartbeat."""
    assert settings.GRASS_MATCH_SILENT_SECONDS <= 60 <= settings.GRASS_MATCH_STALE_SECONDS
    versions = [valid_version("a"), valid_version("b")]
    silent = match_create(versions=versions)
    _claimed(silent, started_ago=timedelta(minutes=2), silent_for=timedelta(seconds=50))
    long = match_create(versions=versions)
    _claimed(long, started_ago=timedelta(minutes=20), silent_for=timedelta(seconds=3))
    legacy = match_create(versions=versions)  # claimed before heartbeats: the old rule
    _claimed(legacy, started_ago=timedelta(minutes=20), silent_for=None)
    old_legacy = match_create(versions=versions)
    _claimed(old_legacy, started_ago=timedelta(hours=1), silent_for=None)
    # Beats, claimed two hours ago (past GRASS_MATCH_STALE_SECONDS): a person's long game.
    hours = match_create(versions=versions)
    _claimed(hours, started_ago=timedelta(hours=2), silent_for=timedelta(seconds=3))

    with django_capture_on_commit_callbacks(execute=True):
        requeued = match_requeue_stale()
    assert sorted(requeued) == sorted([silent.pk, old_legacy.pk])
    assert sorted(sent) == sorted([silent.pk, old_legacy.pk])
    statuses = dict(Match.objects.values_list("pk", "status"))
    assert statuses[long.pk] == statuses[legacy.pk] == statuses[hours.pk] == Match.Status.RUNNING
    assert statuses[silent.pk] == statuses[old_legacy.pk] == Match.Status.QUEUED


def test_the_database_start_time_is_read() -> None:
    """Heartbeats are not judged until the database has been up for GRASS_MATCH_SILENT_SECONDS
    (a restart silences every worker for a moment): the server's start time is readable."""
    assert recovery._database_started_within(timedelta(days=365 * 100)) is True
    assert recovery._database_started_within(timedelta(0)) is False


def _wait(check: Callable[[], object], *, what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
    return value


def _beat_of(match_id: int) -> Any:
    return Match.objects.filter(pk=match_id).values_list("heartbeat", flat=True).get()


def _other_sessions() -> list[int]:
    """Backend pids of the other sessions on the test database (the heartbeat's thread)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return [row[0] for row in cursor.fetchall()]


@contextmanager
def _database_refusing_connections() -> Iterator[None]:
    """The test database refuses new connections (superusers' too) while the block runs; the
    sessions open stay. Only this test's database (the server is shared), and from a session
    on another database, as PostgreSQL requires."""
    import psycopg

    db = connection.settings_dict
    name = sql.Identifier(db["NAME"])
    with psycopg.connect(
        host=db["HOST"] or "127.0.0.1",
        port=int(db["PORT"] or 5432),
        user=db["USER"] or "postgres",
        password=db["PASSWORD"] or None,
        dbname="postgres",
        autocommit=True,
    ) as admin:
        admin.execute(sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS false").format(name))
        try:
            yield
        finally:
            admin.execute(sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS true").format(name))


@pytest.mark.django_db(transaction=True)
def test_a_playing_worker_beats_through_a_lost_connection_and_stops_when_taken_back(
    valid_version: Any, settings: Any, caplog: Any
) -> None:
    settings.GRASS_MATCH_HEARTBEAT_SECONDS = 1
    match = match_create(versions=[valid_version("a"), valid_version("b")])
    _claimed(match, started_ago=timedelta(0), silent_for=timedelta(minutes=1))
    started = Match.objects.get(pk=match.pk).started
    assert started is not None
    claim = Claim(match_id=match.pk, started=started, attempt=1)
    first = _beat_of(match.pk)
    # Sessions open before the thread starts are not its own (a process of an earlier test on
    # this database may still be on its way out).
    before = set(_other_sessions())

    with caplog.at_level(logging.INFO), match_heartbeat(claim=claim) as lease:
        _wait(lambda: (b := _beat_of(match.pk)) != first and b, what="a beat")
        # The database refuses new connections for a while (as while it restarts): the beats
        # fail, and the first one after it accepts them again is written.
        with _database_refusing_connections():
            _wait(lambda: "heartbeat not written" in caplog.text, what="the failed beat")
            refused = _beat_of(match.pk)
        _wait(lambda: (b := _beat_of(match.pk)) != refused and b, what="a beat after it")
        assert "heartbeat written again" in caplog.text
        assert lease.lost is None
        # The sweep takes it back: this worker's claim no longer holds, and it stops beating.
        Match.objects.filter(pk=match.pk).update(status=Match.Status.QUEUED, started=None)
        _wait(lambda: "taken back from this worker" in caplog.text, what="the thread to stop")
        assert lease.lost is not None and "no longer holds" in lease.lost
    assert _beat_of(match.pk) is not None
    _wait(lambda: not set(_other_sessions()) - before, what="the thread's connection to close")


@pytest.fixture
def broker(settings: Any) -> Iterator[Any]:
    """This test process's broker database of the run's own Redis, emptied before and after."""
    client = redis_server.emptied(settings.CELERY_BROKER_URL)
    yield client
    redis_server.emptied(settings.CELERY_BROKER_URL).close()
    client.close()


def test_a_queued_match_is_sent_again_only_when_its_message_is_gone(
    valid_version: Any,
    broker: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
    settings: Any,
) -> None:
    """Today a lost message held its match slot for GRASS_MATCH_STALE_SECONDS (30 minutes);
    now a match queued for GRASS_MATCH_RESEND_SECONDS whose message is not in Redis is sent
    again at the next sweep, while one that only waits its turn (its message in the queue)
    is not sent twice."""
    versions = [valid_version("a"), valid_version("b")]
    waiting = match_create(versions=versions)
    run_match.apply_async((waiting.pk,))  # a real message, in the tests' Redis
    lost = match_create(versions=versions)  # its message was lost with a Redis restart
    fresh = match_create(versions=versions)  # queued a moment ago: its message is on its way
    ago = timezone.now() - timedelta(seconds=settings.GRASS_MATCH_RESEND_SECONDS + 5)
    Match.objects.filter(pk__in=[waiting.pk, lost.pk]).update(queued=ago)
    assert broker.llen("matches") == 1
    sent: list[int] = []
    monkeypatch.setattr(run_match, "delay", sent.append)

    with django_capture_on_commit_callbacks(execute=True):
        assert match_resend_lost() == [lost.pk]
    assert sent == [lost.pk]
    with django_capture_on_commit_callbacks(execute=True):
        assert match_resend_lost() == []  # its clock restarted; the others unchanged
    assert Match.objects.get(pk=fresh.pk).status == Match.Status.QUEUED


def test_without_a_readable_broker_only_the_long_queued_are_sent_again(
    valid_version: Any,
    sent: list[int],
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
    settings: Any,
) -> None:
    monkeypatch.setattr(recovery, "matches_waiting", lambda: None)
    versions = [valid_version("a"), valid_version("b")]
    minute = match_create(versions=versions)
    hour = match_create(versions=versions)
    Match.objects.filter(pk=minute.pk).update(queued=timezone.now() - timedelta(minutes=1))
    stale = timedelta(seconds=settings.GRASS_MATCH_STALE_SECONDS + 60)
    Match.objects.filter(pk=hour.pk).update(queued=timezone.now() - stale)
    with django_capture_on_commit_callbacks(execute=True):
        assert match_resend_lost() == [hour.pk]
    assert sent == [hour.pk]


def _backend_pid() -> int:
    connection.ensure_connection()
    return int(connection.connection.info.backend_pid)


def _cut_from_the_server(pid: int) -> None:
    """Terminate session `pid` from a session of its own, and wait until it is gone: what a
    PostgreSQL restart does to every connection in flight."""
    import psycopg

    db = connection.settings_dict
    with psycopg.connect(
        host=db["HOST"] or "127.0.0.1",
        port=int(db["PORT"] or 5432),
        user=db["USER"] or "postgres",
        password=db["PASSWORD"] or None,
        dbname=db["NAME"],
        autocommit=True,
    ) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
        deadline = time.monotonic() + 10
        while other.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone():
            assert time.monotonic() < deadline, "the session outlived its termination"
            time.sleep(0.05)


def _assert_recorded_once(match: Match) -> None:
    match.refresh_from_db()
    assert (match.status, match.attempts, match.failure_reason) == (
        Match.Status.FINISHED,
        1,
        "",
    )
    seats = match.seats.count()
    assert RatingChange.objects.filter(match=match).count() == seats
    rated = BotRating.objects.filter(ruleset=match.ruleset)
    assert sorted(rated.values_list("games", flat=True)) == [1] * seats
    with match.log.open("rb") as log:
        assert log.read()[:2] == b"\x1f\x8b"


@pytest.mark.django_db(transaction=True)
def test_a_match_played_while_the_database_restarted_is_recorded_once(
    valid_version: Any,
    owners: Any,
    sandbox_ready: None,
    monkeypatch: pytest.MonkeyPatch,
    caplog: Any,
) -> None:
    """Today the save failed on the dead connection: the match was failed and played again.
    The connection the worker claimed the match with is cut by the server while the bots
    play; the worker reconnects and records the game it played."""
    versions = [valid_version("a"), valid_version("b", by=owners(1)[0])]
    match = match_create(versions=versions, limits={"max_hands": 1})
    real_play = match_services.play_match

    def play_while_the_database_restarts(*args: Any, **kwargs: Any) -> Any:
        played = real_play(*args, **kwargs)
        _cut_from_the_server(_backend_pid())
        return played

    monkeypatch.setattr(match_services, "play_match", play_while_the_database_restarts)
    with caplog.at_level(logging.WARNING):
        match_run(match_id=match.pk)
    _assert_recorded_once(match)
    assert "the database failed while recording it" in caplog.text
    match.refresh_from_db()
    assert (match.host, match.pid) == (socket.gethostname(), os.getpid())


@pytest.mark.django_db(transaction=True)
def test_a_connection_lost_mid_record_leaves_no_file_behind_and_rates_once(
    valid_version: Any, owners: Any, sandbox_ready: None, caplog: Any
) -> None:
    """The cut comes inside the recording's transaction, after the log is stored and the
    ratings applied (the replay is made on its first view, not here): the transaction is
    rolled back, the next try removes the files it left at the match's paths and records
    everything once, under those paths."""
    versions = [valid_version("a"), valid_version("b", by=owners(1)[0])]
    match = match_create(versions=versions, limits={"max_hands": 1})
    cuts: list[int] = []

    from ladder.matches import recording

    rate = recording.rating_apply

    def cut_once(**kwargs: Any) -> None:
        rate(**kwargs)  # the ratings applied, then the connection cut
        if not cuts:
            cuts.append(_backend_pid())
            _cut_from_the_server(cuts[0])

    with caplog.at_level(logging.INFO), pytest.MonkeyPatch.context() as patch:
        patch.setattr(recording, "rating_apply", cut_once)
        match_run(match_id=match.pk)
    _assert_recorded_once(match)
    assert len(cuts) == 1 and "removed logs/" in caplog.text
    match.refresh_from_db()
    assert match.log.name.endswith(f"/match-{match.pk}.jsonl.gz")
    assert not match.replay
    _, logs = match.log.storage.listdir(os.path.dirname(match.log.name))
    assert [name for name in logs if name.startswith(f"match-{match.pk}")] == [
        f"match-{match.pk}.jsonl.gz"
    ]


def test_staff_see_which_host_and_process_played_a_match(
    valid_version: Any, api: Any, client: Any, django_user_model: Any
) -> None:
    from rest_framework.test import APIClient

    match = match_create(versions=[valid_version("a"), valid_version("b")])
    Match.objects.filter(pk=match.pk).update(
        status=Match.Status.RUNNING, started=timezone.now(), heartbeat=Now(), host="w7", pid=4242
    )
    staff = django_user_model.objects.create_user(username="op", password="pw", is_staff=True)
    as_staff = APIClient()
    as_staff.force_authenticate(staff)

    shown = as_staff.get(f"/api/matches/{match.pk}/").json()
    assert (shown["host"], shown["pid"]) == ("w7", 4242) and shown["heartbeat"]
    for persona in ("owner", "stranger", "anonymous"):
        hidden = api(persona).get(f"/api/matches/{match.pk}/").json()
        assert (hidden["host"], hidden["pid"], hidden["heartbeat"]) == (None, None, None)

    client.force_login(staff)
    assert "<code>w7</code>, process 4242" in client.get(f"/matches/{match.pk}/").text
    client.logout()
    assert "w7" not in client.get(f"/matches/{match.pk}/").text
