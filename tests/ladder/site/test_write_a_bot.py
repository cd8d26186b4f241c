"""The "Write a bot" page: reachable from every page, and everything it offers (the rules, the
protocol, a starter per language, the SDKs, the kit that installs `grass`) downloads from the
site itself, byte for byte what the workers run."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest

from bots.runner.languages import LANGUAGES

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    "path", ["/", "/tournaments/", "/replay/", "/login/", "/signup/", "/no-such-page/"]
)
def test_every_page_leads_to_it(client: Any, path: str) -> None:
    html = client.get(path).content.decode()
    assert '<a href="/write-a-bot/">Write a bot</a>' in html


def test_the_new_bot_page_leads_to_it(client: Any, owner: Any) -> None:
    client.force_login(owner)
    assert 'href="/write-a-bot/"' in client.get("/bots/new/").content.decode()


def test_the_api_docs_lead_home(client: Any) -> None:
    html = client.get("/api/docs/").content.decode()
    assert '<a class="brand" href="/">Grass ladder</a>' in html
    assert 'href="/write-a-bot/"' in html and "swagger-ui" in html
    # The site's way in from there too (the menu had only the leaderboard and Write a bot).
    assert 'href="/login/"' in html and 'href="/tournaments/"' in html


def links(html: str) -> list[str]:
    return re.findall(r'href="([^"]+)"', html)


def test_the_page_teaches_with_files_of_this_site_only(client: Any) -> None:
    response = client.get("/write-a-bot/")
    assert response.status_code == 200
    html = response.content.decode()
    for heading in ("The game", "How a bot talks", "Starters", "From a first upload to a rating"):
        assert heading in html
    # Every link stays on this site: its servers reach no other.
    assert all(link.startswith(("/", "#")) for link in links(html)), links(html)
    # A starter for every language the ladder runs.
    starters = [link for link in links(html) if link.startswith("/write-a-bot/starters/")]
    assert {link.split("/")[3] for link in starters} == set(LANGUAGES)
    # The commands name this site (as the browser reached it), for pip and `grass login`.
    assert "pip install http://testserver/write-a-bot/grass-kit.zip" in html
    assert "grass login --site http://testserver --token" in html


def test_each_download_is_the_file_the_workers_use(client: Any) -> None:
    html = client.get("/write-a-bot/").content.decode()
    for link in links(html):
        if link.startswith("/write-a-bot/starters/"):
            _, _, _, language, filename = link.split("/")
            response = client.get(link)
            assert response.status_code == 200, link
            assert response["Content-Disposition"] == f'attachment; filename="{filename}"'
            assert response.content == (REPO / "bots/starters" / language / filename).read_bytes()
    js = client.get("/write-a-bot/grass.js")
    assert js.content == (REPO / "bots/sdk/js/grass.js").read_bytes()


@pytest.mark.parametrize(("name", "source"), [("RULES", "engine"), ("PROTOCOL", "bots")])
def test_the_rules_and_the_protocol_are_served_whole(client: Any, name: str, source: str) -> None:
    response = client.get(f"/write-a-bot/{name}.md")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response.content == (REPO / source / f"{name}.md").read_bytes()
    # The rule texts are cited by their own file names, never a folder of some machine.
    assert not re.search(rb"`/(work|home|root|tmp)/", response.content)


@pytest.mark.parametrize(
    "path",
    [
        "/write-a-bot/starters/python/main.rs",
        "/write-a-bot/starters/cobol/bot.cob",
        "/write-a-bot/starters/python/..%2F..%2Fcli.py",
        "/write-a-bot/README.md",
    ],
)
def test_nothing_else_is_served(client: Any, path: str) -> None:
    assert client.get(path).status_code == 404


@pytest.mark.slow
def test_the_kit_installs_grass_and_plays(client: Any, tmp_path: Path) -> None:
    """The kit holds the engine and bots packages and a pyproject.toml naming `grass`; its
    files alone (no ladder, no checkout) play a game and verify its log."""
    response = client.get("/write-a-bot/grass-kit.zip")
    assert response["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        names = archive.namelist()
        assert "grass-kit/pyproject.toml" in names
        assert not any("/ladder/" in name or "__pycache__" in name for name in names)
        archive.extractall(tmp_path)
    kit = tmp_path / "grass-kit"
    project = tomllib.loads((kit / "pyproject.toml").read_text())
    assert project["project"]["scripts"] == {"grass": "bots.cli:main"}
    assert (kit / "bots/sdk/__init__.py").is_file() and (kit / "engine/RULES.md").is_file()

    def grass(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "bots.cli", *args],
            cwd=tmp_path,
            env={"PYTHONPATH": str(kit), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=120,
        )

    played = grass("play", "--players", "3", "--seed", "7", "--logs", "logs")
    assert played.returncode == 0, played.stderr
    verified = grass("verify", "logs/game-7.jsonl.gz")
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_the_upload_note_says_what_the_server_accepts(client: Any) -> None:
    """The note once said "Upload one source file under its name (bot.py…)", while any name
    with a language's ending is taken and staged as the entry file."""
    from bots.runner.botfiles import BadBot, source_from_upload
    from ladder.bots.forms import BotUploadForm

    html = " ".join(client.get("/write-a-bot/").content.decode().split())
    assert "under its name" not in html
    assert "Upload one source file under any name with its language's ending" in html
    assert "(<code>my_bot.py</code> as <code>bot.py</code>;" in html
    help_text = str(BotUploadForm().fields["file"].help_text)
    assert "any name ending in .py, .js, .cpp, .rs or .java" in help_text
    # What the two texts promise, as the server does it.
    bot = b"import sys\nfor line in sys.stdin:\n    print('end')\n"
    assert set(source_from_upload("b", "my_bot.py", bot).files) == {"bot.py"}
    assert "Any other file is refused" in html
    with pytest.raises(BadBot, match=r"upload a \.zip, a single source file or an executable"):
        source_from_upload("b", "notes.txt", b"hello")
