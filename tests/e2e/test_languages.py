"""One bot in every language of the runtime image, uploaded over HTTP, validated (built, for
the compiled ones) by a real Celery worker, matched by beat, played and rated: the whole path,
as an author in each language meets it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from bots.runner.build import build_in_box
from tests.e2e.conftest import wait_until

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("sandbox_ready", "redis_ready"),
]

STARTERS = Path(__file__).resolve().parents[2] / "bots" / "starters"
PASSWORD = "correct horse battery staple"


def static_binary() -> bytes:
    """The binary starter, built as its author would (gcc -static), in a build box."""
    built = build_in_box(
        {"bot.c": (STARTERS / "binary" / "bot.c").read_bytes()},
        ("/bin/sh", "-c", 'exec gcc -O2 -static -o "$GRASS_BUILD/out/bot" bot.c'),
        "bot",
    )
    assert built.ok and built.artifact is not None, built.log
    return built.artifact


def test_a_bot_in_every_language_is_rated(live_server: Any, settings: Any, celery: Any) -> None:
    settings.GRASS_VALIDATE_INLINE = False
    uploads = {
        "py": ("bot.py", (STARTERS / "python" / "bot.py").read_bytes()),
        "js": ("bot.js", (STARTERS / "javascript" / "bot.js").read_bytes()),
        "cpp": ("mybot.cpp", (STARTERS / "cpp" / "bot.cpp").read_bytes()),
        "rust": ("main.rs", (STARTERS / "rust" / "main.rs").read_bytes()),
        "java": ("Bot.java", (STARTERS / "java" / "Bot.java").read_bytes()),
        "static": ("bot", static_binary()),
    }
    # Six accounts upload one bot each (one owner's bots never share a rated table, so six bots
    # of one account would never meet), all pending at once until its build and game are done.
    celery("worker", concurrency=2)
    celery("beat")
    http = httpx.Client(base_url=live_server.url, timeout=60)
    bots, authors = {}, {}
    for name, (filename, data) in uploads.items():
        signup = http.post(
            "/api/auth/signup/", json={"username": f"poly-{name}", "password": PASSWORD}
        )
        assert signup.status_code == 201, signup.text
        author = httpx.Client(
            base_url=live_server.url,
            headers={"Authorization": f"Token {signup.json()['token']}"},
            timeout=60,
        )
        bot = author.post("/api/bots/", json={"name": name})
        assert bot.status_code == 201, bot.text
        version = author.post(
            f"/api/bots/{bot.json()['id']}/versions/", files={"file": (filename, data)}
        )
        assert version.status_code == 201, version.text
        bots[name], authors[name] = bot.json()["id"], author

    def verdicts() -> dict[str, dict[str, Any]] | None:
        found = {}
        for name, bot_id in bots.items():
            versions = authors[name].get(f"/api/bots/{bot_id}/versions/").json()["results"]
            if versions[0]["status"] == "pending":
                return None
            found[name] = versions[0]
        return found

    checked = wait_until(verdicts, timeout=300, what="every language's validation")
    invalid = {n: v.get("validation_error") for n, v in checked.items() if v["status"] != "valid"}  # type: ignore[union-attr]
    assert not invalid, invalid
    languages = {n: v["language"] for n, v in checked.items()}  # type: ignore[union-attr]
    assert languages == {
        "py": "python",
        "js": "javascript",
        "cpp": "cpp",
        "rust": "rust",
        "java": "java",
        "static": "binary",
    }
    assert "build_log" in checked["java"]  # type: ignore[index]

    def rated() -> list[dict[str, Any]] | None:
        rows = http.get("/api/leaderboard/", params={"ruleset": "modern"}).json()["results"]
        return rows if len(rows) == len(bots) and all(r["games"] >= 1 for r in rows) else None

    rows = wait_until(rated, timeout=300, what="every language on the leaderboard")
    assert {r["bot"] for r in rows} == set(bots)  # type: ignore[union-attr]
    finished = http.get("/api/matches/", params={"status": "finished"}).json()["results"]
    detail = http.get(f"/api/matches/{finished[0]['id']}/").json()
    assert detail["runtime"] and all(not seat["forfeited"] for seat in detail["seats"])
