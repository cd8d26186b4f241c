"""Reliability of match runs: lost workers swept back, failed runs retried a bounded number of
times, and ratings applied exactly once whatever is run again."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db.models.functions import Now
from django.utils import timezone

from ladder.matches import services as match_services
from ladder.matches.models import Match
from ladder.matches.recovery import match_requeue_stale, match_retry_failed
from ladder.matches.services import match_create, match_run
from ladder.matches.tasks import run_match
from ladder.ratings.models import BotRating, RatingChange

pytestmark = pytest.mark.django_db

HOUR = timedelta(hours=1)


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The match ids sent to the workers (run_match.delay), instead of sending them."""
    ids: list[int] = []
    monkeypatch.setattr(run_match, "delay", ids.append)
    return ids


def _killed_worker(match: Match, *, attempts: int = 1, ago: timedelta = 2 * HOUR) -> None:
    """What a worker killed mid-match leaves behind: a claimed match that stays "running"."""
    Match.objects.filter(pk=match.pk).update(
        status=Match.Status.RUNNING, started=timezone.now() - ago, attempts=attempts
    )


def _ratings() -> list[tuple[int, float, int]]:
    # The rated rows (every valid bot also has rows with no games: the matchmaker's pool).
    rated = BotRating.objects.filter(games__gt=0)
    return list(rated.values_list("bot_id", "mu", "games").order_by("bot_id"))


def test_a_match_lost_by_its_worker_is_requeued_and_finishes_once(
    valid_version: Any,
    owners: Any,
    sandbox_ready: None,
    sent: list[int],
    django_capture_on_commit_callbacks: Any,
) -> None:
    versions = [valid_version("a"), valid_version("b", by=owners(1)[0])]
    match = match_create(versions=versions, limits={"max_hands": 1})
    _killed_worker(match)
    recent = match_create(versions=[valid_version("c"), valid_version("d")])
    _killed_worker(recent, ago=timedelta(minutes=5))

    with django_capture_on_commit_callbacks(execute=True):
        assert match_requeue_stale(older_than=HOUR) == [match.pk]
    assert sent == [match.pk]  # after commit; the recent one is left to its worker
    match.refresh_from_db()
    assert (match.status, match.started, match.attempts) == (Match.Status.QUEUED, None, 1)
    assert Match.objects.get(pk=recent.pk).status == Match.Status.RUNNING

    run_match(match.pk)
    run_match(match.pk)  # the original message, delivered again: nothing to do
    match.refresh_from_db()
    assert (match.status, match.attempts, match.failure_reason) == (Match.Status.FINISHED, 2, "")
    assert RatingChange.objects.filter(match=match).count() == 2
    assert {games for _, _, games in _ratings()} == {1}
    assert match_requeue_stale(older_than=timedelta(0)) == [recent.pk]  # not the finished one


def test_after_max_attempts_a_lost_match_is_failed_with_the_reason(
    valid_version: Any, sent: list[int], settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    assert settings.GRASS_MATCH_MAX_ATTEMPTS == 3
    match = match_create(versions=[valid_version("a"), valid_version("b")])
    _killed_worker(match, attempts=3)

    with django_capture_on_commit_callbacks(execute=True):
        assert match_requeue_stale(older_than=HOUR) == []
    match.refresh_from_db()
    assert match.status == Match.Status.FAILED
    assert match.failure_reason == "gave up after 3 attempts"
    assert match.finished is not None and sent == []
    assert match_retry_failed() == []  # no attempts left: failed for good


def test_a_failed_run_is_retried_until_max_attempts(
    valid_version: Any,
    monkeypatch: pytest.MonkeyPatch,
    sent: list[int],
    settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.GRASS_MATCH_MAX_ATTEMPTS = 2
    match = match_create(versions=[valid_version("a"), valid_version("b")])

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the referee tripped")

    monkeypatch.setattr(match_services, "play_match", broken)
    assert match_run(match_id=match.pk).attempts == 1
    with django_capture_on_commit_callbacks(execute=True):
        assert match_retry_failed() == [match.pk]
    assert sent == [match.pk]
    queued = Match.objects.get(pk=match.pk)
    # The last failure stays visible while the match waits for its next attempt.
    assert (queued.status, queued.failure_reason) == (
        Match.Status.QUEUED,
        "RuntimeError: the referee tripped",
    )

    failed = match_run(match_id=match.pk)
    assert (failed.status, failed.attempts) == (Match.Status.FAILED, 2)
    assert match_retry_failed() == [] and sent == [match.pk]
    assert not RatingChange.objects.exists()


def test_a_retried_match_that_finishes_is_rated_once_and_never_requeued(
    valid_version: Any,
    owners: Any,
    sandbox_ready: None,
    monkeypatch: pytest.MonkeyPatch,
    sent: list[int],
) -> None:
    versions = [valid_version("a"), valid_version("b", by=owners(1)[0])]
    match = match_create(versions=versions, limits={"max_hands": 1})
    real_play = match_services.play_match
    calls: list[int] = []

    def fails_once(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a hiccup of this code")
        return real_play(*args, **kwargs)

    monkeypatch.setattr(match_services, "play_match", fails_once)
    match_run(match_id=match.pk)
    match_retry_failed()
    finished = match_run(match_id=match.pk)
    assert (finished.status, finished.attempts, finished.failure_reason) == (
        Match.Status.FINISHED,
        2,
        "",
    )
    rated = _ratings()

    # Nothing puts a finished match back, and running it again changes nothing.
    assert match_retry_failed() == [] and match_requeue_stale(older_than=timedelta(0)) == []
    assert match_run(match_id=match.pk).attempts == 2
    assert len(calls) == 2
    assert RatingChange.objects.filter(match=match).count() == 2 and _ratings() == rated


def test_a_worker_thought_lost_cannot_record_over_the_newer_run(
    valid_version: Any,
    owners: Any,
    sandbox_ready: None,
    monkeypatch: pytest.MonkeyPatch,
    sent: list[int],
) -> None:
    """The slow worker's match is swept and played again by another worker meanwhile; when the
    slow one finishes, its claim is stale and it records nothing."""
    versions = [valid_version("a"), valid_version("b", by=owners(1)[0])]
    match = match_create(versions=versions, limits={"max_hands": 1})
    real_play = match_services.play_match
    depth: list[int] = []

    def slow_then_swept(*args: Any, **kwargs: Any) -> Any:
        depth.append(1)
        if len(depth) == 1:
            # While the first worker plays, its heartbeat falls silent (a network cut), the
            # sweep takes the match back and a second worker runs it.
            Match.objects.filter(pk=match.pk).update(heartbeat=Now() - timedelta(minutes=2))
            assert match_requeue_stale(silent_for=timedelta(minutes=1)) == [match.pk]
            assert match_run(match_id=match.pk).status == Match.Status.FINISHED
        return real_play(*args, **kwargs)

    monkeypatch.setattr(match_services, "play_match", slow_then_swept)
    late = match_run(match_id=match.pk)

    assert (late.status, late.attempts) == (Match.Status.FINISHED, 2)
    assert RatingChange.objects.filter(match=match).count() == 2
    assert {games for _, _, games in _ratings()} == {1}


def test_a_match_queued_too_long_is_sent_again_once_per_period(
    valid_version: Any, sent: list[int], django_capture_on_commit_callbacks: Any
) -> None:
    from ladder.matches.recovery import match_resend_lost

    lost = match_create(versions=[valid_version("a"), valid_version("b")])
    Match.objects.filter(pk=lost.pk).update(queued=timezone.now() - 2 * HOUR)
    fresh = match_create(versions=[valid_version("c"), valid_version("d")])

    with django_capture_on_commit_callbacks(execute=True):
        assert match_resend_lost(older_than=HOUR) == [lost.pk]
    assert sent == [lost.pk]  # the fresh one is left in the queue
    with django_capture_on_commit_callbacks(execute=True):
        assert match_resend_lost(older_than=HOUR) == []  # its clock restarted
    assert Match.objects.get(pk=fresh.pk).status == Match.Status.QUEUED


def test_a_starting_worker_takes_back_everything_only_when_told_to(
    valid_version: Any,
    sent: list[int],
    settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """`make run` after a Ctrl-C: the match in play stays "running" and a queued one's message
    may be gone with its Redis. With GRASS_RECOVER_ON_WORKER_START the next worker to start
    takes both back at once; without it (production, many workers) it touches nothing."""
    from ladder.matches.tasks import recover_on_worker_start

    versions = [valid_version("a"), valid_version("b")]
    cut_short = match_create(versions=versions)
    _killed_worker(cut_short, ago=timedelta(seconds=2))
    waiting = match_create(versions=versions)
    sent.clear()

    settings.GRASS_RECOVER_ON_WORKER_START = False
    recover_on_worker_start()
    assert sent == [] and Match.objects.get(pk=cut_short.pk).status == Match.Status.RUNNING

    settings.GRASS_RECOVER_ON_WORKER_START = True
    with django_capture_on_commit_callbacks(execute=True):
        recover_on_worker_start()
    assert Match.objects.get(pk=cut_short.pk).status == Match.Status.QUEUED
    assert sorted(sent) == sorted([cut_short.pk, waiting.pk])


def test_a_message_for_a_match_this_site_does_not_have_is_dropped_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Two `make run` checkouts share one Redis: a message of the other's database (or of a
    database since made afresh) raised Match.DoesNotExist with a traceback at every delivery."""
    import logging

    from ladder.bots.tasks import validate_version

    with caplog.at_level(logging.INFO):
        run_match(987654)
        validate_version(987655)
    assert "match 987654: no such match in this site's database" in caplog.text
    assert "version 987655: no such version in this site's database" in caplog.text
    assert not Match.objects.exists()
