"""Uploading and validating bot versions: the newest valid version plays."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from bots.runner.botfiles import BadBot, BotSource, load_bot
from bots.runner.match import play_match
from ladder.bots import services
from ladder.bots.models import BotVersion
from ladder.bots.selectors import bot_version_playing, bot_version_source
from ladder.bots.services import (
    REASON_CHARS,
    VALIDATION_ERROR_CHARS,
    _validation_error,
    bot_create,
    bot_version_upload,
    bot_version_validate,
)

pytestmark = pytest.mark.django_db

BROKEN = b"def choose(self, obs:\n    return 'end'\n"


def test_a_valid_upload_is_stored_pending_then_validates(
    owner: Any, example_file: Any, sandbox_ready: None
) -> None:
    bot = bot_create(owner=owner, name="mine")
    data = example_file("greedy")
    version = bot_version_upload(bot=bot, filename="greedy.py", data=data)
    assert (version.number, version.status, version.size) == (1, "pending", len(data))
    assert bot_version_source(version=version).files == {"bot.py": data}
    assert bot_version_playing(bot=bot) is None

    version = bot_version_validate(version=version)

    assert version.status == BotVersion.Status.VALID
    assert version.validation_error == ""
    assert bot_version_playing(bot=bot) == version


def test_a_broken_upload_is_invalid_with_its_traceback_and_the_old_version_plays(
    owner: Any, example_file: Any, sandbox_ready: None
) -> None:
    bot = bot_create(owner=owner, name="mine")
    good = bot_version_validate(
        version=bot_version_upload(bot=bot, filename="bot.py", data=example_file("random"))
    )
    broken = bot_version_upload(bot=bot, filename="bot.py", data=BROKEN)
    assert broken.number == 2

    broken = bot_version_validate(version=broken)

    assert broken.status == BotVersion.Status.INVALID
    assert "SyntaxError" in broken.validation_error
    assert "Traceback (most recent call last)" in broken.validation_error
    assert bot_version_playing(bot=bot) == good
    # The verdict is final: validating again changes nothing.
    assert bot_version_validate(version=broken).status == BotVersion.Status.INVALID


def test_an_unsafe_zip_is_refused_and_nothing_is_stored(owner: Any) -> None:
    bot = bot_create(owner=owner, name="mine")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bot.py", "print('hi')\n")
        archive.writestr("../escape.py", "print('out')\n")

    with pytest.raises(BadBot, match="outside the archive"):
        bot_version_upload(bot=bot, filename="evil.zip", data=buffer.getvalue())

    assert not BotVersion.objects.exists()
    assert not (Path(settings.MEDIA_ROOT) / "bots" / str(bot.pk)).exists()


# Bots that answer the runner's hello with something other than a 'ready' message.
NOT_JSON = b"""import sys
sys.stdin.readline()
print("hello, dealer", flush=True)
sys.stdin.read()
"""
WRONG_TYPE = b"""import sys
sys.stdin.readline()
print('{"type": "action", "action": "pass"}', flush=True)
sys.stdin.read()
"""


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (NOT_JSON, "not JSON: b'hello, dealer'"),
        (WRONG_TYPE, "expected a 'ready' message, got type 'action'"),
    ],
    ids=["not-json", "wrong-type"],
)
def test_a_bot_that_breaks_the_protocol_is_invalid_naming_the_protocol_error(
    owner: Any, valid_version: Any, sandbox_ready: None, data: bytes, error: str
) -> None:
    good = valid_version("mine")

    version = bot_version_validate(
        version=bot_version_upload(bot=good.bot, filename="bot.py", data=data)
    )

    assert version.status == BotVersion.Status.INVALID
    assert version.validation_error.startswith("did not start: ")
    assert error in version.validation_error
    assert BotVersion.objects.get(pk=version.pk).validation_error == version.validation_error
    assert bot_version_playing(bot=good.bot) == good


# A traceback after a great deal of other output: far more than a version keeps.
LONG_TRACEBACK = b"""import sys
sys.stderr.write("FIRST LINE\\n" + "".join(f"noise {i}\\n" for i in range(20_000)))
def fail(depth):
    if depth == 0:
        raise RuntimeError("the real reason")
    fail(depth - 1)
fail(50)
"""


def test_a_very_long_traceback_is_cut_to_the_stored_limit_keeping_its_end(
    owner: Any, sandbox_ready: None
) -> None:
    bot = bot_create(owner=owner, name="mine")

    version = bot_version_validate(
        version=bot_version_upload(bot=bot, filename="bot.py", data=LONG_TRACEBACK)
    )

    error = BotVersion.objects.get(pk=version.pk).validation_error
    assert version.status == BotVersion.Status.INVALID
    assert len(error) == VALIDATION_ERROR_CHARS
    assert error.startswith("did not start: ")
    assert "\n\nstderr (last lines):\n" in error
    assert error.rstrip().endswith("RuntimeError: the real reason")
    assert "Traceback (most recent call last)" in error
    assert "FIRST LINE" not in error


def test_a_long_forfeit_reason_leaves_room_for_the_end_of_stderr() -> None:
    stderr = "Traceback (most recent call last):\n" + "  frame\n" * 2_000 + "ValueError: why\n"

    error = _validation_error(reason="r" * 10 * VALIDATION_ERROR_CHARS, stderr=stderr)

    assert len(error) == VALIDATION_ERROR_CHARS
    assert error.startswith("r" * REASON_CHARS + "\n\nstderr (last lines):\n")
    assert error.endswith("ValueError: why\n")
    assert _validation_error(reason="crashed", stderr=" \n") == "crashed"


def test_the_validation_game_is_one_hand_against_the_example_bots_and_only_its_seat_counts(
    owner: Any, example_file: Any, sandbox_ready: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    games: list[tuple[list[BotSource], dict[str, Any], Any]] = []

    def play_and_keep(bots: list[BotSource], **options: Any) -> Any:
        played = play_match(bots, **options)
        games.append((bots, options, played))
        return played

    def broken_greedy(name: str) -> BotSource:
        # An opponent that forfeits is no fault of the version being validated.
        return BotSource(name, {"bot.py": BROKEN}) if name == "greedy" else load_bot(name)

    monkeypatch.setattr(services, "play_match", play_and_keep)
    monkeypatch.setattr(services, "load_bot", broken_greedy)
    bot = bot_create(owner=owner, name="mine")
    data = example_file("strong")

    version = bot_version_validate(
        version=bot_version_upload(bot=bot, filename="bot.py", data=data)
    )

    [(bots, options, played)] = games
    assert [b.name for b in bots[1:]] == ["random", "greedy"]
    assert bots[0].files == {"bot.py": data}
    assert options["limits"] == {"max_hands": 1}
    assert [s.forfeited for s in played.seats] == [False, False, True]
    assert (version.status, version.validation_error) == (BotVersion.Status.VALID, "")
