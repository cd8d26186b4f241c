"""GET/POST /api/bots/{id}/versions/ and GET /api/versions/{id}/source/."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from bots.runner.botfiles import MAX_FILE_BYTES, MAX_ZIP_BYTES
from ladder.bots.models import BotVersion
from ladder.bots.selectors import bot_version_playing
from ladder.bots.services import bot_create

pytestmark = pytest.mark.django_db

GREEDY = Path(__file__).resolve().parents[3] / "bots" / "examples" / "greedy" / "bot.py"
BROKEN = b"def choose(self, obs:\n    return 'end'\n"


def upload(client: Any, bot_id: int, name: str, data: bytes) -> Any:
    return client.post(
        f"/api/bots/{bot_id}/versions/",
        {"file": SimpleUploadedFile(name, data)},
        format="multipart",
    )


def test_the_owner_uploads_a_valid_bot(api: Any, owner: Any, sandbox_ready: None) -> None:
    bot = bot_create(owner=owner, name="gus")

    response = upload(api("owner"), bot.pk, "greedy.py", GREEDY.read_bytes())

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["number"], body["status"], body["validation_error"]) == (1, "valid", "")
    assert body["size"] == len(GREEDY.read_bytes())
    assert bot_version_playing(bot=bot).pk == body["id"]


def test_a_broken_upload_is_invalid_and_the_valid_version_still_plays(
    api: Any, valid_version: Any, sandbox_ready: None
) -> None:
    good = valid_version("mine")

    response = upload(api("owner"), good.bot_id, "bot.py", BROKEN)

    assert response.status_code == 201
    body = response.json()
    assert (body["number"], body["status"]) == (2, "invalid")
    assert "SyntaxError" in body["validation_error"]
    assert "Traceback (most recent call last)" in body["validation_error"]
    assert bot_version_playing(bot=good.bot) == good
    detail = api("anonymous").get(f"/api/bots/{good.bot_id}/").json()
    assert detail["versions"]["playing"]["number"] == 1
    assert detail["versions"]["latest"]["number"] == 2


def test_an_unsafe_zip_is_an_invalid_version_saying_why_and_is_never_unpacked(
    api: Any, owner: Any
) -> None:
    bot = bot_create(owner=owner, name="mine")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bot.py", "print('hi')\n")
        archive.writestr("../escape.py", "print('out')\n")

    response = upload(api("owner"), bot.pk, "evil.zip", buffer.getvalue())

    assert response.status_code == 201
    version = response.json()
    assert version["status"] == "invalid" and version["language"] == ""
    assert version["validation_error"].startswith("evil.zip: ")
    assert "outside the archive" in version["validation_error"]
    # Kept as sent, under a name of ours, and never unpacked: nothing escaped its folder.
    stored = BotVersion.objects.get()
    assert stored.status == BotVersion.Status.INVALID and stored.size == len(buffer.getvalue())
    assert stored.file.name.endswith("/upload") and stored.file.read() == buffer.getvalue()
    assert not list(Path(settings.MEDIA_ROOT).rglob("escape.py"))


@pytest.mark.parametrize(
    ("name", "size", "limit"),
    [
        ("big.py", MAX_FILE_BYTES + 1, MAX_FILE_BYTES),
        # Refused before it is read, still with the limit of a .py.
        ("huge.py", MAX_ZIP_BYTES + 1, MAX_FILE_BYTES),
        ("big.zip", MAX_ZIP_BYTES + 1, MAX_ZIP_BYTES),
    ],
)
def test_an_upload_over_the_size_limit_is_refused_naming_the_limit(
    api: Any, owner: Any, name: str, size: int, limit: int
) -> None:
    bot = bot_create(owner=owner, name="mine")

    response = upload(api("owner"), bot.pk, name, b"#" * size)

    assert response.status_code == 400
    assert response.json()["file"] == [f"{name} is {size} bytes; the limit is {limit}"]
    assert not BotVersion.objects.exists()
    assert not (Path(settings.MEDIA_ROOT) / "bots" / str(bot.pk)).exists()


def test_an_upload_that_is_not_a_bot_file_is_an_invalid_version(api: Any, owner: Any) -> None:
    """The API answers every well-formed upload with a version and its verdict (a schema cannot
    say which names and bytes make a bot, so none of them is a 400)."""
    bot = bot_create(owner=owner, name="mine")

    response = upload(api("owner"), bot.pk, "notes.txt", b"hello")

    assert response.status_code == 201
    assert response.json()["status"] == "invalid"
    refusal = response.json()["validation_error"]
    assert refusal.startswith("notes.txt: ")
    assert "upload a .zip, a single source file or an executable" in refusal
    assert all(language in refusal for language in ("python", "javascript", "cpp", "rust"))
    missing = api("owner").post(f"/api/bots/{bot.pk}/versions/", {}, format="multipart")
    assert missing.status_code == 400 and "file" in missing.json()


@pytest.mark.parametrize(("persona", "code"), [("stranger", 403), ("anonymous", 401)])
def test_only_the_owner_uploads(api: Any, owner: Any, persona: str, code: int) -> None:
    bot = bot_create(owner=owner, name="mine")

    response = upload(api(persona), bot.pk, "bot.py", GREEDY.read_bytes())

    assert response.status_code == code
    assert not BotVersion.objects.exists()


def test_uploading_to_a_missing_bot_is_404(api: Any) -> None:
    assert upload(api("owner"), 12345, "bot.py", GREEDY.read_bytes()).status_code == 404


def test_anyone_lists_a_bots_versions_newest_first(api: Any, valid_version: Any) -> None:
    version = valid_version("mine")
    BotVersion.objects.create(
        bot=version.bot, number=2, sha256="0" * 64, size=1, status=BotVersion.Status.INVALID
    )

    response = api("anonymous").get(f"/api/bots/{version.bot_id}/versions/")

    assert response.status_code == 200
    assert [(v["number"], v["status"]) for v in response.json()["results"]] == [
        (2, "invalid"),
        (1, "valid"),
    ]


@pytest.mark.parametrize(
    ("persona", "code"), [("owner", 200), ("stranger", 403), ("anonymous", 401)]
)
def test_only_the_owner_downloads_a_versions_source(
    api: Any, valid_version: Any, example_file: Any, persona: str, code: int
) -> None:
    version = valid_version("mine")

    response = api(persona).get(f"/api/versions/{version.pk}/source/")

    assert response.status_code == code
    if code == 200:
        assert b"".join(response.streaming_content) == example_file("random")
        assert response["Content-Disposition"] == 'attachment; filename="mine-v1.py"'


def test_a_missing_versions_source_is_404(api: Any) -> None:
    assert api("owner").get("/api/versions/12345/source/").status_code == 404


def test_one_versions_status_by_its_id(api: Any, owner: Any) -> None:
    """`GET /api/versions/{id}/`: what a client polls after an upload; the reason of an invalid
    version only for its owner (and staff), like every other view of versions."""
    bot = bot_create(owner=owner, name="mine")
    made = upload(api("owner"), bot.pk, "notes.txt", b"hello").json()

    mine = api("owner").get(f"/api/versions/{made['id']}/")
    assert mine.status_code == 200
    body = mine.json()
    assert (body["id"], body["bot"], body["number"], body["status"]) == (
        made["id"],
        bot.pk,
        1,
        "invalid",
    )
    assert body["validation_error"] == made["validation_error"]
    theirs = api("anonymous").get(f"/api/versions/{made['id']}/").json()
    assert theirs["status"] == "invalid" and theirs["validation_error"] is None
    assert api("owner").get("/api/versions/999999/").status_code == 404
