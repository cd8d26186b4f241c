"""rating_apply: the stored ratings are exactly what elo.recompute gives for the history."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.db import IntegrityError

from ladder.ratings.elo import recompute
from ladder.ratings.models import BotRating, RatingChange
from ladder.ratings.selectors import rating_history
from ladder.ratings.services import rating_apply

pytestmark = pytest.mark.django_db


def test_applied_ratings_match_a_recomputation_of_the_history(
    valid_version: Any, finished_match: Any
) -> None:
    versions = [valid_version(f"bot{i}") for i in range(5)]
    rng = random.Random(4)
    for _ in range(12):
        table = rng.sample(versions, rng.randint(2, 5))
        places = [rng.randint(1, len(table)) for _ in table]  # ties included
        rating_apply(match=finished_match(table, places))
    # Another ruleset is rated apart.
    rating_apply(match=finished_match(versions[:2], [2, 1], ruleset="classic"))

    expected = recompute(rating_history(ruleset="modern"))

    stored = {r.bot_id: r for r in BotRating.objects.filter(ruleset="modern")}
    assert stored.keys() == expected.ratings.keys()
    for bot_id, rating in expected.ratings.items():
        assert stored[bot_id].mu == pytest.approx(rating.mu, abs=1e-9)
        assert stored[bot_id].games == rating.games
    changes = list(RatingChange.objects.filter(ruleset="modern").order_by("id"))
    flat = [change for game in expected.games for change in game]
    assert [(c.bot_id, c.before, c.after, c.games_before) for c in changes] == [
        (c.player, pytest.approx(c.before.mu), pytest.approx(c.after.mu), c.before.games)
        for c in flat
    ]
    classic = BotRating.objects.filter(ruleset="classic")
    assert sorted(classic.values_list("games", flat=True)) == [1, 1]


def test_a_match_is_rated_once(valid_version: Any, finished_match: Any) -> None:
    match = finished_match([valid_version("a"), valid_version("b")], [1, 2])
    assert len(rating_apply(match=match)) == 2
    assert rating_apply(match=match) == []
    assert list(BotRating.objects.values_list("games", flat=True)) == [1, 1]

    # And the database refuses a second row for the same match and bot whatever the code does.
    change = RatingChange.objects.first()
    assert change is not None
    change.pk = None
    with pytest.raises(IntegrityError):
        change.save()


def test_only_finished_matches_are_rated(valid_version: Any, finished_match: Any) -> None:
    match = finished_match([valid_version("a"), valid_version("b")], [1, 2])
    match.status = match.Status.RUNNING
    with pytest.raises(ValueError, match="not finished"):
        rating_apply(match=match)
