"""`grass challenge --wait` says where the challenge stands while it waits, then where its
match stands until a worker takes it: a line each time that changes, not one per poll. The
command's own code (`bots.remote.challenge`) over HTTP to a live server; no worker plays:
the test moves the challenge along between polls."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from rich.console import Console

from bots import remote
from bots.client import Credentials, save_credentials
from ladder.accounts.services import token_get_or_create
from ladder.bots.models import BotVersion
from ladder.challenges.models import Challenge
from ladder.challenges.services import challenge_dispatch
from ladder.matches.lanes import Lane
from ladder.matches.models import Match
from tests.ladder.challenges.test_challenge_services import waiting_challenges

pytestmark = pytest.mark.django_db(transaction=True)


def test_grass_challenge_wait_says_its_place_when_it_changes(
    live_server: Any,
    owner: Any,
    stranger: Any,
    mine: BotVersion,
    owned_by: Any,
    examples: dict[str, BotVersion],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    token = token_get_or_create(user=owner).key
    save_credentials(Credentials(site=live_server.url, username="ann", token=token))
    (his,) = waiting_challenges(stranger, owned_by(stranger, "his"), examples["greedy"], 1)
    ended = timezone.now()  # a challenge's game took 80 s lately
    Match.objects.create(
        lane=Lane.CHALLENGE,
        status=Match.Status.FINISHED,
        started=ended - timedelta(seconds=80),
        finished=ended,
    )

    polls = 0

    def between_polls(_: float) -> None:
        nonlocal polls
        polls += 1
        if polls == 2:  # both sent, his first: its match is queued before hers
            assert len(challenge_dispatch(capacity=8)) == 2
        if polls == 4:
            hers = Challenge.objects.exclude(pk=his.pk).get()
            Match.objects.filter(pk=hers.match_id).update(status=Match.Status.FAILED)

    console = Console(record=True, width=200, color_system=None)
    status = remote.challenge(
        console,
        "mine",
        ["greedy"],
        ruleset="modern",
        seating="random",
        hands=1,
        wait_s=60,
        sleep=between_polls,
    )
    printed = console.export_text()
    assert status == 1 and polls == 4, printed
    lines = [line for line in printed.splitlines() if "in the queue" in line]
    assert lines == [
        "waiting: 2nd in the queue, about 80 s",  # behind his challenge, once
        "queued: 2nd in the queue, about 80 s",  # behind his match, once
    ], printed
    assert "is failed (match " in printed


def test_the_line_says_the_place_and_the_estimate() -> None:
    def line(position: int, estimate: int | None, state: str = "waiting") -> str | None:
        queue = {"position": position, "ahead": position - 1, "estimate_seconds": estimate}
        return remote.queue_line({"state": state, "queue": queue})

    assert line(1, 0) == "waiting: 1st in the queue, starting in a moment"
    assert line(3, 40) == "waiting: 3rd in the queue, about 40 s"
    assert line(12, 600, "queued") == "queued: 12th in the queue, about 10 min"
    assert line(22, None) == "waiting: 22nd in the queue"
    assert remote.queue_line({"state": "running", "queue": None}) is None
