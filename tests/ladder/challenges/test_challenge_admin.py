"""Staff read challenges in the admin; nobody adds or edits one there (services write them)."""

from __future__ import annotations

from typing import Any

import pytest

from ladder.bots.models import BotVersion
from ladder.challenges.services import challenge_create
from ladder.challenges.specs import Opponent

pytestmark = pytest.mark.django_db


def test_the_admin_lists_and_shows_challenges_read_only(
    admin_client: Any, owner: Any, mine: BotVersion, examples: dict[str, BotVersion]
) -> None:
    challenge = challenge_create(
        requester=owner, bot_id=mine.bot_id, opponents=[Opponent(examples["greedy"].bot_id)]
    )
    listing = admin_client.get("/admin/challenges/challenge/")
    assert listing.status_code == 200 and b"ann" in listing.content
    shown = admin_client.get(f"/admin/challenges/challenge/{challenge.pk}/change/")
    assert shown.status_code == 200 and b"waiting" in shown.content
    assert admin_client.get("/admin/challenges/challenge/add/").status_code == 403
