"""The circuit breaker of every worker (issue 36): the real tasks and services, under a fault
that starts after the worker's proof.

Seen on a site: with the image folder gone after a passed proof, one worker failed matches in
0.05-0.14 s each and gave up 313 in 10 min; with the shared media gone, another failed 222 in
8.5 min with a raw FileNotFoundError, without end. Here at most GRASS_HOST_FAULTS_IN_A_ROW
matches fail on the worker before it stops, none is charged (no attempt used, nothing rated,
no forfeit), and it takes work again once it proves itself. Real Celery workers doing so:
tests/e2e/test_breaker.py.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from celery.exceptions import Reject
from django.contrib.auth import get_user_model

from bots.runner.sandbox import SandboxUnavailable
from ladder import breaker
from ladder.bots.models import Bot, BotVersion
from ladder.bots.tasks import validate_version
from ladder.matches import services as match_services
from ladder.matches import workers
from ladder.matches.models import Match, MatchSeat
from ladder.matches.recovery import match_retry_failed
from ladder.matches.services import match_create
from ladder.matches.tasks import grass_stop_taking_work, run_match
from ladder.ratings.models import RatingChange

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def closed_breaker(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A worker with a closed breaker, proved just now, playing bots unsandboxed (the sandbox's
    own faults are simulated where they are the point; tests/e2e breaks a real image)."""
    settings.GRASS_SANDBOXED = False
    settings.GRASS_HOST_FAULTS_IN_A_ROW = 3
    settings.GRASS_SANDBOX_PROOF_SECONDS = 600
    proved = workers.proof_clock()
    workers.proof_clock_set(time.monotonic())
    breaker.breaker_close()
    yield
    breaker.breaker_close()
    workers.proof_clock_set(proved)


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The match ids sent to the workers again (run_match.delay), instead of sending them."""
    ids: list[int] = []
    monkeypatch.setattr(run_match, "delay", ids.append)
    return ids


def _matches(valid_version: Any, count: int) -> list[Match]:
    # Bots of three owners: a rated table seats one bot per seating circle.
    users = get_user_model().objects
    versions = [
        valid_version(name, by=users.create_user(username=f"owner-{name}"))
        for name in ("a", "b", "c")
    ]
    return [match_create(versions=versions, limits={"max_hands": 1}) for _ in range(count)]


def _charged_nothing(matches: list[Match]) -> None:
    for match in matches:
        match.refresh_from_db()
        assert (match.status, match.attempts) == (Match.Status.QUEUED, 0), match.failure_reason
    assert not RatingChange.objects.exists()
    assert not MatchSeat.objects.filter(forfeited=True).exists()
    assert not Bot.objects.filter(disabled__isnull=False).exists()


def test_a_fault_its_checks_do_not_see_stops_the_worker_after_three_matches(
    valid_version: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    sent: list[int],
    django_capture_on_commit_callbacks: Any,
) -> None:
    """The image folder gone after the proof: every box fails to open. The checks after each
    fault pass (the known bots' proof is not what broke here), so the third fault stops it."""
    matches = _matches(valid_version, 5)

    def image_gone(*args: Any, **kwargs: Any) -> None:
        raise SandboxUnavailable("the bots' runtime image is not built on this host")

    monkeypatch.setattr(match_services, "play_match", image_gone)
    with django_capture_on_commit_callbacks(execute=True):
        for match in matches[:3]:
            run_match(match.pk)
    assert breaker.breaker_open()
    assert "this worker stops taking work: 3 host faults in a row" in caplog.text
    assert "SandboxUnavailable: the bots' runtime image" in caplog.text
    # What it had reserved goes back to the queue unrun.
    for match in matches[3:]:
        with pytest.raises(Reject):
            run_match(match.pk)
    _charged_nothing(matches)
    assert sent == [match.pk for match in matches[:3]]  # given back to the queue at once
    for match in matches[:3]:
        assert match.host_faults == 1
        assert (
            "host fault on" in match.failure_reason and "SandboxUnavailable" in match.failure_reason
        )
    # Given back, not failed: the sweep's retry of failed matches has nothing to do.
    assert match_retry_failed() == []

    # The fault is gone: the worker proves itself, takes work again, and the match is rated.
    monkeypatch.undo()
    resumed: list[bool] = []
    assert breaker.breaker_reprove(
        prove=workers.worker_start_refusal, resume=lambda: resumed.append(True)
    )
    assert resumed == [True] and not breaker.breaker_open()
    run_match(matches[3].pk)
    played = Match.objects.get(pk=matches[3].pk)
    assert (played.status, played.attempts) == (Match.Status.FINISHED, 1)
    assert RatingChange.objects.filter(match=played).count() == 3


def test_one_success_between_faults_starts_the_count_again(
    valid_version: Any, monkeypatch: pytest.MonkeyPatch, sent: list[int]
) -> None:
    matches = _matches(valid_version, 5)
    real_play = match_services.play_match
    faults = iter([True, True, False, True, True])

    def sometimes(*args: Any, **kwargs: Any) -> Any:
        if next(faults):
            raise SandboxUnavailable("cannot make a box: no cgroup")
        return real_play(*args, **kwargs)

    monkeypatch.setattr(match_services, "play_match", sometimes)
    for match in matches:
        run_match(match.pk)
    assert not breaker.breaker_open()  # 2, then 0, then 2 in a row: never 3


def test_the_media_gone_after_the_proof_stops_the_worker_at_its_first_match(
    valid_version: Any,
    settings: Any,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    sent: list[int],
) -> None:
    """The shared media gone: the bots' files raise FileNotFoundError (a raw OSError, once not
    counted at all). The media check after the fault sees it, so the first fault stops it."""
    matches = _matches(valid_version, 3)
    media = settings.MEDIA_ROOT
    settings.MEDIA_ROOT = str(tmp_path / "mount-gone")
    run_match(matches[0].pk)
    assert breaker.breaker_open()
    assert "this worker stops taking work: the media storage" in caplog.text
    assert "FileNotFoundError" in caplog.text
    with pytest.raises(Reject):
        run_match(matches[1].pk)
    _charged_nothing(matches)

    # Still gone: the proof refuses and the worker stays stopped.
    settings.GRASS_BREAKER_PROOF_SECONDS = 0
    stopped = SimpleNamespace(calls=0)

    def stop_after_two(timeout: float) -> bool:
        stopped.calls += 1
        return stopped.calls > 2

    gave_up = breaker.breaker_reprove(
        prove=workers.worker_start_refusal,
        resume=lambda: None,
        stopped=SimpleNamespace(wait=stop_after_two),  # type: ignore[arg-type]
    )
    assert not gave_up and breaker.breaker_open()
    assert "this worker still takes no work: the media storage" in caplog.text

    settings.MEDIA_ROOT = media  # mounted again
    assert breaker.breaker_reprove(prove=workers.worker_start_refusal, resume=lambda: None)
    run_match(matches[1].pk)
    assert Match.objects.get(pk=matches[1].pk).status == Match.Status.FINISHED


def test_a_match_that_breaks_every_host_is_given_up_unrated(
    valid_version: Any, settings: Any, monkeypatch: pytest.MonkeyPatch, sent: list[int]
) -> None:
    """A host fault does not use up attempts, but a match that breaks every worker it reaches
    (a fault nobody foresaw, or a bot that found one) must not go round them for ever."""
    settings.GRASS_MATCH_MAX_HOST_FAULTS = 2
    settings.GRASS_HOST_FAULTS_IN_A_ROW = 100
    (match,) = _matches(valid_version, 1)

    def image_gone(*args: Any, **kwargs: Any) -> None:
        raise SandboxUnavailable("no image")

    monkeypatch.setattr(match_services, "play_match", image_gone)
    run_match(match.pk)
    run_match(match.pk)
    match.refresh_from_db()
    assert (match.status, match.attempts, match.host_faults) == (Match.Status.FAILED, 0, 2)
    assert match.failure_reason.startswith("gave up after 2 host faults")
    assert match_retry_failed() == []
    assert not RatingChange.objects.exists()


def test_a_validation_on_a_broken_host_stays_pending_and_is_sent_to_the_queue(
    owner: Any,
    example_file: Any,
    settings: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A quick worker without media: the upload's file cannot be read. The version stays
    pending (not the bot's fault), each fault counts, the third stops the worker, and a
    validation it still holds goes back to the queue unrun."""
    from ladder.bots.services import bot_create, bot_version_upload

    versions = [
        bot_version_upload(
            bot=bot_create(owner=owner, name=f"v{i}"),
            filename="bot.py",
            data=example_file("random"),
        )
        for i in range(4)
    ]
    settings.MEDIA_ROOT = str(tmp_path / "mount-gone")
    retried: list[dict[str, Any]] = []

    def retry(**options: Any) -> Exception:
        retried.append(options)
        return RuntimeError("sent again")

    monkeypatch.setattr(validate_version, "retry", retry)
    for version in versions[:3]:
        with pytest.raises(RuntimeError, match="sent again"):
            validate_version(version.pk)
    assert breaker.breaker_open()
    with pytest.raises(Reject):
        validate_version(versions[3].pk)
    assert {v.status for v in BotVersion.objects.filter(pk__in=[v.pk for v in versions])} == {
        BotVersion.Status.PENDING
    }
    # Sent again at once, to the queue: a countdown would make it an ETA message that this
    # worker keeps (and runs) itself.
    assert [options["countdown"] for options in retried] == [0, 0, 0]
    assert all(isinstance(options["exc"], FileNotFoundError) for options in retried)


def test_the_stop_command_cancels_every_queue_the_worker_reads(settings: Any) -> None:
    """What the worker's main process does when a pool process opens the breaker."""
    called: list[tuple[str, str]] = []
    consumer = SimpleNamespace(
        task_consumer=SimpleNamespace(
            queues=[SimpleNamespace(name="matches"), SimpleNamespace(name="challenges")]
        ),
        cancel_task_queue=lambda queue: called.append(("cancel", queue)),
        call_soon=lambda function, *args: function(*args),
    )
    answer = grass_stop_taking_work(SimpleNamespace(consumer=consumer), reason="3 host faults")
    assert called == [("cancel", "challenges"), ("cancel", "matches")]
    assert "no longer consuming from challenges, matches" in answer["ok"]


def test_an_upload_validated_in_the_request_stays_pending_on_any_host_fault(
    owner: Any, example_file: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GRASS_VALIDATE_INLINE (development, tests): a host fault other than the referee's own
    (here the image gone as a box opens) once escaped the request as a 500."""
    from ladder.bots import services as bot_services
    from ladder.bots.services import bot_create, bot_version_submit

    settings.GRASS_VALIDATE_INLINE = True

    def image_gone(*args: Any, **kwargs: Any) -> None:
        raise SandboxUnavailable("the bots' runtime image is not built on this host")

    monkeypatch.setattr(bot_services, "play_match", image_gone)
    bot = bot_create(owner=owner, name="gus")
    version = bot_version_submit(bot=bot, filename="bot.py", data=example_file("greedy"))
    assert version.status == BotVersion.Status.PENDING


def test_the_count_and_the_stop_are_the_workers_not_each_processs(settings: Any) -> None:
    """Celery's prefork pool forks its processes from the worker's main process, after this
    module was imported there: a fault in one process counts for all of them, and a stop seen
    by one is seen by all (else each of N processes would fail 3 matches before it stopped)."""
    import multiprocessing

    settings.GRASS_HOST_FAULTS_IN_A_ROW = 2
    fork = multiprocessing.get_context("fork")

    def one_fault() -> None:
        breaker.breaker_host_fault(SandboxUnavailable("no image"))

    for _ in range(2):  # two pool processes, one fault each
        child = fork.Process(target=one_fault)
        child.start()
        child.join(30)
        assert child.exitcode == 0
    assert breaker.breaker_open()  # seen by the main process, and by any process forked next


@pytest.mark.django_db(transaction=True)
def test_the_thread_that_proves_the_worker_again_closes_its_database_connection(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The proof of a stopped worker runs on a thread of its own (`grass-breaker`), whose
    checks read the database: the thread closes its connection when it ends (issue 37). Its
    connection is held here, so that only its closing, not the garbage collector, ends it."""
    from django.db import connection, connections

    from ladder.matches import tasks

    settings.GRASS_BREAKER_PROOF_SECONDS = 1
    held: list[Any] = []

    def reprove(*, prove: Any, resume: Any) -> bool:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            held.append((cursor.fetchone()[0], connections["default"]))
        resume()
        return True

    resumed: list[str] = []
    consumer = SimpleNamespace(
        call_soon=lambda call, *args: call(*args), add_task_queue=resumed.append
    )
    monkeypatch.setattr(tasks, "breaker_reprove", reprove)
    tasks._reprove_in_background(consumer, ["matches"])

    def session_open() -> bool:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [held[0][0]])
            return bool(cursor.fetchone()[0])

    deadline = time.monotonic() + 30
    while not resumed or session_open():
        assert time.monotonic() < deadline, f"the thread's session is still open: {held}"
        time.sleep(0.05)
    assert resumed == ["matches"]
