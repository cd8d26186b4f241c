"""match_create's options for tournaments and benchmarks, and the `match_settled` signal."""

from __future__ import annotations

from typing import Any

import pytest

from ladder.matches.models import Match
from ladder.matches.services import match_create, match_run
from ladder.matches.signals import match_settled
from ladder.ratings.models import RatingChange

pytestmark = pytest.mark.django_db


@pytest.fixture
def settled() -> Any:
    heard: list[tuple[int, str]] = []

    def listen(sender: Any, match_id: int, status: str, **_: Any) -> None:
        heard.append((match_id, status))

    match_settled.connect(listen)
    yield heard
    match_settled.disconnect(listen)


def test_seats_keep_the_order_given_and_the_seed_is_kept(valid_version: Any) -> None:
    versions = [valid_version(name) for name in ("a", "b", "c", "d")]
    for _ in range(5):  # a shuffle would misorder 4 seats in 23 of 24 cases
        match = match_create(versions=versions, shuffle=False, seed=1234)
        assert [s.bot_version_id for s in match.seats.order_by("seat")] == [v.pk for v in versions]
        assert match.seed == 1234


def test_seats_are_shuffled_by_default_and_recorded(valid_version: Any) -> None:
    versions = [valid_version(name) for name in ("a", "b", "c", "d")]
    orders = set()
    for _ in range(60):  # each bot misses seat 0 sixty times in a row with odds of 3e-8
        match = match_create(versions=versions)
        orders.add(tuple(s.bot_version_id for s in match.seats.order_by("seat")))
    assert all(sorted(order) == sorted(v.pk for v in versions) for order in orders)
    assert {order[0] for order in orders} == {v.pk for v in versions}


def test_an_unknown_time_control_field_is_refused_by_name(valid_version: Any) -> None:
    with pytest.raises(ValueError, match="unknown time control fields: think_forever"):
        match_create(
            versions=[valid_version("a"), valid_version("b")], time_control={"think_forever": 1}
        )


def test_an_unrated_match_plays_with_its_time_control_and_settles_without_ratings(
    valid_version: Any, sandbox_ready: None, settled: Any, django_capture_on_commit_callbacks: Any
) -> None:
    match = match_create(
        versions=[valid_version("a"), valid_version("b")],
        limits={"max_hands": 1},
        rated=False,
        time_control={"decision_ms": 2_000, "bank_ms": 5_000},
    )
    with django_capture_on_commit_callbacks(execute=True):
        match_run(match_id=match.pk)

    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    assert match.time_control == {"decision_ms": 2_000, "bank_ms": 5_000}
    assert not RatingChange.objects.filter(match=match).exists()
    assert settled == [(match.pk, "finished")]


def test_a_match_that_fails_its_last_attempt_is_settled_as_failed(
    valid_version: Any,
    settled: Any,
    django_capture_on_commit_callbacks: Any,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ladder.matches import services

    settings.GRASS_MATCH_MAX_ATTEMPTS = 2
    match = match_create(versions=[valid_version("a"), valid_version("b")])

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the sandbox is gone")

    monkeypatch.setattr(services, "play_match", broken)
    with django_capture_on_commit_callbacks(execute=True):
        match_run(match_id=match.pk)  # attempt 1 of 2: not settled, it will be retried
    assert settled == []
    Match.objects.filter(pk=match.pk).update(status=Match.Status.QUEUED)
    with django_capture_on_commit_callbacks(execute=True):
        match_run(match_id=match.pk)  # attempt 2 of 2: failed for good
    assert settled == [(match.pk, "failed")]
