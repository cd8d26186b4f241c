"""GET /api/leaderboard/: rated bots, best first, with band, games and win rate."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from ladder.ratings.apis import LeaderboardApi
from ladder.ratings.models import BotRating
from ladder.ratings.selectors import Leaderboard, leaderboard
from ladder.ratings.services import rating_apply

pytestmark = pytest.mark.django_db


def test_the_leaderboard_lists_rated_bots_best_first(
    valid_version: Any, finished_match: Any
) -> None:
    a, b, c = valid_version("alpha"), valid_version("beta"), valid_version("gamma")
    rating_apply(match=finished_match([a, b, c], [1, 2, 3]))
    rating_apply(match=finished_match([b, c], [1, 2]))
    rating_apply(
        match=finished_match([a, b], [1, 2]),
    )
    valid_version("unrated")
    rating_apply(match=finished_match([a, b], [2, 1], ruleset="classic"))

    response = APIClient().get("/api/leaderboard/", {"ruleset": "modern"})

    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 3
    rows = body["results"]
    assert [r["bot"] for r in rows] == ["alpha", "beta", "gamma"]
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert [r["elo"] for r in rows] == sorted((r["elo"] for r in rows), reverse=True)
    alpha = rows[0]
    assert alpha["owner"] == "ann"
    assert alpha["games"] == 2 and alpha["win_rate"] == 1.0
    low, high = alpha["band"]
    assert low < alpha["elo"] < high
    assert rows[1]["games"] == 3 and rows[1]["win_rate"] == pytest.approx(1 / 3, abs=1e-4)
    assert alpha["last_game"]


def test_an_unknown_ruleset_is_a_bad_request() -> None:
    response = APIClient().get("/api/leaderboard/", {"ruleset": "chess"})
    assert response.status_code == 400
    assert "ruleset" in response.json()


def _board(bots: int, *, ties: bool = False) -> list[int]:
    """`bots` rated bots straight in the database (their ratings distinct unless `ties`): the
    bot ids, best first as the leaderboard orders them."""
    from django.contrib.auth import get_user_model

    from ladder.bots.models import Bot

    owner = get_user_model().objects.create_user(username="many")
    made = Bot.objects.bulk_create(Bot(owner=owner, name=f"b{i:03d}") for i in range(bots))
    mus = {bot.pk: 1500.0 + (i // 3 if ties else i) for i, bot in enumerate(made)}
    BotRating.objects.bulk_create(
        BotRating(bot=bot, ruleset="modern", mu=mus[bot.pk], games=10, wins=i % 10)
        for i, bot in enumerate(made)
    )
    return sorted(mus, key=lambda pk: (-mus[pk], pk))


def test_pages_hold_50_rows_ranked_by_their_place_in_the_whole_board() -> None:
    order = _board(120)
    client = APIClient()
    first = client.get("/api/leaderboard/", {"ruleset": "modern"}).json()
    assert first["count"] == 120 and first["previous"] is None and "page=2" in first["next"]
    assert [r["rank"] for r in first["results"]] == list(range(1, 51))
    assert [r["bot_id"] for r in first["results"]] == order[:50]
    last = client.get("/api/leaderboard/", {"ruleset": "modern", "page": 3}).json()
    assert last["next"] is None
    assert [r["rank"] for r in last["results"]] == list(range(101, 121))
    assert [r["bot_id"] for r in last["results"]] == order[100:]
    assert last["results"][0]["win_rate"] == pytest.approx((19 % 10) / 10)
    assert client.get("/api/leaderboard/", {"page": 4}).status_code == 404


@pytest.mark.parametrize("deep", [0, 1_000])
def test_every_slice_agrees_with_the_whole_board_read_at_once(
    deep: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both ways of reading a page (one query; ids first from `deep` on) give the same rows,
    equal ratings in bot id order."""
    order = _board(40, ties=True)
    monkeypatch.setattr(Leaderboard, "deep", deep)
    board = leaderboard(ruleset="modern")
    assert len(board) == 40
    whole = list(board)
    assert [row.bot_id for row in whole] == order
    assert [row.rank for row in whole] == list(range(1, 41))
    for start, stop in ((0, 7), (7, 19), (33, 40), (38, 99), (40, 50)):
        assert board[start:stop] == whole[start:stop]
    assert board[5] == whole[5]
    with pytest.raises(IndexError):
        board[40]


def test_the_rows_are_what_the_output_serializer_gives(
    valid_version: Any, finished_match: Any
) -> None:
    a, b = valid_version("alpha"), valid_version("beta")
    rating_apply(match=finished_match([a, b], [1, 2]))
    for row in leaderboard(ruleset="modern")[0:]:
        assert LeaderboardApi.output(row) == LeaderboardApi.OutputSerializer(row).data


def test_the_leaderboard_reads_wins_from_the_rating_not_the_changes(
    valid_version: Any, finished_match: Any, django_assert_num_queries: Any
) -> None:
    a, b = valid_version("alpha"), valid_version("beta")
    rating_apply(match=finished_match([a, b], [1, 2]))
    BotRating.objects.filter(bot=a.bot).update(wins=0)
    with django_assert_num_queries(1):
        rows = leaderboard(ruleset="modern")[0:50]
    assert [(r.bot, r.win_rate) for r in rows] == [("alpha", 0.0), ("beta", 0.0)]


def test_a_bot_rated_just_now_is_on_a_small_board_at_once(
    valid_version: Any, finished_match: Any
) -> None:
    """A small board is counted at every request: a kept count would end the last page before
    the bot that was rated a moment ago (seen: the home page left a new bot out for a minute)."""
    a, b = valid_version("alpha"), valid_version("beta")
    rating_apply(match=finished_match([a, b], [1, 2]))
    client = APIClient()
    assert client.get("/api/leaderboard/", {"ruleset": "modern"}).json()["count"] == 2
    c = valid_version("gamma")
    rating_apply(match=finished_match([a, c], [2, 1]))
    body = client.get("/api/leaderboard/", {"ruleset": "modern"}).json()
    assert body["count"] == 3
    assert sorted(row["bot"] for row in body["results"]) == ["alpha", "beta", "gamma"]


def test_a_big_board_keeps_its_count_a_while(monkeypatch: pytest.MonkeyPatch) -> None:
    from ladder.ratings import selectors

    monkeypatch.setattr(selectors, "CACHED_FROM", 30)
    _board(40)
    assert len(leaderboard(ruleset="modern")) == 40
    BotRating.objects.filter(ruleset="modern").order_by("mu")[:1].get().delete()
    assert len(leaderboard(ruleset="modern")) == 40  # kept
    monkeypatch.setattr(selectors, "CACHED_FROM", 50)
    assert len(leaderboard(ruleset="modern")) == 39  # a small board: counted


def test_a_big_boards_deep_pages_start_at_an_anchor_not_at_the_top(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a big board a deep page skips at most ANCHOR_STEP places and the ties of the anchor's
    rating (O(page), not O(rank)), and
    reads the same rows, ties included, as the whole board read at once."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from ladder.ratings import selectors

    order = _board(45, ties=True)
    monkeypatch.setattr(selectors, "CACHED_FROM", 30)
    monkeypatch.setattr(selectors, "ANCHOR_STEP", 7)
    monkeypatch.setattr(Leaderboard, "deep", 0)
    board = leaderboard(ruleset="modern")
    whole = list(board)
    assert [row.bot_id for row in whole] == order
    for start, stop in ((0, 5), (6, 8), (7, 14), (20, 29), (36, 45), (40, 99)):
        with CaptureQueriesContext(connection) as queries:
            rows = board[start:stop]
        assert rows == whole[start:stop]
        offsets = [int(q["sql"].rsplit("OFFSET", 1)[1]) for q in queries if "OFFSET" in q["sql"]]
        # At most the step, plus the bots tied with the anchor's rating above it (two).
        assert all(offset < 7 + 2 for offset in offsets), (start, offsets)
    # The ties (three bots a rating) put some anchors after the first bot of their rating.
    assert any(first % 7 for _, first in board._anchors())


def test_kept_anchors_lag_the_board_no_longer_than_its_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from django.core.cache import cache

    from ladder.ratings import selectors

    order = _board(40)
    monkeypatch.setattr(selectors, "CACHED_FROM", 30)
    monkeypatch.setattr(selectors, "ANCHOR_STEP", 10)
    monkeypatch.setattr(Leaderboard, "deep", 0)
    assert [r.bot_id for r in leaderboard(ruleset="modern")[20:30]] == order[20:30]
    # The best bot falls to the bottom: the kept anchors still place the page as before...
    BotRating.objects.filter(bot_id=order[0]).update(mu=0)
    moved = order[1:] + order[:1]
    stale = [r.bot_id for r in leaderboard(ruleset="modern")[20:30]]
    assert stale == moved[19:29]
    # ...until they are read again (as the count is, after COUNT_SECONDS).
    cache.clear()
    assert [r.bot_id for r in leaderboard(ruleset="modern")[20:30]] == moved[20:30]


def test_beat_keeps_a_big_boards_count_and_anchors_so_no_request_reads_them(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from ladder.ratings import selectors
    from ladder.ratings.tasks import keep_leaderboards

    settings.GRASS_LADDER_TABLES = [("modern", 4)]
    order = _board(40)
    monkeypatch.setattr(selectors, "CACHED_FROM", 30)
    monkeypatch.setattr(selectors, "ANCHOR_STEP", 10)
    monkeypatch.setattr(Leaderboard, "deep", 0)
    assert keep_leaderboards() == {"modern": 40}
    # A new best bot: beat's next run places it; a request meanwhile reads what was kept.
    BotRating.objects.filter(bot_id=order[-1]).update(mu=10_000)
    with CaptureQueriesContext(connection) as queries:
        board = leaderboard(ruleset="modern")
        assert len(board) == 40
        rows = board[30:40]
    assert not any("row_number" in q["sql"] or "COUNT" in q["sql"] for q in queries)
    # The kept anchor still puts place 30 at its old bot; the moved bot has left the page.
    assert [r.bot_id for r in rows] == order[30:39]
    keep_leaderboards()
    assert [r.bot_id for r in leaderboard(ruleset="modern")[30:40]] == order[29:39]


def test_beat_does_not_keep_a_small_boards_count(settings: Any) -> None:
    from ladder.ratings.tasks import keep_leaderboards

    settings.GRASS_LADDER_TABLES = [("modern", 4)]
    order = _board(5)
    assert keep_leaderboards() == {"modern": 5}
    BotRating.objects.filter(bot_id=order[0]).delete()
    assert len(leaderboard(ruleset="modern")) == 4  # counted at the request


def test_beat_keeps_the_boards_before_the_cache_lets_them_go(settings: Any) -> None:
    from ladder.ratings import selectors

    (entry,) = (
        e
        for e in settings.CELERY_BEAT_SCHEDULE.values()
        if e["task"] == "ladder.ratings.tasks.keep_leaderboards"
    )
    assert entry["schedule"] < selectors.COUNT_SECONDS
