"""rating_apply: the stored ratings are exactly what elo.recompute gives for the history."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.db import IntegrityError

from ladder.ratings.elo import recompute
from ladder.ratings.models import BotRating, RatingChange
from ladder.ratings.services import rating_apply, rating_wins_recount
from tests.ladder.conftest import rated_games

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

    expected = recompute(rated_games(ruleset="modern"))

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
    classic = BotRating.objects.filter(ruleset="classic", games__gt=0)
    assert sorted(classic.values_list("games", flat=True)) == [1, 1]
    _assert_wins_are_first_places()


def _assert_wins_are_first_places() -> None:
    """Every rating's wins is its number of first places (shared ones too) in its ruleset."""
    for rating in BotRating.objects.all():
        firsts = RatingChange.objects.filter(bot=rating.bot, ruleset=rating.ruleset, place=1)
        assert rating.wins == firsts.count(), rating


def test_wins_count_first_places_shared_ones_included(
    valid_version: Any, finished_match: Any
) -> None:
    a, b, c = valid_version("a"), valid_version("b"), valid_version("c")
    rating_apply(match=finished_match([a, b, c], [1, 2, 3]))
    rating_apply(match=finished_match([a, b, c], [1, 1, 3]))  # a shared first
    rating_apply(match=finished_match([a, b], [2, 1], ruleset="classic"))
    wins = {
        (r.bot.name, r.ruleset): r.wins
        for r in BotRating.objects.filter(games__gt=0).select_related("bot")
    }
    assert wins == {
        ("a", "modern"): 2,
        ("b", "modern"): 1,
        ("c", "modern"): 0,
        ("a", "classic"): 0,
        ("b", "classic"): 1,
    }
    # Applying a match twice changes nothing, wins included.
    match = finished_match([a, c], [1, 2])
    rating_apply(match=match)
    rating_apply(match=match)
    assert BotRating.objects.get(bot=a.bot, ruleset="modern").wins == 3
    _assert_wins_are_first_places()


def test_the_recount_restores_wins_from_the_rating_changes(
    valid_version: Any, finished_match: Any
) -> None:
    """What the migration that added `wins` runs for the rows it finds."""
    versions = [valid_version(f"bot{i}") for i in range(4)]
    rng = random.Random(7)
    for _ in range(10):
        table = rng.sample(versions, rng.randint(2, 4))
        rating_apply(match=finished_match(table, [rng.randint(1, 2) for _ in table]))
    rating_apply(match=finished_match(versions[:2], [1, 2], ruleset="classic"))
    expected = dict(BotRating.objects.values_list("id", "wins"))
    assert any(expected.values())
    BotRating.objects.update(wins=0)
    BotRating.objects.filter(pk=min(expected)).update(wins=99)

    assert rating_wins_recount() == len(expected)

    assert dict(BotRating.objects.values_list("id", "wins")) == expected
    _assert_wins_are_first_places()


def test_a_match_is_rated_once(valid_version: Any, finished_match: Any) -> None:
    match = finished_match([valid_version("a"), valid_version("b")], [1, 2])
    assert len(rating_apply(match=match)) == 2
    assert rating_apply(match=match) == []
    assert list(BotRating.objects.filter(games__gt=0).values_list("games", flat=True)) == [1, 1]

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
