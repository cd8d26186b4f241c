"""What `grass submit` prints once a version has its verdict (`bots.remote._verdict`), from
the version as the API gives it to its owner."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from bots.remote import _verdict

COMPILER = "bot.c: In function 'main':\nbot.c:3:5: error: expected ';' before 'return'\n"
"""What gcc says about a missing semicolon (the version's whole `build_log`)."""


def verdict(version: dict[str, Any]) -> tuple[int, str]:
    console = Console(record=True, width=200, color_system=None)
    status = _verdict(console, version)
    return status, console.export_text()


def test_a_failed_build_prints_the_compiler_output_once() -> None:
    status, printed = verdict(
        {
            "number": 3,
            "status": "invalid",
            "build_log": COMPILER,
            # As ladder.bots.services._build_error words it: the end of the same output.
            "validation_error": "the build failed; the compiler's output (last lines):\n"
            + COMPILER[-60:],
        }
    )
    assert status == 1
    assert printed.count("expected ';' before 'return'") == 1, printed
    assert "Build output:" in printed
    assert "v3 is invalid" in printed and "the build failed" in printed


def test_a_built_version_that_fails_its_game_shows_both() -> None:
    """The build's warnings and the game's reason are different texts: both are printed."""
    status, printed = verdict(
        {
            "number": 1,
            "status": "invalid",
            "build_log": "bot.c:9:1: warning: unused variable 'x'\n",
            "validation_error": "seat 0 crashed: Segmentation fault",
        }
    )
    assert status == 1
    assert "unused variable 'x'" in printed and "seat 0 crashed: Segmentation fault" in printed


def test_valid_and_pending_versions() -> None:
    status, printed = verdict({"number": 2, "status": "valid", "build_log": COMPILER})
    assert status == 0 and "error" not in printed and "v2 is valid" in printed
    assert verdict({"number": 2, "status": "pending"})[0] == 2
