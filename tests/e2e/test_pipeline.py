"""The whole pipeline with real parts: a live HTTP server, Celery workers and beat as separate
processes, Redis as the broker, PostgreSQL, bots in the OS sandbox.

upload (HTTP) -> validation (worker) -> matchmaking (beat) -> match (worker) -> log, ratings
-> leaderboard (HTTP); then the faults the design promises to survive: a worker killed in the
middle of a match, and the same task delivered twice.
"""

from __future__ import annotations

import hashlib
import io
import re
import socket
from datetime import timedelta
from typing import Any

import httpx
import pytest
from django.db.models.functions import Now

from bots.runner import home
from engine.log import verify
from tests.e2e.conftest import wait_until

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("sandbox_ready", "redis_ready"),
]

PASSWORD = "correct horse battery staple"

SLOW_BOT = b'''
"""slow: random moves, 40 ms each, so that a match lasts long enough to be interrupted."""
import random
import time

from bots.sdk import Bot, Observation, run


class Slow(Bot):
    name = "slow"

    def choose(self, obs: Observation) -> str:
        time.sleep(0.04)
        return random.choice(obs.legal)


run(Slow())
'''


def _signed_up(http: httpx.Client, username: str) -> httpx.Client:
    answer = http.post("/api/auth/signup/", json={"username": username, "password": PASSWORD})
    assert answer.status_code == 201, answer.text
    return httpx.Client(
        base_url=str(http.base_url),
        headers={"Authorization": f"Token {answer.json()['token']}"},
        timeout=30,
    )


def _uploaded_bot(author: httpx.Client, name: str, source: bytes) -> tuple[int, int]:
    bot = author.post("/api/bots/", json={"name": name})
    assert bot.status_code == 201, bot.text
    bot_id = bot.json()["id"]
    version = author.post(
        f"/api/bots/{bot_id}/versions/", files={"file": ("bot.py", source, "text/x-python")}
    )
    assert version.status_code == 201, version.text
    # Validation is the worker's job here: the upload answers before it is done.
    assert version.json()["status"] == "pending"
    return bot_id, version.json()["id"]


def test_upload_to_leaderboard_over_http(
    live_server: Any, settings: Any, celery: Any, example_file: Any
) -> None:
    settings.GRASS_VALIDATE_INLINE = False
    worker = celery("worker", concurrency=2)
    beat = celery("beat")
    http = httpx.Client(base_url=live_server.url, timeout=30)
    ann, bo = _signed_up(http, "ann"), _signed_up(http, "bo")
    bots = {
        "ann-greedy": _uploaded_bot(ann, "ann-greedy", example_file("greedy")),
        "bo-random": _uploaded_bot(bo, "bo-random", example_file("random")),
    }

    for name, (bot_id, _) in bots.items():
        version = wait_until(
            lambda bot_id=bot_id: next(
                (
                    v
                    for v in http.get(f"/api/bots/{bot_id}/versions/").json()["results"]
                    if v["status"] != "pending"
                ),
                None,
            ),
            timeout=120,
            what=f"{name}'s validation",
        )
        assert version["status"] == "valid", version  # type: ignore[index]

    def rated() -> list[dict[str, Any]] | None:
        rows = http.get("/api/leaderboard/", params={"ruleset": "modern"}).json()["results"]
        return rows if len(rows) == 2 and all(r["games"] >= 1 for r in rows) else None

    rows = wait_until(rated, timeout=180, what="both bots on the leaderboard")
    assert {r["bot"] for r in rows} == set(bots)  # type: ignore[union-attr]

    bot_id = bots["ann-greedy"][0]
    finished = http.get("/api/matches/", params={"bot": bot_id, "status": "finished"}).json()
    assert finished["count"] >= 1
    match = http.get(f"/api/matches/{finished['results'][-1]['id']}/").json()
    assert sorted(seat["bot"] for seat in match["seats"]) == sorted(bots)
    log = http.get(f"/api/matches/{match['id']}/log/")
    assert log.status_code == 200
    assert hashlib.sha256(log.content).hexdigest() == match["log_sha256"]
    # `grass verify` does this: replay every line through the engine, fail at a disagreement.
    assert verify(io.BytesIO(log.content)).over

    page = http.get("/")
    assert page.status_code == 200
    assert "ann-greedy" in page.text and "bo-random" in page.text

    # After a match the worker made boxes ahead for the next one (bots.runner.pool), and a
    # worker that stops destroys those it did not use: nothing of its boxes is left. (Only
    # its own: the host's leftovers may hold other programs' boxes, such as ready boxes of
    # another test process that ended without its exit handlers; seen once in CI.)
    worker.wait_for(r"made \d+ boxes ahead for the next match")
    beat.stop()
    worker.stop()
    made = {
        int(box)
        for listed in re.findall(r"ready: boxes ([\d, ]+)", worker.text())
        for box in listed.split(", ")
    }
    assert made, "the worker's log names no box it made ahead"
    assert sorted(made & set(home.leftovers())) == []


def _slow_match(valid_version: Any, owner: Any) -> Any:
    from ladder.bots.models import BotVersion
    from ladder.bots.services import bot_create, bot_version_upload
    from ladder.matches.services import match_create

    versions = []
    for name in ("slow-a", "slow-b"):
        version = bot_version_upload(
            bot=bot_create(owner=owner, name=name), filename="bot.py", data=SLOW_BOT
        )
        BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.VALID)
        versions.append(BotVersion.objects.get(pk=version.pk))
    versions.append(valid_version("steady"))
    # Two hands: long enough to be interrupted, short enough to play again at once.
    return match_create(versions=versions, limits={"max_hands": 2})


def _status(match_id: int) -> str:
    from ladder.matches.models import Match

    return Match.objects.get(pk=match_id).status


def test_a_worker_killed_mid_match_loses_nothing_and_rates_once(
    celery: Any, valid_version: Any, owner: Any
) -> None:
    from ladder.matches.models import Match
    from ladder.matches.tasks import run_match, sweep_matches
    from ladder.ratings.models import BotRating, RatingChange

    # Heartbeats every second, silent after three (production: 10 and 45), and the longest a
    # match may run left at its default (30 minutes), which is all the sweep had before.
    beats = {"GRASS_MATCH_HEARTBEAT_SECONDS": "1", "GRASS_MATCH_SILENT_SECONDS": "3"}
    match = _slow_match(valid_version, owner)
    doomed = celery("worker", **beats)
    run_match.delay(match.pk)
    wait_until(lambda: _status(match.pk) == "running", timeout=60, what="the match to start")
    doomed.wait_for(r"run_match\[.*\] received")
    claimed = Match.objects.get(pk=match.pk)
    wait_until(
        lambda: Match.objects.get(pk=match.pk).heartbeat != claimed.heartbeat,
        timeout=30,
        what="a heartbeat",
    )
    doomed.kill()

    match.refresh_from_db()
    assert match.status == "running" and match.attempts == 1
    assert not RatingChange.objects.filter(match=match).exists()
    # Who lost it: this host, one of the killed worker's pool processes.
    assert match.host == socket.gethostname() and match.pid not in (None, doomed.popen.pid)

    # The sweep (on beat in production, every 15 s) finds the match silent for longer than
    # GRASS_MATCH_SILENT_SECONDS and queues it again; a fresh worker plays it through.
    survivor = celery("worker", **beats)
    # Wait for exactly what the sweep checks: the last heartbeat older than that, by the
    # database's clock.
    silent = timedelta(seconds=int(beats["GRASS_MATCH_SILENT_SECONDS"]))
    wait_until(
        lambda: Match.objects.filter(pk=match.pk, heartbeat__lt=Now() - silent).exists(),
        timeout=30,
        what="the dead worker's match to fall silent",
    )
    sweep_matches.delay()
    survivor.wait_for(rf"requeued matches lost by their workers: \[{match.pk}\]", timeout=30)
    wait_until(lambda: _status(match.pk) == "finished", timeout=180, what="the replayed match")

    match.refresh_from_db()
    assert match.attempts == 2
    assert RatingChange.objects.filter(match=match).count() == 3
    # (Each bot also has a row with no games in the other ladder rulesets: the pool's.)
    assert all(r.games == 1 for r in BotRating.objects.filter(ruleset=match.ruleset))
    with match.log.open("rb") as log:
        assert verify(log).over
    assert Match.objects.count() == 1


def test_the_same_task_delivered_twice_plays_and_rates_once(
    celery: Any, valid_version: Any
) -> None:
    from ladder.matches.models import Match
    from ladder.matches.services import match_create
    from ladder.matches.tasks import run_match
    from ladder.ratings.models import BotRating, RatingChange

    match = match_create(
        versions=[valid_version(name) for name in ("a", "b", "c")], limits={"max_hands": 3}
    )
    worker = celery("worker", concurrency=2)
    # Two deliveries at once, taken by the worker's two processes side by side.
    run_match.delay(match.pk)
    run_match.delay(match.pk)
    worker.wait_for(r"run_match\[.*\] succeeded", times=2, timeout=180)

    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED and match.attempts == 1
    assert RatingChange.objects.filter(match=match).count() == 3
    ratings = {r.bot_id: (r.mu, r.games) for r in BotRating.objects.all()}
    assert all(games == 1 for _, games in ratings.values())

    # A third delivery long after the finish (a broker restored an unacknowledged message).
    run_match.delay(match.pk)
    worker.wait_for(r"run_match\[.*\] succeeded", times=3, timeout=60)
    assert {r.bot_id: (r.mu, r.games) for r in BotRating.objects.all()} == ratings
    assert RatingChange.objects.filter(match=match).count() == 3
    assert worker.count("not queued, nothing to do") == 2
