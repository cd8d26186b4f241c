"""A full media disk: an upload is refused in words that say it is the server's trouble (507)
and leaves no file and no version; a match that was played keeps its result, its log waits
in the database and the sweep writes it once there is room again.

Each test mounts a 256 KiB tmpfs of its own as MEDIA_ROOT (we run as root, like CI) and
fills it.
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import io
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from engine.log import read_log, replay
from ladder.bots.models import BotVersion
from ladder.bots.services import bot_create
from ladder.matches.models import Match, PendingLog
from ladder.matches.services import match_create
from ladder.matches.tasks import run_match, sweep_matches
from ladder.ratings.models import BotRating, RatingChange

pytestmark = pytest.mark.django_db

PAGE = 4096


@pytest.fixture
def small_media(tmp_path: Path, settings: Any) -> Iterator[Path]:
    """A 256 KiB tmpfs as MEDIA_ROOT for the test, unmounted after it."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "media"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], check=True)
    try:
        settings.MEDIA_ROOT = str(mount)
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def fill(mount: Path, *, leave: int = 0) -> Path:
    """Write a filler file until the filesystem refuses, then free `leave` bytes of it (so a
    larger write gets partly done before it fails). Returns the filler."""
    filler = mount / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            try:
                os.write(fd, b"\0" * PAGE)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                break
        os.ftruncate(fd, os.fstat(fd).st_size - leave)
    finally:
        os.close(fd)
    return filler


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def big_bot(example_file: Any) -> bytes:
    """A valid bot of 64 KiB: more than the room `fill(leave=...)` leaves."""
    data: bytes = example_file("random")
    return data + b"\n# " + b"x" * (64 * 1024 - len(data)) + b"\n"


@pytest.mark.parametrize("leave", [0, 2 * PAGE], ids=["nothing-free", "8k-free"])
def test_an_api_upload_to_a_full_disk_is_a_clear_507_and_leaves_nothing(
    api: Any, owner: Any, small_media: Path, example_file: Any, leave: int
) -> None:
    bot = bot_create(owner=owner, name="gus")
    fill(small_media, leave=leave)

    response = api("owner").post(
        f"/api/bots/{bot.pk}/versions/",
        {"file": SimpleUploadedFile("bot.py", big_bot(example_file))},
        format="multipart",
    )

    assert response.status_code == 507
    detail = response.json()["detail"]
    assert "out of storage space" in detail and "not a problem with your bot" in detail
    assert not BotVersion.objects.filter(bot=bot).exists()
    assert files_under(small_media) == {"filler"}  # no partial bot.py


def test_an_upload_page_to_a_full_disk_says_so_and_leaves_nothing(
    client: Client, owner: Any, small_media: Path, example_file: Any
) -> None:
    bot = bot_create(owner=owner, name="gus")
    fill(small_media, leave=2 * PAGE)
    client.force_login(owner)

    response = client.post(
        f"/bots/{bot.pk}/upload/", {"file": SimpleUploadedFile("bot.py", big_bot(example_file))}
    )

    assert response.status_code == 507
    html = response.content.decode()
    assert "out of storage space" in html and "try again later" in html
    assert 'type="file"' in html  # the form, to try again
    assert not BotVersion.objects.filter(bot=bot).exists()
    assert files_under(small_media) == {"filler"}


def test_once_there_is_room_the_same_upload_is_stored(
    api: Any, owner: Any, small_media: Path, example_file: Any, settings: Any
) -> None:
    settings.GRASS_VALIDATE_INLINE = False  # stored and left pending: no validation game here
    bot = bot_create(owner=owner, name="gus")
    filler = fill(small_media)
    data = big_bot(example_file)
    url = f"/api/bots/{bot.pk}/versions/"
    assert api("owner").post(url, {"file": SimpleUploadedFile("bot.py", data)}).status_code == 507

    filler.unlink()
    response = api("owner").post(url, {"file": SimpleUploadedFile("bot.py", data)})

    assert response.status_code == 201, response.json()
    version = BotVersion.objects.get(bot=bot)
    assert (version.number, version.status) == (1, BotVersion.Status.PENDING)
    assert (small_media / version.file.name).read_bytes() == data


def test_a_match_played_on_a_full_disk_is_recorded_and_its_log_written_later(
    valid_version: Any,
    owners: Any,
    small_media: Path,
    settings: Any,
    client: Client,
    admin_client: Client,
) -> None:
    # Plain subprocesses: this is about recording a played game; the sandbox has its own tests.
    settings.GRASS_SANDBOXED = False
    versions = [valid_version("a"), valid_version("b", by=owners(1)[0])]
    match = match_create(versions=versions, limits={"max_hands": 1})
    bots_stored = files_under(small_media)
    filler = fill(small_media)

    run_match(match.pk)

    # Played, recorded and rated: the log's trouble does not fail the match.
    match.refresh_from_db()
    assert (match.status, match.attempts, match.failure_reason) == (Match.Status.FINISHED, 1, "")
    seats = list(match.seats.order_by("seat"))
    assert sorted(s.place for s in seats)[0] == 1 and all(s.decisions > 0 for s in seats)
    assert RatingChange.objects.filter(match=match).count() == 2
    rated = BotRating.objects.filter(ruleset="modern")  # (classic: the pool's rows, no games)
    assert set(rated.values_list("games", flat=True)) == {1}
    # The log waits in the database, whole; nothing half-written on the disk.
    assert not match.log
    pending = PendingLog.objects.get(match=match)
    assert "No space left on device" in pending.last_error
    log = bytes(pending.data)
    assert hashlib.sha256(log).hexdigest() == match.log_sha256
    assert replay(read_log(io.BytesIO(gzip.decompress(log)))).result == match.result
    assert files_under(small_media) == bots_stored | {"filler"}

    # The API and the page say the log is not there yet, and nothing breaks.
    assert client.get(f"/api/matches/{match.pk}/").json()["log_pending"] is True
    download = client.get(f"/api/matches/{match.pk}/log/")
    assert download.status_code == 503 and download["Retry-After"] == "60"
    assert "not available yet" in download.json()["detail"]
    page = client.get(f"/matches/{match.pk}/")
    assert page.status_code == 200 and "The log is not available yet" in page.content.decode()
    assert client.get(f"/matches/{match.pk}/replay.json").status_code == 404
    waiting = admin_client.get("/admin/matches/pendinglog/")
    assert waiting.status_code == 200 and f"pending log of match {match.pk}" in waiting.text

    # The sweep tries while the disk is still full: the log keeps waiting, nothing is undone.
    sweep_matches()
    assert PendingLog.objects.filter(match=match).exists()
    assert files_under(small_media) == bots_stored | {"filler"}
    assert Match.objects.get(pk=match.pk).status == Match.Status.FINISHED

    # Room again: the next sweep writes the log, and it downloads like any other.
    filler.unlink()
    sweep_matches()
    match.refresh_from_db()
    assert not PendingLog.objects.filter(match=match).exists()
    assert (small_media / match.log.name).read_bytes() == log
    assert match.log.name == f"logs/{match.created:%Y/%m}/match-{match.pk}.jsonl.gz"
    download = client.get(f"/api/matches/{match.pk}/log/")
    assert download.status_code == 200 and b"".join(download.streaming_content) == log
    assert client.get(f"/api/matches/{match.pk}/").json()["log_pending"] is False
    assert "Download the log" in client.get(f"/matches/{match.pk}/").content.decode()
    assert RatingChange.objects.filter(match=match).count() == 2  # rated once, still
