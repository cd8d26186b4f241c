"""A client generated from /api/schema/ by openapi-python-client (a pinned dev dependency)
imports and runs a bot author's whole flow against a live server, with no patch and no
option but the site's address and the token: sign up, a token, a bot, an upload, the
version's status, the leaderboard, a match, its log as bytes, a tournament entered and its
archive.

The workers are stood in for where the flow waits on them (the validation game's verdict, the
games played): the point is the API's shape as a generator reads it, not the sandbox.
"""

from __future__ import annotations

import csv
import importlib
import io
import os
import random
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine.log import verify
from tests.ladder.replays.test_replays import attach_log, game_log
from tests.ladder.tournaments.conftest import make_tournament, organiser, settle_games  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)

GENERATOR = Path(sys.executable).with_name("openapi-python-client")
PACKAGE = "grass_api_client"
BOT = Path(__file__).resolve().parents[3] / "bots" / "starters" / "python" / "bot.py"


@pytest.fixture
def quiet_workers(monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    """Uploads stay pending (the test gives the verdict), no task leaves the process."""
    from ladder.bots import tasks as bot_tasks

    settings.GRASS_VALIDATE_INLINE = False
    monkeypatch.setattr(bot_tasks.validate_version, "delay", lambda *args, **kwargs: None)


@pytest.fixture
def generated(live_server: Any, tmp_path: Path) -> Any:
    """The client package generated from the live server's schema, imported."""
    if not GENERATOR.exists():
        pytest.fail(f"openapi-python-client is a dev dependency: {GENERATOR} is missing")
    schema = tmp_path / "schema.json"
    schema.write_bytes(httpx.get(f"{live_server.url}/api/schema/?format=json").content)
    done = subprocess.run(
        [
            str(GENERATOR),
            "generate",
            "--path",
            str(schema),
            "--meta",
            "none",
            "--output-path",
            str(tmp_path / PACKAGE),
        ],
        cwd=tmp_path,
        # Its own ruff formats what it writes (next to it, as in the project's .venv).
        env={**os.environ, "PATH": f"{GENERATOR.parent}{os.pathsep}{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=240,
    )
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    # Every operation and response was understood: nothing left out of the client.
    assert "WARNING" not in said and "Unable to" not in said, said
    sys.path.insert(0, str(tmp_path))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(tmp_path))
        for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
            del sys.modules[name]


def api(name: str) -> Any:
    """An operation module of the generated client, `auth.auth_signup_create` say."""
    return importlib.import_module(f"{PACKAGE}.api.{name}")


def models() -> Any:
    return importlib.import_module(f"{PACKAGE}.models")


def test_a_generated_client_runs_an_authors_whole_flow(
    generated: Any,
    live_server: Any,
    quiet_workers: None,
    valid_version: Any,
    finished_match: Any,
    make_tournament: Any,  # noqa: F811
    owner: Any,
) -> None:
    from ladder.bots.models import BotVersion
    from ladder.ratings.services import rating_apply
    from ladder.tournaments.services import (
        tournament_progress,
        tournament_register,
        tournament_tick,
    )

    m = models()
    types = importlib.import_module(f"{PACKAGE}.types")
    anonymous = generated.Client(base_url=live_server.url)

    # Sign up, and the token of a username and password.
    password = "a long pass phrase"
    signed = api("auth.auth_signup_create").sync(
        client=anonymous, body=m.SignupInputRequest(username="newcomer", password=password)
    )
    assert isinstance(signed, m.SignupOutput), signed
    token = api("auth.auth_token_create").sync(
        client=anonymous, body=m.TokenInputRequest(username="newcomer", password=password)
    )
    assert isinstance(token, m.TokenOutput) and token.token == signed.token

    # Signed in as the generator makes it (its default `Bearer` prefix).
    me = generated.AuthenticatedClient(base_url=live_server.url, token=token.token)
    assert api("auth.auth_me_retrieve").sync(client=me).username == "newcomer"

    # A bot, and a first version uploaded.
    bot = api("bots.bots_create").sync(client=me, body=m.BotCreateInputRequest(name="first"))
    assert isinstance(bot, m.Bot) and bot.display_name == "newcomer/first"
    upload = m.BotVersionUploadInputRequest(
        file=types.File(payload=io.BytesIO(BOT.read_bytes()), file_name="bot.py")
    )
    version = api("bots.bots_versions_create").sync(bot_id=bot.id, client=me, body=upload)
    assert isinstance(version, m.Version), version
    assert version.status == m.VersionStatusEnum.PENDING and version.language == "python"

    # The version's status, until the validation game's verdict (given here by the test).
    status = api("versions.versions_retrieve")
    assert status.sync(version_id=version.id, client=me).status == m.VersionStatusEnum.PENDING
    BotVersion.objects.filter(pk=version.id).update(status=BotVersion.Status.VALID)
    checked = status.sync(version_id=version.id, client=me)
    assert checked.status == m.VersionStatusEnum.VALID and checked.bot == bot.id

    # A rated game (played here the quick way), the leaderboard, the match and its log.
    mine = BotVersion.objects.get(pk=version.id)
    others = [valid_version("alpha"), valid_version("beta")]
    match = finished_match([mine, *others], [1, 2, 3])
    attach_log(match, game_log(["first", "alpha", "beta"], seed=3))
    rating_apply(match=match)
    board = api("leaderboard.leaderboard_list").sync(client=anonymous)
    assert board.results[0].display_name == "newcomer/first"
    seen = api("matches.matches_retrieve").sync(match_id=match.pk, client=me)
    assert seen.seats[0].display_name == "newcomer/first"
    log = api("matches.matches_log_retrieve").sync(match_id=match.pk, client=me)
    data = log.payload.read()
    assert isinstance(data, bytes) and data[:2] == b"\x1f\x8b"  # the gzip file itself
    assert verify(io.BytesIO(data)).over  # the game, replayed through the engine

    # A tournament: entered through the API, played, and its archive downloaded.
    tournament = make_tournament(format="swiss", seats=2, swiss_rounds=1)
    entered = api("tournaments.tournaments_entries_create").sync(
        tournament_id=tournament.pk, client=me, body=m.TournamentEntriesInputRequest(bot=bot.id)
    )
    assert isinstance(entered, m.Entry), entered
    tournament_register(tournament=tournament, bot=valid_version("gamma").bot, user=owner)
    tournament_tick(tournament_id=tournament.pk, now=tournament.starts_at)
    settle_games(tournament, random.Random(1))
    tournament_progress(tournament_id=tournament.pk)
    archive = api("tournaments.tournaments_archive_retrieve").sync(
        tournament_id=tournament.pk, client=anonymous
    )
    with zipfile.ZipFile(io.BytesIO(archive.payload.read())) as files:
        standings = list(csv.reader(io.StringIO(files.read("standings.csv").decode())))
    assert {row[1] for row in standings[1:]} == {"first", "gamma"}


def test_the_token_scheme_the_schema_names_works_too(generated: Any, live_server: Any) -> None:
    """`tokenAuth` in the schema: the prefix `Token`, as `grass` and scripts send it."""
    m = models()
    anonymous = generated.Client(base_url=live_server.url)
    signed = api("auth.auth_signup_create").sync(
        client=anonymous, body=m.SignupInputRequest(username="scripted", password="pass phrase 2")
    )
    named = generated.AuthenticatedClient(
        base_url=live_server.url, token=signed.token, prefix="Token"
    )
    assert api("auth.auth_me_retrieve").sync(client=named).username == "scripted"
    wrong = generated.AuthenticatedClient(base_url=live_server.url, token="not-a-key")
    assert api("auth.auth_me_retrieve").sync_detailed(client=wrong).status_code == 401
