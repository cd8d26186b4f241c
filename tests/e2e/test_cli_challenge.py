"""`grass challenge` and `grass logs --debug` as an author runs them: the real console script
over HTTP to a live server, the challenge played by a real Celery worker in the sandbox (from
the `now` queue), unrated; then the bot's debug lines, by decision, downloaded; past the
daily quota, a one-line refusal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ladder.bots.models import BotVersion
from ladder.bots.services import bot_create, bot_version_upload
from ladder.challenges.models import Challenge
from ladder.matches.models import Match
from ladder.ratings.models import BotRating, RatingChange
from tests.e2e.test_cli_ladder import REPO, _one_line_error, _signed_up, grass

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("sandbox_ready", "redis_ready"),
]

THINKER = b'''
"""greedy, saying why at each decision (on stderr, through the SDK's debug helper)."""
from bots.sdk import Bot, Observation, debug, greedy, run


class Thinker(Bot):
    def choose(self, obs: Observation) -> str:
        choice = greedy.choose(obs)
        debug("thinking:", obs.phase, "->", choice)
        return choice


run(Thinker())
'''


def valid(owner: Any, name: str, data: bytes) -> BotVersion:
    """A bot with one version, marked valid (its validation game is not what is tested)."""
    bot = bot_create(owner=owner, name=name)
    version = bot_version_upload(bot=bot, filename="bot.py", data=data)
    BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.VALID)
    return version


def test_a_challenge_from_the_command_line_and_its_debug_lines(
    live_server: Any, settings: Any, celery: Any, django_user_model: Any, tmp_path: Path
) -> None:
    examples = django_user_model.objects.create_user(username="examples")
    valid(examples, "greedy", (REPO / "bots/examples/greedy/bot.py").read_bytes())
    token = _signed_up(live_server, "author")
    author = django_user_model.objects.get(username="author")
    valid(author, "thinker", THINKER)
    # Capacity 4, a quarter of it for challenges: one place.
    celery("worker", concurrency=2, GRASS_MATCH_CAPACITY="4")
    home = tmp_path / "config"
    logged = grass(home, "login", "--site", live_server.url, "--token", stdin=token + "\n")
    assert logged.returncode == 0, logged.stderr

    played = grass(home, "challenge", "thinker", "greedy", "--hands", "1", "--wait", "240")
    assert played.returncode == 0, played.stdout + played.stderr
    assert "asked: author/thinker v1, examples/greedy v1" in played.stdout
    assert "Match " in played.stdout and "unrated" in played.stdout
    challenge = Challenge.objects.get()
    match = Match.objects.get(pk=challenge.match_id)
    assert match.status == Match.Status.FINISHED and match.rated is False
    assert f"/matches/{match.pk}/" in played.stdout
    assert not RatingChange.objects.exists() and not BotRating.objects.exists()

    logs = tmp_path / "logs"
    fetched = grass(home, "logs", "thinker", str(logs), "--debug")
    assert fetched.returncode == 0, fetched.stderr
    assert (logs / f"match-{match.pk}.jsonl.gz").exists()
    text = (logs / f"match-{match.pk}.debug.txt").read_text()
    assert "=== seat" in text and "author/thinker v1" in text
    assert "--- request 1 (event " in text and "thinking: " in text
    assert "examples/greedy" not in text  # another owner's seat: not the author's to read

    settings.GRASS_CHALLENGES_PER_DAY = 1
    refused = grass(home, "challenge", "thinker", "examples/greedy")
    line = _one_line_error(refused, "challenge")
    assert "429" in line and "at most 1 in 24 hours" in line
    unknown = grass(home, "challenge", "thinker", "nobody/nothing")
    # Written as owner/NAME already: the message does not ask for it again.
    said = _one_line_error(unknown, "challenge")
    assert "nobody has no bot named 'nothing'" in said and "write owner/NAME" not in said
    mine = grass(home, "challenge", "thinker", "nothing")
    assert "no bot is named 'nothing' (write owner/NAME" in _one_line_error(mine, "challenge")
