"""Bot runtimes on the site: compiled languages built at validation (a failed build is an
invalid version with the compiler's output, shown to the owner only), builds stored
content-addressed per runtime image and used by every match, the image recorded on the match
and in its log, and a worker on another image refusing matches and validations."""

from __future__ import annotations

import gzip
import io
import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bots.runner import runtime
from engine.log import read_log, replay
from ladder.bots.models import BotBuild, BotVersion
from ladder.bots.services import (
    bot_create,
    bot_version_runnable,
    bot_version_submit,
    bot_version_upload,
    bot_version_validate,
)
from ladder.matches.models import Match
from ladder.matches.services import match_create, match_run

pytestmark = pytest.mark.django_db

STARTERS = Path(__file__).resolve().parents[3] / "bots" / "starters"


def submit(owner: Any, name: str, filename: str, data: bytes) -> BotVersion:
    bot = bot_create(owner=owner, name=name)
    return bot_version_submit(bot=bot, filename=filename, data=data)


@pytest.mark.slow
def test_a_cpp_bot_is_built_at_validation_and_its_build_is_stored_once(
    owner: Any, sandbox_ready: None, settings: Any
) -> None:
    settings.GRASS_VALIDATE_INLINE = True
    source = (STARTERS / "cpp" / "bot.cpp").read_bytes()
    version = submit(owner, "cpp", "mine.cpp", source)
    assert (version.status, version.language) == ("valid", "cpp"), version.validation_error
    build = BotBuild.objects.get(version=version)
    assert build.ok and build.runtime == runtime.identity() and build.artifact_name == "bot"
    assert build.artifact.name == f"artifacts/{build.artifact_sha256[:2]}/{build.artifact_sha256}"
    # The same source again: a new version, a new build record, the same stored artifact.
    again = bot_version_submit(bot=version.bot, filename="bot.cpp", data=source)
    assert BotBuild.objects.get(version=again).artifact.name == build.artifact.name


def test_a_build_that_fails_is_an_invalid_version_with_the_compilers_output(
    owner: Any, stranger: Any, api: Any, sandbox_ready: None, settings: Any
) -> None:
    settings.GRASS_VALIDATE_INLINE = True
    version = submit(owner, "broken", "bot.cpp", b"int main( {\n")
    assert version.status == "invalid"
    assert version.validation_error.startswith("the build failed; the compiler's output")
    assert "bot.cpp:1" in version.validation_error and "error" in version.build_log
    assert not BotBuild.objects.get(version=version).ok
    mine = api("owner").get(f"/api/bots/{version.bot_id}/versions/").json()["results"][0]
    assert mine["language"] == "cpp" and "error" in mine["build_log"]
    theirs = api("stranger").get(f"/api/bots/{version.bot_id}/versions/").json()["results"][0]
    assert theirs["build_log"] is None and theirs["validation_error"] is None
    assert theirs["status"] == "invalid"


@pytest.mark.slow
def test_every_language_of_the_image_is_rated_on_the_ladder_path(
    owner: Any, sandbox_ready: None, settings: Any
) -> None:
    """A match of a C++, a Rust, a Java and a JavaScript starter, as the ladder plays it:
    their builds are used, the match and its log say which image they ran on."""
    settings.GRASS_VALIDATE_INLINE = True
    uploads = {
        "cpp": ("bot.cpp", (STARTERS / "cpp" / "bot.cpp").read_bytes()),
        "rust": ("main.rs", (STARTERS / "rust" / "main.rs").read_bytes()),
        "java": ("Bot.java", (STARTERS / "java" / "Bot.java").read_bytes()),
        "javascript": ("bot.js", (STARTERS / "javascript" / "bot.js").read_bytes()),
    }
    versions = [submit(owner, name, *upload) for name, upload in uploads.items()]
    assert [v.status for v in versions] == ["valid"] * 4, [v.validation_error for v in versions]
    match = match_create(versions=versions, limits={"max_hands": 1})
    assert match.runtime == runtime.identity()
    match_run(match_id=match.pk)
    match.refresh_from_db()
    assert match.status == "finished", match.failure_reason
    assert all(not seat.forfeited and seat.decisions > 0 for seat in match.seats.all())
    with match.log.open("rb") as handle:
        events = read_log(io.BytesIO(gzip.decompress(handle.read())))
    assert events[0]["runtime"] == runtime.identity()
    assert replay(events).result == match.result
    from django.test import Client

    page = Client().get(f"/matches/{match.pk}/").content.decode()
    assert f"<code>{runtime.identity()}</code>" in page
    assert Client().get(f"/api/matches/{match.pk}/").json()["runtime"] == runtime.identity()


def test_a_new_image_builds_the_version_again(owner: Any, sandbox_ready: None) -> None:
    """A build is good only for the image it was made on: after a new image is rolled out,
    the first match of the version builds it for that image."""
    version = bot_version_upload(
        bot=bot_create(owner=owner, name="old"),
        filename="bot.cpp",
        data=(STARTERS / "cpp" / "bot.cpp").read_bytes(),
    )
    BotBuild.objects.create(version=version, runtime="0-000000000000", ok=False, log="old")
    source = bot_version_runnable(version=version)
    assert "bot" in source.files
    assert set(BotBuild.objects.filter(version=version).values_list("runtime", flat=True)) == {
        "0-000000000000",
        runtime.identity(),
    }


def test_a_worker_on_another_image_refuses_matches_and_validations(
    owner: Any, valid_version: Any, sandbox_ready: None, settings: Any, caplog: Any
) -> None:
    versions = [valid_version("a"), valid_version("b")]
    match = match_create(versions=versions, limits={"max_hands": 1})
    Match.objects.filter(pk=match.pk).update(runtime="9-ffffffffffff")
    with caplog.at_level(logging.ERROR):
        match_run(match_id=match.pk)
    match.refresh_from_db()
    assert (match.status, match.attempts) == ("queued", 0)  # not claimed: another worker may
    assert "must be played on runtime image 9-ffffffffffff" in caplog.text

    settings.GRASS_RUNTIME_IMAGE = "9-ffffffffffff"  # the site moved on; this worker did not
    settings.GRASS_VALIDATE_INLINE = True
    pending = submit(owner, "later", "bot.py", b"from bots.sdk import run\n")
    assert pending.status == "pending"  # not judged on the wrong image
    from bots.runner.results import InfrastructureFault

    with pytest.raises(InfrastructureFault, match="the site plays on 9-ffffffffffff"):
        bot_version_validate(version=pending)


def test_a_worker_on_another_image_stops_taking_matches_at_start(
    settings: Any, caplog: Any
) -> None:
    from ladder.matches.tasks import check_worker_on_start

    class Consumer:
        def __init__(self) -> None:
            self.cancelled: list[str] = []
            self.task_consumer = SimpleNamespace(
                queues=[SimpleNamespace(name=name) for name in ("matches", "challenges")]
            )

        def cancel_task_queue(self, queue: str) -> None:
            self.cancelled.append(queue)

    settings.GRASS_RUNTIME_IMAGE = "9-ffffffffffff"
    consumer = Consumer()
    with caplog.at_level(logging.ERROR):
        check_worker_on_start(sender=consumer)
    assert consumer.cancelled == ["matches", "challenges"]
    assert "this worker refuses matches" in caplog.text and "9-ffffffffffff" in caplog.text
