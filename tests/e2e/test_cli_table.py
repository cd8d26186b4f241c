"""`grass table` as a person runs it: the real console script, logged in with an API token,
starts a game through `POST /api/games/` on a real ASGI server (daphne: HTTP and WebSockets,
as `make run` serves them), and plays it over the match's socket opened with the same token,
typing the first legal action at each request on standard input; a real Celery worker plays
the match with the example bot in its sandbox. `--resume` with no game to join is a one-line
refusal.

Host-wide group: its Celery worker sweeps the host's dead boxes as it starts (this folder's
conftest.py); Redis and the database are the run's own.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ladder.bots.models import Bot
from ladder.matches.models import Match
from tests.e2e.test_cli_ladder import _signed_up, grass
from tests.ladder.live.conftest import channel_layer, layer_url  # noqa: F401  (fixture)

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("sandbox_ready", "redis_ready", "channel_layer"),
]


@pytest.mark.timeout(600)
def test_a_person_plays_the_ladders_bot_in_a_terminal(
    asgi_server: str,
    celery: Any,
    valid_version: Any,
    django_user_model: Any,
    tmp_path: Path,
) -> None:
    examples = django_user_model.objects.create_user(username="examples")
    bot = valid_version("rob", "greedy").bot
    Bot.objects.filter(pk=bot.pk).update(owner=examples, name="greedy")
    celery("worker", concurrency=1, GRASS_CHANNEL_LAYER_URL=layer_url())
    token = _signed_up(SimpleNamespace(url=asgi_server), "pia")
    home = tmp_path / "config"
    logged = grass(home, "login", "--site", asgi_server, "--token", stdin=token + "\n")
    assert logged.returncode == 0, logged.stderr

    none = grass(home, "table", "--resume")
    assert none.returncode == 1 and "you have no game queued or running" in none.stderr

    # The person always types 1: the first legal action.
    played = grass(home, "table", "greedy", "--hands", "1", "--seat", "0", stdin="1\n" * 2000)
    out = played.stdout
    assert played.returncode == 0, out[-3000:] + played.stderr
    match = Match.objects.get()
    assert match.status == Match.Status.FINISHED and not match.rated
    person = match.seats.get(seat=0)
    assert person.player.username == "pia" and person.strikes == 0 and not person.forfeited
    assert f"Game {match.pk}: you in seat 0 against examples/greedy (modern, 1 hand(s)" in out
    assert "Your move:" in out and "Sent: " in out
    assert "The game is over. Every hand, face up:" in out and "Result:" in out
    assert f"{asgi_server}/matches/{match.pk}/" in out
    assert "Traceback" not in played.stderr
