"""What `grass status` prints (`bots.remote.status`), from the bots as the API gives them: a
provisional rating is followed by `?`, and a line says what that means."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console

from bots import remote


def _bot(ratings: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": 7,
        "display_name": "ann/mine",
        "disabled": None,
        "versions": {"playing": {"number": 2}, "latest": {"number": 2, "status": "valid"}},
        "games": {"timed_out": 0, "crashed": 0},
        "ratings": ratings,
    }


def _rating(ruleset: str, elo: int, games: int, **more: Any) -> dict[str, Any]:
    return {"ruleset": ruleset, "elo": elo, "band": [elo - 90, elo + 90], "games": games, **more}


class _Ladder:
    def __init__(self, bot: dict[str, Any]) -> None:
        self.detail = bot

    def __enter__(self) -> _Ladder:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def bots(self, owner: str) -> list[dict[str, Any]]:
        return [{"id": self.detail["id"]}]

    def bot(self, bot_id: int) -> dict[str, Any]:
        return self.detail


def status(bot: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> str:
    me = SimpleNamespace(username="ann", site="https://grass.example")
    monkeypatch.setattr(remote, "signed_in", lambda: (_Ladder(bot), me))
    console = Console(record=True, width=200, color_system=None)
    assert remote.status(console, None) == 0
    return console.export_text()


def test_a_provisional_rating_is_marked(monkeypatch: pytest.MonkeyPatch) -> None:
    printed = status(
        _bot(
            [
                _rating("classic", 1580, 3, provisional=True),
                _rating("modern", 1712, 40, provisional=False),
            ]
        ),
        monkeypatch,
    )
    classic = next(line for line in printed.splitlines() if "classic" in line)
    modern = next(line for line in printed.splitlines() if "modern" in line)
    assert "1580?" in classic and "1712?" not in modern and "1712" in modern
    assert "? provisional: fewer rated games than" in printed


def test_no_mark_and_no_note_without_a_provisional_rating(monkeypatch: pytest.MonkeyPatch) -> None:
    # A site too old to say (no `provisional`) is read as not provisional.
    printed = status(_bot([_rating("modern", 1712, 40)]), monkeypatch)
    assert "1712" in printed and "?" not in printed
