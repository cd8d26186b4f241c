"""GET /api/leaderboard/: rated bots, best first, with band, games and win rate."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

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
