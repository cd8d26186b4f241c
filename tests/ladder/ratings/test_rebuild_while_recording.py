"""A rebuild that writes (`rating_rebuild(apply=True)`, the admin's Void) does not keep matches
from being rated while it runs: only its last step locks the ratings, and the matches rated
meanwhile are rated again on the rebuilt table."""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest
from django.db import connection, transaction

from ladder.matches.models import Match
from ladder.ratings.elo import recompute
from ladder.ratings.models import BotRating
from ladder.ratings.rebuild import rating_rebuild
from ladder.ratings.services import rating_apply
from tests.ladder.conftest import rated_games

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_match_is_rated_while_a_rebuild_runs_and_counts_after_it(
    valid_version: Any, finished_match: Any
) -> None:
    versions = [valid_version(f"bot{i}") for i in range(5)]
    rng = random.Random(3)
    matches = []
    for _ in range(12):
        table = rng.sample(versions, 3)
        match = finished_match(table, [1, 2, 3])
        rating_apply(match=match)
        matches.append(match)
    Match.objects.filter(pk=matches[0].pk).update(rated=False)  # voided: rebuild it out

    halfway = threading.Event()
    go_on = threading.Event()
    seen = 0
    failure: list[BaseException] = []

    def pause() -> None:
        nonlocal seen
        seen += 1
        if seen == 5:
            halfway.set()
            assert go_on.wait(30)

    def rebuild() -> None:
        try:
            rating_rebuild(ruleset="modern", apply=True, on_match=pause)
        except BaseException as exc:  # reported to the test below
            failure.append(exc)
            halfway.set()
        finally:
            connection.close()

    worker = threading.Thread(target=rebuild)
    worker.start()
    try:
        assert halfway.wait(30)
        # Mid-rebuild, a match is recorded and rated: it must not wait for the rebuild (with
        # the old table lock this failed on the lock timeout).
        late = finished_match(versions[:3], [3, 1, 2])
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '3s'")
            assert rating_apply(match=late)
    finally:
        go_on.set()
        worker.join(60)
    assert not failure, failure
    # The late match counts, on top of the rebuilt history: the table is what replaying the
    # remaining history gives, in the order it was rated.
    expected = recompute(rated_games(ruleset="modern"))
    stored = {r.bot_id: r for r in BotRating.objects.filter(ruleset="modern", games__gt=0)}
    assert stored.keys() == expected.ratings.keys()
    for bot_id, rating in expected.ratings.items():
        assert stored[bot_id].mu == pytest.approx(rating.mu)
        assert stored[bot_id].games == rating.games
    assert sum(r.games for r in stored.values()) == 3 * 12  # 11 rebuilt + the late one
    assert rating_rebuild(ruleset="modern").differences == []
