"""Rebuilding a ruleset's ratings from its matches (`ladder.ratings.rebuild`, `manage.py
ratings_rebuild`): nothing to change on an untouched ladder; new constants and voided matches
give exactly what `elo.recompute` gives for the remaining history."""

from __future__ import annotations

import random
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from ladder.matches.models import Match
from ladder.ratings.elo import DEFAULT_PARAMS, EloParams, recompute
from ladder.ratings.models import BotRating, RatingChange
from ladder.ratings.rebuild import rating_rebuild
from ladder.ratings.services import rating_apply
from tests.ladder.conftest import rated_games

pytestmark = pytest.mark.django_db


@pytest.fixture
def ladder(valid_version: Any, finished_match: Any) -> list[Match]:
    """Five bots, fifteen rated modern matches (ties included), one classic match."""
    versions = [valid_version(f"bot{i}") for i in range(5)]
    rng = random.Random(11)
    matches = []
    for _ in range(15):
        table = rng.sample(versions, rng.randint(2, 5))
        match = finished_match(table, [rng.randint(1, len(table)) for _ in table])
        rating_apply(match=match)
        matches.append(match)
    rating_apply(match=finished_match(versions[:2], [1, 2], ruleset="classic"))
    return matches


def _stored(ruleset: str = "modern") -> dict[int, tuple[float, int, int]]:
    return {r.bot_id: (r.mu, r.games, r.wins) for r in BotRating.objects.filter(ruleset=ruleset)}


def test_an_untouched_ladder_has_nothing_to_change(ladder: list[Match]) -> None:
    before = _stored()
    changes = list(RatingChange.objects.values_list("match_id", "bot_id", "after"))
    report = rating_rebuild(ruleset="modern")
    assert (report.matches, report.bots, report.differences) == (15, 5, [])
    assert _stored() == before
    assert list(RatingChange.objects.values_list("match_id", "bot_id", "after")) == changes
    # Applying it rewrites the same numbers.
    rating_rebuild(ruleset="modern", apply=True)
    assert _stored().keys() == before.keys()
    for bot_id, (mu, games, wins) in _stored().items():
        assert (pytest.approx(mu), games, wins) == before[bot_id]


def test_new_constants_rebuild_the_table_and_the_history(ladder: list[Match]) -> None:
    classic = _stored("classic")
    params = EloParams(k0=64.0, k_games=10.0)
    report = rating_rebuild(ruleset="modern", apply=True, params=params)
    assert report.applied and len(report.differences) == 5
    expected = recompute(rated_games(ruleset="modern"), params)
    assert expected.ratings.keys() == _stored().keys()
    for bot_id, rating in expected.ratings.items():
        mu, games, _ = _stored()[bot_id]
        assert (mu, games) == (pytest.approx(rating.mu), rating.games)
    # The recorded history is the new one: replaying it with the new constants agrees change
    # by change, and every change's before is the previous change's after.
    flat = [c for game in expected.games for c in game]
    stored = RatingChange.objects.filter(ruleset="modern").order_by("id")
    assert [(c.bot_id, c.after) for c in stored] == [
        (c.player, pytest.approx(c.after.mu)) for c in flat
    ]
    assert _stored("classic") == classic  # another ruleset is left alone
    assert rating_rebuild(ruleset="modern", params=params).differences == []


def test_a_voided_match_is_taken_out_of_every_rating(ladder: list[Match]) -> None:
    voided = ladder[0]
    Match.objects.filter(pk=voided.pk).update(rated=False)
    dry = rating_rebuild(ruleset="modern")
    assert dry.matches == 14 and dry.differences and not dry.applied
    assert RatingChange.objects.filter(match=voided).exists()  # a dry run writes nothing

    rating_rebuild(ruleset="modern", apply=True)
    assert not RatingChange.objects.filter(match=voided).exists()
    history = [
        [(seat.bot_version.bot_id, seat.place) for seat in m.seats.order_by("seat")]
        for m in ladder[1:]
    ]
    expected = recompute(history, DEFAULT_PARAMS)
    for bot_id, (mu, games, wins) in _stored().items():
        rating = expected.ratings.get(bot_id, DEFAULT_PARAMS.new_rating())
        assert (mu, games) == (pytest.approx(rating.mu), rating.games)
        firsts = RatingChange.objects.filter(bot_id=bot_id, ruleset="modern", place=1).count()
        assert wins == firsts


def test_a_bot_whose_only_match_is_voided_starts_again(
    valid_version: Any, finished_match: Any
) -> None:
    a, b = valid_version("a"), valid_version("b")
    match = finished_match([a, b], [1, 2])
    rating_apply(match=match)
    Match.objects.filter(pk=match.pk).update(rated=False)
    rating_rebuild(ruleset="modern", apply=True)
    assert set(_stored().values()) == {(DEFAULT_PARAMS.initial, 0, 0)}


def test_the_command_reports_then_applies(ladder: list[Match]) -> None:
    Match.objects.filter(pk=ladder[3].pk).update(rated=False)
    out = StringIO()
    call_command("ratings_rebuild", "--ruleset", "modern", stdout=out)
    assert "14 rated matches" in out.getvalue() and "dry run" in out.getvalue()
    assert RatingChange.objects.filter(match=ladder[3]).exists()
    out = StringIO()
    call_command("ratings_rebuild", "--ruleset", "modern", "--apply", stdout=out)
    assert "applied" in out.getvalue()
    assert not RatingChange.objects.filter(match=ladder[3]).exists()
    out = StringIO()
    call_command("ratings_rebuild", stdout=out)  # every ruleset, nothing left to change
    assert "0 bots differ" in out.getvalue() and "classic" in out.getvalue()
    with pytest.raises(CommandError, match="unknown ruleset 'poker'"):
        call_command("ratings_rebuild", "--ruleset", "poker")


def test_the_admin_voids_matches_and_a_task_rebuilds_their_ratings(
    ladder: list[Match],
    admin_client: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """The request only clears `rated` and sends the rebuild to a worker: on a big ladder a
    rebuild takes minutes, and it used to run inside the request."""
    from ladder.ratings import tasks

    sent: list[str] = []
    monkeypatch.setattr(tasks.rebuild_ratings, "delay", sent.append)
    before = _stored()
    voided = ladder[:2]
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/admin/matches/match/",
            {"action": "void", "_selected_action": [m.pk for m in voided]},
            follow=True,
        )
    assert response.status_code == 200
    assert "Voided. The ratings of modern are being rebuilt by a task" in (
        response.content.decode()
    )
    assert not Match.objects.filter(pk__in=[m.pk for m in voided], rated=True).exists()
    assert sent == ["modern"]
    assert _stored() == before  # nothing rebuilt in the request
    assert RatingChange.objects.filter(match__in=voided).exists()

    assert tasks.rebuild_ratings("modern")["matches"] == 13
    assert not RatingChange.objects.filter(match__in=voided).exists()
    assert rating_rebuild(ruleset="modern").differences == []
    assert sum(games for _, games, _ in _stored().values()) == sum(
        m.seats.count() for m in ladder[2:]
    )


def test_a_rebuild_streams_its_matches(ladder: list[Match]) -> None:
    """The matches come from a server-side cursor, a chunk at a time: no list of every id."""
    from ladder.ratings.rebuild import rated_matches

    stream = rated_matches(ruleset="modern")
    assert not isinstance(stream, list)
    assert len(list(stream)) == 15
