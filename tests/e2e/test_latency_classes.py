"""Issue 35's latency classes with real workers in the sandbox: while the ladder's games keep
every match worker busy and more of them wait in the queue, a challenge and a newcomer's first
rated game are played by the `now` pool at once, not after the queue drains.

The layout is the Procfile's and deploy/systemd's: a match worker (`-Q matches`, one process,
playing five-hand games of `strong`, whose search spends its whole CPU clock on every
decision) and a now worker (`-Q now,challenges`). Six background games are queued: the match
worker plays them one by one for many minutes, so the test needs no clock of its own to know
the queue was still full when the other two ended.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("sandbox_ready", "redis_ready"),
]

PLAYED_TIMEOUT = 240.0
"""Seconds for a one-hand challenge or a random bot's first game to be played: a bound for a
hang on a loaded machine, not a figure (bench/latency.py measures those)."""


def _wait(check: Any, *, what: str, timeout: float = PLAYED_TIMEOUT) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}"
        time.sleep(0.5)
    return value


def test_a_challenge_and_a_first_game_never_wait_for_the_ladders_games(
    celery: Any, valid_version: Any, owners: Any
) -> None:
    from ladder.matches.lanes import Lane
    from ladder.matches.models import Match
    from ladder.matches.services import match_create
    from ladder.matchmaking.services import matchmaker_first_games
    from ladder.ratings.models import BotRating

    strong_a, strong_b, rival, challenger, newcomer_owner = owners(5)
    ladder = [
        valid_version("strong-a", "strong", by=strong_a),
        valid_version("strong-b", "strong", by=strong_b),
    ]
    rival_version = valid_version("rival", "random", by=rival)
    asker = valid_version("asker", "greedy", by=challenger)
    # None of these is new (seated before); the strong bots are far from a newcomer's rating,
    # so the fast lane seats a newcomer beside `rival` or `asker`.
    BotRating.objects.update(last_queued="2026-11-01T00:00:00Z")
    BotRating.objects.filter(bot_id__in=[v.bot_id for v in ladder]).update(mu=3000)
    background = [
        match_create(versions=ladder, limits={"max_hands": 5}, enqueue=True) for _ in range(6)
    ]
    games = celery("worker", queues="matches", concurrency=1, ready_timeout=240)
    celery("worker", queues="now,challenges", concurrency=2, ready_timeout=240)
    _wait(
        lambda: Match.objects.filter(pk__in=[m.pk for m in background], status="running").exists(),
        what="the match worker to take a background game",
    )

    challenge = match_create(
        versions=[asker, rival_version],
        rated=False,
        limits={"max_hands": 1},
        lane=Lane.CHALLENGE,
        enqueue=True,
    )
    newcomer = valid_version("newcomer", "random", by=newcomer_owner)
    (first,) = matchmaker_first_games(ruleset="modern", seats=2)
    seated = {s.bot_id for s in first.seats.all()}
    assert newcomer.bot_id in seated and seated & {rival_version.bot_id, asker.bot_id}

    for match in (challenge, first):
        _wait(
            lambda m=match: Match.objects.get(pk=m.pk).status in ("finished", "failed"),
            what=f"match {match.pk} ({Lane(match.lane).label})",
        )
        done = Match.objects.get(pk=match.pk)
        assert done.status == "finished", done.failure_reason
        print(f"{Lane(done.lane).label}: started {done.started - done.queued} after queued")
    # The ladder's games were still waiting: neither waited for them.
    still_queued = Match.objects.filter(pk__in=[m.pk for m in background], status="queued")
    assert still_queued.count() >= 4, list(Match.objects.values_list("pk", "status"))
    rating = BotRating.objects.get(bot_id=newcomer.bot_id, ruleset="modern")
    assert rating.games == 1  # rated, as any ladder game
    games.stop(timeout=5)  # its strong game would take minutes to finish
