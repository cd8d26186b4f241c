"""Bot names at a phone's width (375 px): `owner/name` may wrap after its slash, never inside
a word ("examples/stro" and "ng" was what the leaderboard showed), and the page still does
not scroll sideways. Screenshots in artifacts/screenshots/."""

from __future__ import annotations

from typing import Any

import pytest

from ladder.matches.models import Match
from ladder.ratings.services import rating_apply

pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLES = ("examples/random", "examples/greedy", "examples/strong")
PHONE = {"viewport": {"width": 375, "height": 812}, "device_scale_factor": 2, "is_mobile": True}

LINES = """links => links.map(link => {
    // The text of each line the link's name is laid out on, read character by character.
    const lines = [];
    let top = null;
    const walker = document.createTreeWalker(link, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (let i = 0; i < node.length; i++) {
            const range = document.createRange();
            range.setStart(node, i);
            range.setEnd(node, i + 1);
            const rect = range.getBoundingClientRect();
            if (rect.width === 0) continue;
            if (top === null || Math.abs(rect.top - top) > rect.height / 2) {
                lines.push("");
                top = rect.top;
            }
            lines[lines.length - 1] += node.data[i];
        }
    }
    return [link.textContent, lines];
})"""


def name_lines(page: Any, selector: str) -> list[list[str]]:
    """For each example bot's name in the elements matched by `selector`, the lines its text
    is laid out on."""
    found: list[tuple[str, list[str]]] = page.locator(selector).evaluate_all(LINES)
    return [lines for text, lines in found if text.strip() in EXAMPLES]


def whole_words(lines: list[list[str]]) -> None:
    """Every name is on one line, or on two split right after its slash."""
    assert lines
    for name in lines:
        assert len(name) == 1 or (len(name) == 2 and name[0].endswith("/")), name


@pytest.fixture
def examples(django_user_model: Any, example_file: Any, finished_match: Any) -> Match:
    """The example bots as `make run` creates them (examples/random, greedy, strong), rated in
    one game, plus a name long enough that it cannot fit a phone's column whole."""
    from ladder.bots.models import BotVersion
    from ladder.bots.services import bot_create, bot_version_upload

    user = django_user_model.objects.create_user(username="examples", password="pw")
    versions = []
    for name in ("random", "greedy", "strong", "a" * 40):
        bot = bot_create(owner=user, name=name)
        version = bot_version_upload(bot=bot, filename="bot.py", data=example_file("random"))
        BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.VALID)
        versions.append(version)
    match = finished_match(versions, [1, 2, 3, 4])
    rating_apply(match=match)
    return match


def test_bot_names_wrap_after_the_slash_not_inside_a_word_on_a_phone(
    live_server: Any, browser: Any, examples: Match, screenshot: Any
) -> None:
    from tests.browser.conftest import foreign_requests

    context = browser.new_context(**PHONE)
    page = context.new_page()
    foreign = foreign_requests(page, live_server.url)
    try:
        page.goto(f"{live_server.url}/")
        screenshot(page, "phone-leaderboard-example-names")
        lines = name_lines(page, "table.leaderboard a")
        assert len(lines) == 3, lines
        whole_words(lines)
        width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], width

        page.goto(f"{live_server.url}/matches/{examples.pk}/")
        screenshot(page, "phone-match-example-names")
        lines = name_lines(page, "table.players a")
        assert len(lines) == 3, lines
        whole_words(lines)

        bot = examples.seats.get(seat=2).bot_version.bot_id
        page.goto(f"{live_server.url}/bots/{bot}/")
        lines = name_lines(page, "h1")
        assert len(lines) == 1, lines
        whole_words(lines)
    finally:
        context.close()
    assert not foreign
