"""`grass login`, `submit`, `status`, `matches` and `logs` as a bot author runs them: the real
console script in a subprocess, over HTTP to a live server, uploads validated by a real Celery
worker (the version is `pending` until the worker's verdict, which `submit` waits for)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "correct horse battery staple"

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("sandbox_ready", "redis_ready"),
]

CRASHER = b'''
"""crashes when asked its first move: a verdict with a reason to show."""
from bots.sdk import Bot, Observation, run


class Crasher(Bot):
    def choose(self, obs: Observation) -> str:
        raise SystemExit("no idea what to play: " + obs.phase)


run(Crasher())
'''


def grass(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """The `grass` command with its own config folder (XDG_CONFIG_HOME)."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(home), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "bots.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=REPO,
    )


def _signed_up(live_server: Any, username: str) -> str:
    answer = httpx.post(
        f"{live_server.url}/api/auth/signup/",
        json={"username": username, "password": PASSWORD},
        timeout=30,
    )
    assert answer.status_code == 201, answer.text
    token: str = answer.json()["token"]
    return token


def _one_line_error(result: subprocess.CompletedProcess[str], command: str) -> str:
    """A failure says what went wrong on one line of stderr, without a traceback."""
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"grass {command}: "), result.stderr
    return lines[0]


def _play_matches(bot_name: str, owner_name: str, valid_version: Any, count: int) -> None:
    """Rated matches between the CLI author's bot and two others, played and recorded by the
    ladder's own service (sandboxed), as a worker would."""
    from ladder.bots.models import BotVersion
    from ladder.matches.services import match_create, match_run

    mine = BotVersion.objects.filter(bot__name=bot_name, bot__owner__username=owner_name).latest(
        "number"
    )
    others = [valid_version("rival-a", "greedy"), valid_version("rival-b", "random")]
    for _ in range(count):
        match = match_create(versions=[mine, *others], limits={"max_hands": 2})
        match_run(match_id=match.pk)


def test_login_submit_status_matches_logs(
    live_server: Any, settings: Any, celery: Any, valid_version: Any, tmp_path: Path
) -> None:
    settings.GRASS_VALIDATE_INLINE = False
    celery("worker")
    _signed_up(live_server, "cli-author")
    home = tmp_path / "config"

    logged = grass(
        home, "login", "--site", live_server.url, "--user", "cli-author", stdin=PASSWORD + "\n"
    )
    assert logged.returncode == 0, logged.stderr
    assert "cli-author" in logged.stdout
    stored = home / "grass" / "credentials.json"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert PASSWORD not in stored.read_text()

    # The version is pending until the worker plays its validation game; submit waits for it.
    submitted = grass(
        home, "submit", str(REPO / "bots/examples/greedy/bot.py"), "--bot", "mine", "--create"
    )
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    assert "Created bot cli-author/mine" in submitted.stdout
    assert "v1 is valid" in submitted.stdout

    # A folder is sent as a .zip of its files.
    folder = tmp_path / "zipped"
    folder.mkdir()
    (folder / "bot.py").write_bytes((REPO / "bots/examples/random/bot.py").read_bytes())
    again = grass(home, "submit", str(folder), "--bot", "mine")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "zipped.zip" in again.stdout and "v2 is valid" in again.stdout

    _play_matches("mine", "cli-author", valid_version, count=2)

    status = grass(home, "status")
    assert status.returncode == 0, status.stderr
    row = next(line for line in status.stdout.splitlines() if "cli-author/mine" in line)
    assert "v2" in row and "modern" in row
    assert row.split("│")[7].strip() == "2"  # games rated on the modern board

    recent = grass(home, "matches", "mine")
    assert recent.returncode == 0, recent.stderr
    rows = [line for line in recent.stdout.splitlines() if "ann/rival-a" in line]
    assert len(rows) == 2
    assert all("/3" in r and "finished" in r for r in rows)  # a place out of three seats
    assert all(any(c in r for c in "+-") for r in rows)  # a rating change

    logs = tmp_path / "logs"
    fetched = grass(home, "logs", "mine", str(logs), "--last", "20")
    assert fetched.returncode == 0, fetched.stderr
    files = sorted(logs.glob("match-*.jsonl.gz"))
    assert len(files) == 2
    verified = grass(home, "verify", str(files[0]))
    assert verified.returncode == 0 and "OK" in verified.stdout, verified.stderr
    again_logs = grass(home, "logs", "mine", str(logs))
    assert "0 log(s) downloaded" in again_logs.stdout and "2 already there" in again_logs.stdout

    # Another owner's bot, by owner/name.
    theirs = grass(home, "status", "ann/rival-a")
    assert theirs.returncode == 0 and "ann/rival-a" in theirs.stdout, theirs.stderr


def test_an_invalid_version_shows_why(
    live_server: Any, settings: Any, celery: Any, tmp_path: Path
) -> None:
    settings.GRASS_VALIDATE_INLINE = False
    celery("worker")
    token = _signed_up(live_server, "unlucky")
    home = tmp_path / "config"
    logged = grass(home, "login", "--site", live_server.url, "--token", stdin=token + "\n")
    assert logged.returncode == 0, logged.stderr
    assert "as unlucky" in logged.stdout
    crasher = tmp_path / "crasher.py"
    crasher.write_bytes(CRASHER)
    result = grass(home, "submit", str(crasher), "--bot", "crash", "--create")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "v1 is invalid" in result.stdout
    assert "no idea what to play" in result.stdout  # the owner sees the bot's own stderr
    # No match yet: said in words, not as "the last 0 matches" over an empty table.
    none = grass(home, "matches", "crash")
    assert none.returncode == 0, none.stderr
    assert "unlucky/crash has played no match yet" in none.stdout


def test_one_line_errors(live_server: Any, settings: Any, tmp_path: Path) -> None:
    home = tmp_path / "config"
    wrong = grass(home, "login", "--site", live_server.url, "--token", stdin="not-a-token\n")
    said = _one_line_error(wrong, "login")
    assert "refused the credentials" in said and "API token page" in said
    assert not (home / "grass" / "credentials.json").exists()

    _signed_up(live_server, "typo")
    password = grass(home, "login", "--site", live_server.url, "--user", "typo", stdin="wrong\n")
    assert "Unable to log in" in _one_line_error(password, "login")

    unreachable = grass(home, "login", "--site", "http://127.0.0.1:9", "--token", stdin="x\n")
    assert "cannot reach http://127.0.0.1:9" in _one_line_error(unreachable, "login")

    nobody = grass(home, "status")
    assert "not logged in" in _one_line_error(nobody, "status")

    token = _signed_up(live_server, "refused")
    assert grass(home, "login", "--site", live_server.url, "--token", stdin=token).returncode == 0
    # The token on the command line too, as the Write a bot page shows it (it was a flag only:
    # "unrecognized arguments").
    given = grass(home, "login", "--site", live_server.url, "--token", token)
    assert given.returncode == 0, given.stderr
    assert "as refused" in given.stdout
    notes = tmp_path / "notes.txt"
    notes.write_text("not a bot")
    upload = grass(home, "submit", str(notes), "--bot", "mine", "--create")
    # Stored as an invalid version that says why (the server's own reason), at once.
    assert upload.returncode == 1, upload.stdout + upload.stderr
    assert "v1 is invalid" in upload.stdout
    assert "notes.txt: upload a .zip, a single source file or an executable" in upload.stdout
    missing = grass(home, "submit", str(notes), "--bot", "nothing-of-that-name")
    assert "no bot named 'nothing-of-that-name'" in _one_line_error(missing, "submit")

    # An account at its limit of versions pending validation: the site's 429, said plainly.
    from ladder.bots.models import Bot
    from ladder.bots.services import bot_version_upload

    mine = Bot.objects.get(owner__username="refused", name="mine")
    greedy = (REPO / "bots/examples/greedy/bot.py").read_bytes()
    for _ in range(settings.GRASS_PENDING_VERSIONS_PER_ACCOUNT):
        bot_version_upload(bot=mine, filename="bot.py", data=greedy)
    limited = grass(home, "submit", str(REPO / "bots/examples/greedy/bot.py"), "--bot", "mine")
    line = _one_line_error(limited, "submit")
    assert "refused (429, too many requests): Too many versions waiting for validation" in line

    # A token revoked on the site after login.
    from rest_framework.authtoken.models import Token

    Token.objects.filter(user__username="refused").delete()
    revoked = grass(home, "status")
    assert "refused the credentials" in _one_line_error(revoked, "status")
