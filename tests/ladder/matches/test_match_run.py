"""Running a match end to end: claim, sandboxed game, stored log, seats, ratings."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
from typing import Any

import pytest

from engine.log import read_log, replay
from ladder.matches import recording
from ladder.matches import services as match_services
from ladder.matches.models import Match
from ladder.matches.services import match_create, match_run
from ladder.matches.tasks import run_match
from ladder.ratings.models import BotRating, RatingChange

pytestmark = pytest.mark.django_db


def test_a_match_runs_end_to_end_and_its_stored_log_replays(
    valid_version: Any, owners: Any, sandbox_ready: None
) -> None:
    # Two owners: a rated table seats one bot per seating circle (test_rated_seating.py).
    versions = [valid_version("gus", "greedy"), valid_version("ran", "random", by=owners(1)[0])]
    match = match_create(versions=versions, limits={"max_hands": 2})
    assert match.status == Match.Status.QUEUED
    assert sorted(s.bot_version_id for s in match.seats.all()) == sorted(v.pk for v in versions)

    run_match(match.pk)  # the Celery task, called in-process

    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    assert (match.attempts, match.failure_reason) == (1, "")
    with match.log.open("rb") as handle:
        stored = handle.read()
    assert hashlib.sha256(stored).hexdigest() == match.log_sha256
    game = replay(read_log(io.BytesIO(gzip.decompress(stored))))
    assert game.result == match.result
    header = read_log(io.BytesIO(gzip.decompress(stored)))[0]
    assert header["seed"] == match.seed

    seats = list(match.seats.order_by("seat"))
    assert [s.total for s in seats] == match.result["totals"]
    assert sorted(s.place for s in seats)[0] == 1
    assert all(s.decisions > 0 and not s.forfeited for s in seats)

    changes = RatingChange.objects.filter(match=match)
    assert changes.count() == 2
    assert abs(sum(c.delta for c in changes)) < 1e-9  # equal K: zero-sum
    for change in changes:
        rating = BotRating.objects.get(bot_id=change.bot_id, ruleset="modern")
        assert (rating.mu, rating.games) == (change.after, 1)
        assert change.games_before == 0 and change.before == 1500.0


def test_running_a_match_twice_plays_and_rates_it_once(
    valid_version: Any, owners: Any, sandbox_ready: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    versions = [valid_version("a"), valid_version("b", by=owners(1)[0])]
    match = match_create(versions=versions, limits={"max_hands": 1})
    match_run(match_id=match.pk)
    first = list(BotRating.objects.values_list("bot_id", "mu", "games").order_by("bot_id"))

    def must_not_play(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a finished match was played again")

    monkeypatch.setattr(match_services, "play_match", must_not_play)
    again = match_run(match_id=match.pk)

    assert again.status == Match.Status.FINISHED and again.attempts == 1
    assert RatingChange.objects.filter(match=match).count() == 2
    assert list(BotRating.objects.values_list("bot_id", "mu", "games").order_by("bot_id")) == first


def test_a_run_that_raises_marks_the_match_failed(
    valid_version: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    match = match_create(versions=[valid_version("a"), valid_version("b")])

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the referee tripped")

    monkeypatch.setattr(match_services, "play_match", broken)
    failed = match_run(match_id=match.pk)

    assert failed.status == Match.Status.FAILED
    assert failed.failure_reason == "RuntimeError: the referee tripped"
    assert failed.attempts == 1 and failed.finished is not None
    assert not RatingChange.objects.exists()
    assert not BotRating.objects.filter(games__gt=0).exists()
    # A failed match is not picked up again by a duplicate delivery.
    assert match_run(match_id=match.pk).attempts == 1


def test_match_create_checks_its_input_and_enqueues_after_commit(
    valid_version: Any, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = valid_version("a")
    with pytest.raises(ValueError, match="2 to 6 bots"):
        match_create(versions=[a])
    with pytest.raises(ValueError, match="two seats"):
        match_create(versions=[a, a])
    with pytest.raises(ValueError, match="unknown ruleset"):
        match_create(versions=[a, valid_version("b")], ruleset="chess")

    sent: list[int] = []
    monkeypatch.setattr(run_match, "delay", sent.append)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        match = match_create(versions=[a, valid_version("c")], enqueue=True)
        assert sent == []
    assert len(callbacks) == 1
    callbacks[0]()
    assert sent == [match.pk]
    assert 0 <= match.seed < 2**63


SLOW_ONCE = b"""
import random, time

from bots.sdk import Bot, run


class SlowOnce(Bot):
    name = "slow-once"

    def __init__(self):
        self.slept = False

    def choose(self, obs):
        if not self.slept:
            self.slept = True
            end = time.process_time() + 0.3  # 300 ms of CPU: the clock a decision runs on
            while time.process_time() < end:
                pass
        return random.choice(obs.legal)


run(SlowOnce())
"""


def test_a_timeout_that_costs_no_game_is_stored_with_its_reason(
    owner: Any, valid_version: Any, sandbox_ready: None
) -> None:
    from ladder.bots.models import BotVersion
    from ladder.bots.services import bot_create, bot_version_upload

    slow = bot_version_upload(
        bot=bot_create(owner=owner, name="slow"), filename="bot.py", data=SLOW_ONCE
    )
    BotVersion.objects.filter(pk=slow.pk).update(status=BotVersion.Status.VALID)
    match = match_create(
        versions=[slow, valid_version("ran", "random")],
        limits={"max_hands": 1},
        time_control={"decision_ms": 200, "bank_ms": 0},
    )
    match_run(match_id=match.pk)

    seat = match.seats.get(bot_version=slow)
    # Late once, by 100 ms of CPU: one strike of three, so the game goes on.
    assert not seat.forfeited and seat.strikes == 1
    assert seat.faults == {"timeout": 1}
    assert set(seat.fault_details) == {"timeout"}
    assert seat.fault_details["timeout"].startswith("no answer in ")


def test_first_fault_details_keeps_each_kinds_first_detail_cut_short() -> None:
    faults = [
        {"kind": "timeout", "detail": "no answer in 1200 ms"},
        {"kind": "illegal", "detail": "x" * 1000},
        {"kind": "timeout", "detail": "no answer in 3000 ms"},
        {"kind": "forfeit", "detail": "3 strikes"},
    ]
    details = recording.first_fault_details(faults)
    assert details == {
        "timeout": "no answer in 1200 ms",
        "illegal": "x" * recording.FAULT_DETAIL_CHARS,
    }


def test_the_worker_stores_the_log_only_and_the_first_view_computes_the_replay_once(
    valid_version: Any, sandbox_ready: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recording stores no replay (it was 4.4 times the log, and two thirds of recording's
    CPU): the first view computes it from the log and caches it; later views compute
    nothing."""
    from django.test import Client

    from engine.replay_frames import document
    from ladder.matches.decisions import decision_marks
    from ladder.replays import selectors as replay_selectors

    match = match_create(versions=[valid_version("a"), valid_version("b")], limits={"max_hands": 1})
    match_run(match_id=match.pk)
    match.refresh_from_db()
    assert match.log and not match.replay and not match.replay_engine
    with match.log.open("rb") as handle:
        events = read_log(io.BytesIO(gzip.decompress(handle.read())))

    computed: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        computed.append(1)
        return document(*args, **kwargs)

    monkeypatch.setattr(replay_selectors, "document", counted)
    expected = json.loads(json.dumps(document(events, None)))
    # With where its decisions are, for the viewer's steps (ladder/matches/decisions.py).
    expected["decisions"] = decision_marks(events, None)
    for _ in range(3):
        served = Client().get(f"/matches/{match.pk}/replay.json", HTTP_ACCEPT_ENCODING="gzip")
        assert served.status_code == 200 and served["Content-Encoding"] == "gzip"
        assert json.loads(gzip.decompress(served.content)) == expected
    assert computed == [1]
    match.refresh_from_db()
    assert match.viewed is not None  # retention keeps a watched match's log
