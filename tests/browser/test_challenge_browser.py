"""A challenge end to end in a real browser, with a real worker: from the bot page, the author
asks for a game against an example bot; the page follows it until the worker has played it
(unrated); the match page shows its replay with the author's debug lines beside each decision
(and none to another visitor); the rematch button asks for the same game again.

Host-wide state: its Celery worker sweeps the host's dead boxes as it starts, so the file
runs alone, in the host-wide group (tests/conftest.py); Redis is the run's own.
"""

from __future__ import annotations

from typing import Any

import pytest

from ladder.challenges.models import Challenge
from ladder.matches.models import Match
from ladder.ratings.models import BotRating, RatingChange
from tests.browser.test_notifications_browser import sign_in
from tests.e2e.test_cli_challenge import REPO, THINKER, valid

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("sandbox_ready", "redis_ready"),
]

VIEWER = "document.querySelector('#replay').replayViewer"


def test_a_challenge_from_the_bot_page_to_its_replay_and_a_rematch(
    live_server: Any,
    page: Any,
    celery: Any,
    owner: Any,
    stranger: Any,
    django_user_model: Any,
    screenshot: Any,
) -> None:
    examples = django_user_model.objects.create_user(username="examples")
    greedy = valid(examples, "greedy", (REPO / "bots/examples/greedy/bot.py").read_bytes())
    mine = valid(owner, "thinker", THINKER)
    celery("worker", concurrency=2, GRASS_MATCH_CAPACITY="4")
    base = live_server.url
    sign_in(page, owner, base)

    page.goto(f"{base}/bots/{mine.bot_id}/")
    page.get_by_role("link", name="Challenge with this bot").click()
    assert page.locator("#id_version").input_value() == f"{mine.bot_id}:1"
    page.get_by_label("examples/greedy").check()
    page.get_by_label("Hands").fill("1")
    screenshot(page, "challenge-form")
    page.get_by_role("button", name="Challenge").click()

    # The challenge's page reloads itself until the worker has played the game.
    state = page.locator(".challenge-state")
    page.wait_for_url(f"{base}/challenges/*/")
    page.locator('.challenge-state[data-state="finished"]').wait_for(timeout=240_000)
    challenge = Challenge.objects.get()
    match = Match.objects.get(pk=challenge.match_id)
    assert match.status == Match.Status.FINISHED and not match.rated
    assert not RatingChange.objects.exists() and not BotRating.objects.exists()
    assert "Rated" in page.locator("dl.facts").inner_text()
    screenshot(page, "challenge-played")

    state.get_by_role("link", name=f"watch match {match.pk}").click()
    page.wait_for_selector("#replay [data-role=body]:not([hidden])")
    assert "A challenge of yours: unrated" in page.locator(".challenge-note").inner_text()
    # The author's lines beside the seat's decisions: jump to its first one.
    seat = match.seats.get(bot_version=mine).seat
    page.select_option("#replay [data-role=seat]", str(seat))
    page.get_by_role("button", name="Next decision of").click()
    entry = page.locator("#replay [data-role=debug] .replay-debug-entry").first
    entry.wait_for()
    assert entry.locator("h4").inner_text().endswith("request 1")
    assert entry.locator("pre").inner_text().startswith("thinking: ")
    screenshot(page, "challenge-replay-debug")

    page.get_by_role("button", name="Rematch").click()
    page.wait_for_url(f"{base}/challenges/*/")
    again = Challenge.objects.exclude(pk=challenge.pk).get()
    assert again.rematch_of_id == challenge.pk
    assert page.url == f"{base}/challenges/{again.pk}/"
    assert [s.version_id for s in again.seats.order_by("position")] == [mine.pk, greedy.pk]

    # Another visitor: the match and its replay, never the author's debug lines.
    page.context.clear_cookies()
    sign_in(page, stranger, base)
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto(f"{base}/matches/{match.pk}/")
    page.wait_for_selector("#replay [data-role=body]:not([hidden])")
    assert page.locator("#replay [data-role=debug]").is_hidden()
    assert not [url for url in asked if "/debug/" in url]
    assert page.get_by_role("button", name="Rematch").count() == 0
    assert page.goto(f"{base}/challenges/{challenge.pk}/").status == 404
