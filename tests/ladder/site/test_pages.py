"""The HTML pages: leaderboard, bot, match, sign-up, log-in; what each persona sees."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from ladder.bots.models import BotVersion
from ladder.matches.models import Match
from ladder.matches.records import bot_records_rebuild
from ladder.ratings.services import rating_apply
from tests.ladder.tournaments.conftest import make_tournament, organiser  # noqa: F401

pytestmark = pytest.mark.django_db

EXTERNAL_URL = re.compile(r"https?://(?!testserver[/:\"']|localhost|127\.0\.0\.1)")


def _rated_match(valid_version: Any, finished_match: Any) -> Match:
    a, b, c = valid_version("alpha"), valid_version("beta"), valid_version("gamma")
    match = finished_match([a, b, c], [1, 2, 3])
    match.result = {"hands": 2, "reason": "target", "hand_scores": [[10, 0, -5], [20, 5, 0]]}
    match.save(update_fields=["result"])
    seat = match.seats.get(seat=2)
    seat.forfeited, seat.forfeit_reason = True, "crashed: exit code 1"
    seat.faults = {"crashed": 1}
    seat.save()
    rating_apply(match=match)
    bot_records_rebuild()  # the bot page's counts are the records recording keeps
    return match


def test_the_leaderboard_lists_rated_bots_with_bands(
    client: Client, valid_version: Any, finished_match: Any
) -> None:
    _rated_match(valid_version, finished_match)
    response = client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<caption>" in html and 'scope="col"' in html
    assert html.index("alpha") < html.index("beta") < html.index("gamma")
    assert "±2 deviations; fewer games, wider band" in html
    assert '<label for="id_ruleset">' in html
    assert "/static/ladder/site.css" in html
    # On a phone the secondary columns go: no sideways scrolling at 375 px.
    assert "@media (max-width: 40rem)" in html and ".secondary { display: none; }" in html
    assert 'class="secondary"' in html


def test_the_leaderboard_rows_carry_every_column(
    client: Client, valid_version: Any, finished_match: Any
) -> None:
    from ladder.ratings.selectors import leaderboard

    _rated_match(valid_version, finished_match)
    html = client.get("/").content.decode()
    body = html[html.index("<tbody>") : html.index("</tbody>")]
    rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)
    assert len(rows) == 3
    cells = re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", rows[0], re.S)
    top = next(iter(leaderboard(ruleset="modern")))
    # The bot as owner/name (names are unique per owner only), so no Owner column.
    assert cells[0] == "1" and ">ann/<wbr>alpha</a>" in cells[1]
    # One game: provisional, its Elo followed by a "?" saying so.
    mark = '<abbr class="provisional" title="provisional: 1 rated game so far">?</abbr>'
    assert cells[2] == f"{top.elo}{mark}" and cells[3] == f"{top.band_low}\u2013{top.band_high}"
    assert cells[4] == "1" and cells[5] == "100%"  # alpha won its one game
    assert f'datetime="{top.last_game.isoformat()}"' in cells[6]


def test_the_leaderboard_filters_by_ruleset(
    client: Client, valid_version: Any, finished_match: Any
) -> None:
    _rated_match(valid_version, finished_match)
    html = client.get("/", {"ruleset": "classic"}).content.decode()
    assert "alpha" not in html and "No bot has a rated game in the classic rules" in html
    assert client.get("/", {"ruleset": "chess"}).status_code == 400


def test_the_leaderboard_pages_50_bots_at_a_time_with_ranks_across_pages(client: Client) -> None:
    from django.contrib.auth import get_user_model

    from ladder.bots.models import Bot
    from ladder.ratings.models import BotRating

    owner = get_user_model().objects.create_user(username="many")
    bots = Bot.objects.bulk_create(Bot(owner=owner, name=f"bot{i:03d}") for i in range(120))
    # bot000 is the best, bot119 the worst.
    BotRating.objects.bulk_create(
        BotRating(bot=bot, ruleset="modern", mu=2000.0 - i, games=4, wins=1)
        for i, bot in enumerate(bots)
    )

    first = client.get("/").content.decode()
    assert "bot049" in first and "bot050" not in first
    assert "ranks 1\u201350 of 120" in first and "Page 1 of 3" in first
    assert 'href="?ruleset=modern&amp;page=2" rel="next"' in first
    assert 'rel="prev"' not in first

    second = client.get("/", {"ruleset": "modern", "page": 2}).content.decode()
    assert "bot049" not in second and "bot050" in second and "bot099" in second
    assert "<td>51</td>" in second and "<td>100</td>" in second and "<td>50</td>" not in second
    assert 'href="?ruleset=modern&amp;page=1" rel="prev"' in second

    last = client.get("/", {"page": 3}).content.decode()
    assert "bot119" in last and "<td>120</td>" in last and 'rel="next"' not in last
    # A page past the end, or not a number, shows the last or the first page.
    assert "<td>120</td>" in client.get("/", {"page": 99}).content.decode()
    assert "<td>1</td>" in client.get("/", {"page": "x"}).content.decode()


def test_the_bot_page_shows_versions_ratings_matches_and_forfeits(
    client: Client, valid_version: Any, finished_match: Any
) -> None:
    match = _rated_match(valid_version, finished_match)
    gamma = match.seats.get(seat=2).bot_version.bot
    response = client.get(f"/bots/{gamma.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<h1>ann/<wbr>gamma</h1>" in html and "Owner: ann" in html
    assert "modern" in html and re.search(r"\d+\u2013\d+", html)  # the band, low-high
    assert f'href="/matches/{match.pk}/"' in html
    assert "timed out in 0, crashed in 1" in html
    assert "crashed: exit code 1" in html
    assert client.get("/bots/999999/").status_code == 404


def test_the_bot_page_shows_timeouts_that_cost_no_game_with_their_reason(
    client: Client, valid_version: Any, finished_match: Any
) -> None:
    match = _rated_match(valid_version, finished_match)
    seat = match.seats.get(seat=0)
    seat.faults = {"timeout": 2, "illegal": 1}
    seat.fault_details = {"timeout": "no answer in 1412 ms", "illegal": "not legal: play Z"}
    seat.save()
    bot_records_rebuild()
    html = client.get(f"/bots/{seat.bot_version.bot_id}/").content.decode()
    assert "timed out in 1, crashed in 0" in html
    assert "timed out \u00d72: no answer in 1412 ms" in html
    assert "illegal move: not legal: play Z" in html
    assert "forfeited" not in html
    # A bot with a clean record lists none.
    clean = match.seats.get(seat=1).bot_version.bot_id
    assert "Latest timeouts" not in client.get(f"/bots/{clean}/").content.decode()


def test_validation_errors_show_to_the_owner_only(
    client: Client, owner: Any, stranger: Any, valid_version: Any
) -> None:
    version = valid_version("broken")
    BotVersion.objects.filter(pk=version.pk).update(
        status=BotVersion.Status.INVALID, validation_error="Traceback: secret detail"
    )
    url = f"/bots/{version.bot_id}/"
    assert "secret detail" not in client.get(url).content.decode()
    client.force_login(stranger)
    assert "secret detail" not in client.get(url).content.decode()
    client.force_login(owner)
    assert "secret detail" in client.get(url).content.decode()


def test_the_match_page_shows_seats_scores_and_the_log_link(
    client: Client, valid_version: Any, finished_match: Any
) -> None:
    match = _rated_match(valid_version, finished_match)
    response = client.get(f"/matches/{match.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    for text in ("Match", "modern", "finished", "alpha", "beta", "gamma", "crashed: exit code 1"):
        assert text in html
    # Money as everywhere else on the site: -$5, not -5.
    assert "Scores by hand" in html and '<td class="num">-$5</td>' in html
    assert f'href="/api/matches/{match.pk}/log/"' in html
    assert "→" in html  # rating changes, before -> after
    assert client.get("/matches/999999/").status_code == 404


def test_the_match_page_shows_places_think_time_and_faults_per_seat(
    client: Client, valid_version: Any, finished_match: Any
) -> None:
    match = _rated_match(valid_version, finished_match)
    match.seats.filter(seat=0).update(
        think_ms=1234.4,
        decisions=57,
        strikes=1,
        faults={"timeout": 1},
        fault_details={"timeout": "no answer in 1400 ms"},
    )
    html = client.get(f"/matches/{match.pk}/").content.decode()
    html = html[: html.index("Scores by hand")]  # the seats table, not the hands one
    rows = re.findall(r"<tr>\s*<th scope=\"row\"[^>]*>(\d)</th>(.*?)</tr>", html, re.S)
    assert [seat for seat, _ in rows] == ["0", "1", "2"]
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for _, row in rows]
    assert [c[1] for c in cells] == ["1", "2", "3"]  # places, as finished_match set them
    assert cells[0][4] == "1234 ms / 57 decisions"
    assert "timeout \u00d71" in cells[0][5] and "no answer in 1400 ms" in cells[0][5]
    assert cells[1][4] == "0 ms / 0 decisions" and cells[1][5] == "0"


def test_a_match_being_played_shows_no_think_time_of_zero(
    client: Client, valid_version: Any
) -> None:
    """The figures are recorded at the end: while the match waits or is played, the page said
    "0 ms / 0 decisions" for every seat. It shows a dash, which the live table's script
    replaces with the figures its frames carry (tests/browser/test_play_page_browser.py)."""
    from ladder.matches.services import match_create

    match = match_create(versions=[valid_version("a"), valid_version("b")], shuffle=False)
    for status in (Match.Status.QUEUED, Match.Status.RUNNING):
        Match.objects.filter(pk=match.pk).update(status=status)
        html = client.get(f"/matches/{match.pk}/").content.decode()
        cells = re.findall(r'<td class="num" data-label="Think time"([^>]*)>(.*?)</td>', html)
        assert cells == [(' data-think-seat="0"', "\u2013"), (' data-think-seat="1"', "\u2013")]


def test_login_signup_and_new_bot_pages(client: Client, owner: Any) -> None:
    html = client.get("/login/").content.decode()
    assert '<label for="id_username">' in html and '<label for="id_password">' in html
    assert client.get("/signup/").status_code == 200
    response = client.post("/signup/", {"username": "cy", "password": "a-long-passphrase-9"})
    assert response.status_code == 302
    assert "Log out cy" in client.get("/").content.decode()
    response = client.post("/bots/new/", {"name": "mybot"})
    assert response.status_code == 302 and response["Location"].endswith("/upload/")
    weak = Client().post("/signup/", {"username": "dee", "password": "123"})
    assert weak.status_code == 200 and "password" in weak.content.decode().lower()


def test_pages_load_nothing_from_other_sites(
    client: Client,
    owner: Any,
    valid_version: Any,
    finished_match: Any,
    make_tournament: Any,  # noqa: F811
    settings: Any,
) -> None:
    from ladder.notifications.events import Event
    from ladder.notifications.forms import WebhookForm
    from ladder.notifications.services import notify, webhook_create

    match = _rated_match(valid_version, finished_match)
    bot_id = match.seats.get(seat=0).bot_version.bot_id
    tournament = make_tournament(name="spring cup")
    # The notifications page with a webhook and a delivery listed on it.
    settings.GRASS_WEBHOOK_ALLOW_PRIVATE = True
    webhook_create(owner=owner, url="http://127.0.0.1:9/hook")
    notify(event=Event.MATCH_FINISHED, owner=owner, payload={"match": {"id": match.pk}})
    client.force_login(owner)
    for url in (
        "/",
        f"/bots/{bot_id}/",
        f"/bots/{bot_id}/upload/",
        f"/matches/{match.pk}/",
        "/bots/new/",
        "/tournaments/",
        f"/tournaments/{tournament.pk}/",
        "/account/notifications/",
        "/account/bots/",
        "/replay/",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        # The webhook form's help names the schemes ("An https:// (or http://) address"):
        # words, not an address the page loads.
        html = response.content.decode().replace(str(WebhookForm.base_fields["url"].help_text), "")
        assert not EXTERNAL_URL.search(html), url
    assert "127.0.0.1:9/hook" in client.get("/account/notifications/").content.decode()
    anonymous = Client()
    for url in ("/login/", "/signup/", "/tournaments/", f"/tournaments/{tournament.pk}/"):
        assert not EXTERNAL_URL.search(anonymous.get(url).content.decode()), url


def test_a_missing_page_is_the_sites_own_404(client: Client) -> None:
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "<h1>Not found</h1>" in html and 'aria-label="Site"' in html
    assert '<a class="skip" href="#content">' in html
