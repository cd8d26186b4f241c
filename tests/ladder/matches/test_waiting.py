"""Where a queued match stands (issue 35, `ladder.matchmaking.waiting`): its place in its
queue (its lane's matches queued before it, and on the shared `now` queue every lane taken
first), about when it starts (its lane's latest games' median time, over its places), and
the match API, page and live table that show it.

The tests' capacity (ladder/settings_test.py): 4 background matches, 2 played at once
(GRASS_MATCHES_PER_WORKER_PROCESS); a `now` pool of 4: 2 places for people's games, 1 for
challenges, 1 for first games."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from ladder.matches.lanes import Lane
from ladder.matches.models import Match
from ladder.matches.selectors import lane_latest_games, lane_typical_seconds, match_queue_ahead
from ladder.matchmaking.capacity import match_places
from ladder.matchmaking.waiting import Place, duration, estimate_seconds, match_place, ordinal

pytestmark = pytest.mark.django_db

T0 = timezone.now() - timedelta(hours=1)


def queued(lane: Lane | None = None, at: int = 0) -> Match:
    """A match queued `at` seconds after T0 (no seats: the place reads none)."""
    return Match.objects.create(lane=lane, queued=T0 + timedelta(seconds=at))


def running(lane: Lane | None = None) -> Match:
    return Match.objects.create(lane=lane, status=Match.Status.RUNNING, started=T0)


def played(lane: Lane | None, seconds: float, *, ended: datetime | None = None) -> Match:
    """A finished game of `lane` that took `seconds` from start to end."""
    end = ended or timezone.now()
    return Match.objects.create(
        lane=lane,
        status=Match.Status.FINISHED,
        started=end - timedelta(seconds=seconds),
        finished=end,
    )


def test_a_lane_queue_is_first_queued_first_taken() -> None:
    first, second = queued(at=0), queued(at=5)
    tied = queued(at=5)  # queued at the same time as `second`, after it: behind it
    running()  # taken already: ahead of nobody
    queued(Lane.CHALLENGE, at=-60)  # another queue
    Match.objects.create(status=Match.Status.FINISHED, queued=T0 - timedelta(seconds=9))
    assert [match_queue_ahead(match=m) for m in (first, second, tied)] == [0, 1, 2]


def test_on_the_now_queue_a_lower_lane_is_taken_first(settings: Any) -> None:
    settings.GRASS_PLAY_QUEUE = "now"  # people's games on the `now` pool, as a site may say
    first_game = queued(Lane.FIRST, at=0)
    challenge = queued(Lane.CHALLENGE, at=10)
    person = queued(Lane.PERSON, at=20)
    later_challenge = queued(Lane.CHALLENGE, at=30)
    queued(None, at=-100)  # a background game: the `matches` queue, not this one
    assert match_queue_ahead(match=person) == 0
    assert match_queue_ahead(match=challenge) == 1  # the person's game
    assert match_queue_ahead(match=later_challenge) == 2
    assert match_queue_ahead(match=first_game) == 3  # every other queued one
    # People's games on the table hosts' queue (the default): behind nothing of the others'.
    settings.GRASS_PLAY_QUEUE = "tables"
    assert match_queue_ahead(match=challenge) == 0
    assert match_queue_ahead(match=first_game) == 2


def test_a_lanes_typical_game_is_the_median_of_its_latest() -> None:
    assert lane_typical_seconds(lane=None) is None  # nothing played yet
    long_ago = timezone.now() - timedelta(days=1)
    for _ in range(10):
        played(None, 900, ended=long_ago)  # older than the 20 latest: not read
    for seconds in [60] * 10 + [100] + [200] * 9:
        played(None, seconds)
    played(Lane.CHALLENGE, 5)  # another lane's
    Match.objects.create(status=Match.Status.FAILED, started=T0, finished=timezone.now())
    assert lane_typical_seconds(lane=None) == 80.0  # (60 + 100) / 2: the median of 20
    assert lane_typical_seconds(lane=Lane.CHALLENGE) == 5.0
    assert lane_typical_seconds(lane=Lane.FIRST) is None


@pytest.mark.parametrize(
    ("lane", "index"), [(None, "match_background_finished"), (Lane.FIRST, "match_lane_finished")]
)
def test_a_lanes_latest_games_are_the_first_rows_of_an_index(lane: Lane | None, index: str) -> None:
    with connection.cursor() as cursor:
        # A table of a few rows is read whole whatever the indexes; forbid that to see the
        # plan PostgreSQL uses on a real ladder: the index's first rows, in its order.
        cursor.execute("SET LOCAL enable_seqscan = off")
    plan = lane_latest_games(lane=lane).explain()
    assert index in plan and "Sort" not in plan, plan


def test_the_estimate() -> None:
    # A free place takes it: now, whatever the history says.
    assert estimate_seconds(ahead=1, free=2, places=2, typical=None) == 0
    # Every place busy: its turn comes after the games ahead and one more end.
    assert estimate_seconds(ahead=0, free=0, places=2, typical=100) == 50
    assert estimate_seconds(ahead=3, free=1, places=2, typical=100) == 150
    assert estimate_seconds(ahead=0, free=-1, places=1, typical=100) == 100
    # Nothing to go by: no game played yet, or no worker at all.
    assert estimate_seconds(ahead=0, free=0, places=1, typical=None) is None
    assert estimate_seconds(ahead=0, free=0, places=0, typical=100) is None


def test_a_queued_background_game_waits_for_the_games_ahead() -> None:
    assert match_places() == 2  # capacity 4, two matches per worker process
    for seconds in (60, 100, 140):
        played(None, seconds)
    running()
    first, second, third = queued(at=0), queued(at=1), queued(at=2)
    assert match_place(first) == Place(lane="background", ahead=0, estimate_s=0)  # a free place
    assert match_place(second) == Place(lane="background", ahead=1, estimate_s=50)
    assert match_place(third) == Place(lane="background", ahead=2, estimate_s=100)
    running()
    assert match_place(first) == Place(lane="background", ahead=0, estimate_s=50)
    Match.objects.filter(pk=first.pk).update(status=Match.Status.RUNNING)
    first.refresh_from_db()
    assert match_place(first) is None  # taken: it waits no more
    assert match_place(second) == Place(lane="background", ahead=0, estimate_s=50)


def test_a_place_reads_the_same_rows_however_many_games_were_played(
    django_assert_num_queries: Any,
) -> None:
    Match.objects.bulk_create(
        Match(lane=Lane.CHALLENGE, status=Match.Status.FINISHED, started=T0, finished=T0)
        for _ in range(300)
    )
    running(Lane.CHALLENGE)
    match = queued(Lane.CHALLENGE)
    with django_assert_num_queries(3):  # those ahead, those running, the latest games' times
        place = match_place(match)
    assert place == Place(lane="challenge", ahead=0, estimate_s=0)


def test_as_said() -> None:
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "111th"
    ]  # fmt: skip
    assert [duration(s) for s in (0, 40, 89, 90, 600, 5399, 5400)] == [
        "0 s", "40 s", "89 s", "2 min", "10 min", "90 min", "2 h"
    ]  # fmt: skip
    assert Place("background", 2, 40).text == "3rd in the queue, about 40 s"
    assert Place("challenge", 0, 0).text == "1st in the queue, starting in a moment"
    assert Place("first", 1, None).text == "2nd in the queue"


def test_the_match_api_says_where_a_queued_match_stands(api: Any) -> None:
    played(None, 100)
    running()
    running()
    ahead = queued(at=0)
    match = queued(at=1)
    answer = api("anonymous").get(f"/api/matches/{match.pk}/")
    assert answer.status_code == 200
    assert answer.json()["queue"] == {
        "position": 2,
        "ahead": 1,
        "estimate_seconds": 100,  # two games to end, on two places, a game every 100 s
        "lane": "background",
    }
    Match.objects.filter(pk=ahead.pk).update(status=Match.Status.RUNNING)
    assert api("anonymous").get(f"/api/matches/{match.pk}/").json()["queue"]["position"] == 1
    Match.objects.filter(pk=match.pk).update(status=Match.Status.RUNNING, started=timezone.now())
    assert api("anonymous").get(f"/api/matches/{match.pk}/").json()["queue"] is None


def test_the_match_page_says_where_a_queued_match_stands(client: Any) -> None:
    played(Lane.FIRST, 30)
    running(Lane.FIRST)  # the first games' one place
    match = queued(Lane.FIRST)
    page = client.get(f"/matches/{match.pk}/").content.decode()
    assert 'data-position="1"' in page
    assert "Waiting for a worker: 1st in the queue, about 30 s." in page
    Match.objects.filter(pk=match.pk).update(status=Match.Status.RUNNING)
    page = client.get(f"/matches/{match.pk}/").content.decode()
    assert "data-match-queue" not in page and "in the queue" not in page
