"""A rated match is checked against the seating circles again when it is recorded (issue 33).

The attack (docs/fairplay.md, found by a cheater's pass): the matchmaker seats two accounts'
bots together while the site does not link them; the accounts are linked before the match is
played (staff, or a sign-up that links them); the match was still played rated, and the feeder
fed the partner a rating.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from ladder.accounts.services import account_house_set, accounts_link
from ladder.matches.models import Match
from ladder.matches.services import match_create, match_run
from ladder.ratings.models import BotRating, RatingChange

pytestmark = pytest.mark.django_db


def run(match: Match, capture: Any) -> Match:
    """Run the match in this process, its on-commit work done (fair play's task recorded)."""
    with capture(execute=True):
        match_run(match_id=match.pk)
    match.refresh_from_db()
    return match


@pytest.fixture
def flows_sent(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from ladder.fairplay import tasks

    sent: list[int] = []
    monkeypatch.setattr(tasks.match_flows, "delay", sent.append)
    return sent


def test_a_match_queued_before_its_owners_were_linked_is_played_unrated(
    owners: Any,
    valid_version: Any,
    sandbox_ready: None,
    flows_sent: list[int],
    caplog: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    ann, cy = owners(2)
    feeder = valid_version("feeder", "greedy", by=ann)
    partner = valid_version("partner", "greedy", by=cy)
    match = match_create(versions=[feeder, partner], limits={"max_hands": 1})
    assert match.rated  # queued while the site did not link the two accounts
    accounts_link(user_ids=[ann.pk, cy.pk], reason="staff: one person")

    with caplog.at_level(logging.WARNING, logger="ladder.matches.recording"):
        match = run(match, django_capture_on_commit_callbacks)

    assert match.status == Match.Status.FINISHED and not match.rated
    assert "played unrated" in match.failure_reason
    assert "author0/feeder" in match.failure_reason and "author1/partner" in match.failure_reason
    assert f"match {match.pk}: played unrated" in caplog.text
    assert not RatingChange.objects.filter(match=match).exists()
    ratings = BotRating.objects.filter(bot_id__in=[feeder.bot_id, partner.bot_id])
    assert {(r.mu, r.games) for r in ratings} <= {(1500.0, 0)}
    assert flows_sent == []  # not rated: no pair's collusion test reads it


def test_matches_of_unlinked_owners_and_of_the_house_stay_rated(
    owners: Any,
    valid_version: Any,
    django_user_model: Any,
    sandbox_ready: None,
    flows_sent: list[int],
    django_capture_on_commit_callbacks: Any,
) -> None:
    ann, cy = owners(2)
    house = django_user_model.objects.create_user(username="examples")
    account_house_set(user_id=house.pk)
    tables = [
        [valid_version("a", "greedy", by=ann), valid_version("c", "random", by=cy)],
        [valid_version("greedy", "greedy", by=house), valid_version("random", by=house)],
    ]
    for versions in tables:
        match = run(
            match_create(versions=versions, limits={"max_hands": 1}),
            django_capture_on_commit_callbacks,
        )
        assert match.status == Match.Status.FINISHED and match.rated
        assert match.failure_reason == ""
        assert RatingChange.objects.filter(match=match).count() == 2
        assert flows_sent[-1] == match.pk
