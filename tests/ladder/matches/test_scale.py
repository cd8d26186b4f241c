"""What keeps pages and recording from costing more as the ladder grows: keyset pages of the
match lists, the bots' kept records and peaks, retention of old files, replays computed on
view rather than at recording (issue 25, parts 3 and 4)."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest
from django.db.models import Max

from bots.runner.results import SeatReport
from ladder.matches.files import match_files_expire, match_viewed
from ladder.matches.models import BotOpponentRecord, BotSeatRecord, Match
from ladder.matches.recording import _match_record
from ladder.matches.records import bot_records_rebuild
from ladder.matches.selectors import match_seats
from ladder.matches.services import match_create
from ladder.pagination import LEGACY_PAGES, keyset_cursor
from ladder.ratings.models import BotRating, RatingChange

pytestmark = pytest.mark.django_db

LOG = '{"type": "header"}\n{"type": "result"}\n'


def _played(seats: int, rng: random.Random) -> Any:
    """What `play_match` returns, as far as recording reads it: places (ties too), totals,
    faults, a log."""
    places = sorted(rng.randint(1, seats) for _ in range(seats))
    rng.shuffle(places)
    reports = []
    for _ in range(seats):
        faults = rng.choice(
            [[], [], [{"kind": "timeout", "detail": "slow"}], [{"kind": "crashed"}]]
        )
        reports.append(SeatReport(name="bot", decisions=3, faults=faults))
    return SimpleNamespace(
        seats=reports,
        ranks=places,
        result={"totals": [100 * (seats - p) for p in places], "ranks": places},
        events=[],
        log_text=lambda: LOG,
    )


def _record(versions: list[Any], rng: random.Random) -> Match:
    """A match between `versions`, claimed and recorded by the recording service."""
    from ladder.matches.claims import match_claim

    match = match_create(versions=versions)
    claim = match_claim(match_id=match.pk)
    assert claim is not None
    seats = list(match_seats(match_id=match.pk))
    return _match_record(claim=claim, seats=seats, played=_played(len(seats), rng))


def _records() -> tuple[dict[Any, tuple[Any, ...]], dict[Any, tuple[Any, ...]]]:
    seats = {
        (r.bot_id, r.seat): (
            r.games,
            r.wins,
            r.places,
            r.opponents,
            r.beaten,
            r.timed_out,
            r.crashed,
        )
        for r in BotSeatRecord.objects.all()
    }
    pairs = {
        (r.bot_id, r.opponent_id): (r.games, r.ahead, r.tied)
        for r in BotOpponentRecord.objects.all()
    }
    return seats, pairs


def test_kept_records_equal_a_recomputation_after_many_recorded_matches(
    valid_version: Any,
) -> None:
    versions = [valid_version(f"b{i}") for i in range(6)]
    rng = random.Random(25)
    for _ in range(40):
        _record(rng.sample(versions, rng.randint(2, 6)), rng)
    kept = _records()
    assert sum(games for games, *_ in kept[0].values()) == sum(
        m.seats.count() for m in Match.objects.all()
    )
    bot_records_rebuild()
    assert _records() == kept


def test_the_peak_is_kept_as_ratings_change(valid_version: Any, owners: Any) -> None:
    """Each change carries the best rating before it (what a milestone is measured against),
    and the rating row the best so far: nothing scans a bot's history for them."""
    # Four owners: a table of one owner's bots is recorded unrated.
    versions = [valid_version(f"b{i}", by=by) for i, by in enumerate(owners(4))]
    rng = random.Random(3)
    for _ in range(30):
        _record(rng.sample(versions, 3), rng)
    for change in RatingChange.objects.order_by("id"):
        earlier = RatingChange.objects.filter(
            bot_id=change.bot_id, ruleset=change.ruleset, id__lt=change.pk
        ).aggregate(after=Max("after"), before=Max("before"))
        expected = max([change.before, *(v for v in earlier.values() if v is not None)])
        assert change.peak_before == pytest.approx(expected)
    assert RatingChange.objects.count() == 90  # every match rated
    for rating in BotRating.objects.filter(games__gt=0):
        best = RatingChange.objects.filter(bot_id=rating.bot_id, ruleset=rating.ruleset)
        values = best.aggregate(after=Max("after"), before=Max("before"))
        assert rating.peak == pytest.approx(max(values.values()))


def test_recording_stores_the_log_and_no_replay(valid_version: Any) -> None:
    """The replay document (4.4 times the log) is computed on first view and cached, not at
    recording: the only file a match leaves is its log."""
    match = _record([valid_version("a"), valid_version("b")], random.Random(1))
    assert match.status == Match.Status.FINISHED
    assert match.log and not match.replay


def _ids(response: Any) -> list[int]:
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


def _walk(client: Any, params: dict[str, Any], between: Any = None) -> list[int]:
    """Every id of a list, following `next` (calling `between` after the first page)."""
    seen: list[int] = []
    response = client.get("/api/matches/", {**params, "page_size": 3})
    first = True
    while True:
        seen += _ids(response)
        if first and between is not None:
            between()
        first = False
        link = response.json()["next"]
        if not link:
            return seen
        response = client.get(link)


def test_cursor_pages_neither_skip_nor_repeat_a_match_created_meanwhile(
    api: Any, valid_version: Any, finished_match: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With page numbers, a match created while a client walks the list shifts every later
    page by one: the client sees a match twice. Keyset pages go on from the last id seen."""
    from ladder.matches.apis import MatchListApi

    monkeypatch.setattr(MatchListApi.Pagination, "page_size", 3)
    a, b, c = valid_version("a"), valid_version("b"), valid_version("c")
    made = [finished_match([a, b] if i % 2 else [b, c], [1, 2]).pk for i in range(10)]
    client = api("anonymous")

    walked = _walk(client, {}, between=lambda: made.append(match_create(versions=[a, c]).pk))
    assert walked == sorted(made[:10], reverse=True)  # each once, newest first, none skipped

    of_b = _walk(client, {"bot": b.bot_id})
    assert of_b == sorted(made[:10], reverse=True)
    of_a = _walk(client, {"bot": a.bot_id}, between=lambda: finished_match([a, b], [1, 2]))
    assert of_a == sorted([m for i, m in enumerate(made) if i % 2 or i == 10], reverse=True)


def test_a_deep_cursor_page_reads_from_its_key_and_the_count_is_kept_cheap(
    api: Any, valid_version: Any, finished_match: Any
) -> None:
    a, b = valid_version("a"), valid_version("b")
    made = [finished_match([a, b], [1, 2]).pk for _ in range(6)]
    client = api("anonymous")
    body = client.get("/api/matches/", {"cursor": keyset_cursor(position=made[3])}).json()
    assert [row["id"] for row in body["results"]] == made[2::-1]
    assert (body["count"], body["count_exact"]) == (6, True)
    body = client.get(
        "/api/matches/", {"bot": a.bot_id, "cursor": keyset_cursor(position=made[1])}
    ).json()
    assert [row["id"] for row in body["results"]] == [made[0]]


def test_page_numbers_still_work_for_older_clients_up_to_a_bound(
    api: Any, valid_version: Any, finished_match: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ladder.matches.apis import MatchListApi

    monkeypatch.setattr(MatchListApi.Pagination, "page_size", 2)
    a, b = valid_version("a"), valid_version("b")
    made = [finished_match([a, b], [1, 2]).pk for _ in range(5)]
    client = api("anonymous")
    pages = [client.get("/api/matches/", {"page": n}).json() for n in (1, 2, 3)]
    assert [[r["id"] for r in p["results"]] for p in pages] == [
        made[:2:-1][:2],
        [made[2], made[1]],
        [made[0]],
    ]
    assert pages[0]["next"].endswith("page=2") and pages[2]["next"] is None
    assert client.get("/api/matches/", {"page": 4}).status_code == 404
    deep = client.get("/api/matches/", {"page": LEGACY_PAGES + 1})
    assert deep.status_code == 400 and "next" in deep.json()["page"][0]


def test_the_bot_page_reads_its_kept_records(client: Any, valid_version: Any) -> None:
    versions = [valid_version(f"b{i}") for i in range(4)]
    rng = random.Random(9)
    for _ in range(12):
        _record(rng.sample(versions, 3), rng)
    bot = versions[0].bot_id
    games = sum(r.games for r in BotSeatRecord.objects.filter(bot_id=bot))
    response = client.get(f"/bots/{bot}/")
    assert response.status_code == 200
    assert f"Of {games} finished game" in response.content.decode()


# ------------------------------------------------------------------ retention


def _age(match: Match, days: int) -> None:
    from datetime import timedelta

    from django.utils import timezone

    Match.objects.filter(pk=match.pk).update(finished=timezone.now() - timedelta(days=days))


def test_retention_deletes_old_unwatched_files_and_keeps_results(
    valid_version: Any, settings: Any
) -> None:
    from datetime import timedelta

    a, b = valid_version("a"), valid_version("b")
    rng = random.Random(2)
    old, watched, recent = (_record([a, b], rng) for _ in range(3))
    _age(old, 40)
    _age(watched, 40)
    match_viewed(match_id=watched.pk)
    changes = RatingChange.objects.count()
    storage = Match.log.field.storage
    assert storage.exists(old.log.name)

    settings.GRASS_MATCH_FILES_KEEP_DAYS = 0
    assert match_files_expire() == []  # 0: keep everything
    settings.GRASS_MATCH_FILES_KEEP_DAYS = 30
    assert match_files_expire() == [old.pk]
    assert not storage.exists(old.log.name)
    assert storage.exists(watched.log.name) and storage.exists(recent.log.name)
    old.refresh_from_db()
    assert not old.log and old.files_expired is not None
    assert old.status == Match.Status.FINISHED and old.result is not None
    assert RatingChange.objects.count() == changes  # ratings untouched
    assert match_files_expire(older_than=timedelta(days=30)) == []  # done once


def test_retention_never_deletes_a_tournament_games_log(
    valid_version: Any, settings: Any, api: Any
) -> None:
    from ladder.tournaments.models import Round, Table, TableGame, Tournament

    a, b = valid_version("a"), valid_version("b")
    game = _record([a, b], random.Random(4))
    ladder_game = _record([a, b], random.Random(5))
    from django.utils import timezone

    now = timezone.now()
    tournament = Tournament.objects.create(
        name="cup",
        organiser=a.bot.owner,
        seats=2,
        registration_opens=now,
        registration_closes=now,
        starts_at=now,
    )
    table = Table.objects.create(
        round=Round.objects.create(tournament=tournament, number=1), number=1, seats=[]
    )
    TableGame.objects.create(table=table, match=game)
    _age(game, 400)
    _age(ladder_game, 400)
    settings.GRASS_MATCH_FILES_KEEP_DAYS = 30
    assert match_files_expire() == [ladder_game.pk]
    game.refresh_from_db()
    assert game.log and Match.log.field.storage.exists(game.log.name)
    # The deleted log says why, in the API and on the page.
    response = api("anonymous").get(f"/api/matches/{ladder_game.pk}/log/")
    assert response.status_code == 410
    assert "deleted" in response.json()["detail"]


def test_viewing_a_replay_is_written_at_most_once_a_day(valid_version: Any) -> None:
    match = _record([valid_version("a"), valid_version("b")], random.Random(6))
    match_viewed(match_id=match.pk)
    first = Match.objects.get(pk=match.pk).viewed
    assert first is not None
    match_viewed(match_id=match.pk)
    assert Match.objects.get(pk=match.pk).viewed == first


def test_the_admins_match_list_estimates_its_size(
    admin_client: Any, valid_version: Any, finished_match: Any
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    a, b = valid_version("a"), valid_version("b")
    for _ in range(3):
        finished_match([a, b], [1, 2])
    with CaptureQueriesContext(connection) as captured:
        response = admin_client.get("/admin/matches/match/")
    assert response.status_code == 200
    counts = [q["sql"] for q in captured if q["sql"].startswith("SELECT COUNT(*)")]
    # Bounded (a LIMIT inside): never a COUNT of the whole table.
    assert counts and all("LIMIT" in sql for sql in counts if "matches_match" in sql)


def test_the_match_lists_rows_are_what_the_output_serializer_gives(
    valid_version: Any, finished_match: Any
) -> None:
    from ladder.matches.apis import MatchListApi
    from ladder.matches.selectors import match_keys, matches_in_order

    a, b, c = valid_version("a"), valid_version("b"), valid_version("c")
    finished_match([a, b, c], [2, 1, 2])
    match_create(versions=[a, c])  # queued: no places, no finish time
    rows = matches_in_order([row["key"] for row in match_keys()])
    assert len(rows) == 2
    for match in rows:
        assert MatchListApi.output(match) == MatchListApi.OutputSerializer(match).data


def test_a_bots_list_reads_its_page_from_its_seats_alone(
    api: Any, valid_version: Any, finished_match: Any
) -> None:
    """The page's keys come from the bot's seats with no join (a join's plan read 1.4M match
    ids from the newest down for a bot whose games were old: 400 ms at 10M), then its matches
    by id; the other filters still apply, through each seat's match."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    a, b, c = valid_version("a"), valid_version("b"), valid_version("c")
    done = [finished_match([a, b], [1, 2]).pk for _ in range(3)]
    other = finished_match([b, c], [1, 2]).pk
    queued = match_create(versions=[a, c]).pk
    client = api("anonymous")
    with CaptureQueriesContext(connection) as captured:
        body = client.get("/api/matches/", {"bot": a.bot_id}).json()
    assert [row["id"] for row in body["results"]] == [queued, *done[::-1]]
    assert (body["count"], body["count_exact"]) == (4, True)
    keyed = [q["sql"] for q in captured if '"key"' in q["sql"] and "COUNT" not in q["sql"]]
    assert keyed and all("JOIN" not in sql for sql in keyed), keyed
    assert all('FROM "matches_matchseat"' in sql for sql in keyed), keyed

    finished = client.get("/api/matches/", {"bot": a.bot_id, "status": "finished"}).json()
    assert [row["id"] for row in finished["results"]] == done[::-1]
    of_b = client.get("/api/matches/", {"bot": b.bot_id, "ruleset": "classic"}).json()
    assert of_b["results"] == []
    assert other in [
        row["id"] for row in client.get("/api/matches/", {"bot": c.bot_id}).json()["results"]
    ]
