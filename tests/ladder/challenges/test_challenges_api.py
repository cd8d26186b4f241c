"""The challenges' REST API for each persona: the author asks, follows, rematches and calls off;
another user and an anonymous visitor see none of it; past the quota, 429 with Retry-After."""

from __future__ import annotations

from typing import Any

import pytest

from ladder.bots.models import BotVersion
from ladder.challenges.models import Challenge
from ladder.challenges.services import challenge_dispatch

pytestmark = pytest.mark.django_db


def ask(api: Any, persona: str, body: dict[str, Any]) -> Any:
    return api(persona).post("/api/challenges/", body, format="json")


@pytest.fixture
def body(mine: BotVersion, examples: dict[str, BotVersion]) -> dict[str, Any]:
    return {
        "bot": mine.bot_id,
        "opponents": [{"bot": examples["greedy"].bot_id}, {"bot": examples["random"].bot_id}],
        "max_hands": 2,
    }


def test_the_author_asks_and_follows_a_challenge(
    api: Any, body: dict[str, Any], mine: BotVersion
) -> None:
    answer = ask(api, "owner", body)
    assert answer.status_code == 201, answer.json()
    made = answer.json()
    assert made["state"] == "waiting" and made["match"] is None and made["waiting_ahead"] == 0
    assert (made["requester"], made["ruleset"], made["seating"], made["max_hands"]) == (
        "ann",
        "modern",
        "random",
        2,
    )
    assert [(s["position"], s["display_name"], s["version"]) for s in made["seats"]] == [
        (0, "ann/mine", 1),
        (1, "examples/greedy", 1),
        (2, "examples/random", 1),
    ]
    (sent,) = challenge_dispatch(capacity=4)
    detail = api("owner").get(f"/api/challenges/{made['id']}/").json()
    assert detail["state"] == "queued" and detail["match"] == sent.match_id
    assert detail["match_url"] == f"/matches/{sent.match_id}/" and detail["waiting_ahead"] is None
    listed = api("owner").get("/api/challenges/").json()
    assert [c["id"] for c in listed["results"]] == [made["id"]]


def test_others_see_nothing_of_it(api: Any, body: dict[str, Any]) -> None:
    made = ask(api, "owner", body).json()
    for persona in ("stranger", "anonymous"):
        client = api(persona)
        expected = 404 if persona == "stranger" else 401
        assert client.get(f"/api/challenges/{made['id']}/").status_code == expected
        assert client.post(f"/api/challenges/{made['id']}/rematch/").status_code == expected
        assert client.post(f"/api/challenges/{made['id']}/cancel/").status_code == expected
    assert api("stranger").get("/api/challenges/").json()["results"] == []
    assert api("anonymous").get("/api/challenges/").status_code == 401
    assert ask(api, "anonymous", body).status_code == 401
    # Another user may not challenge with ann's bot.
    refused = ask(api, "stranger", body)
    # A bot that is not there is a 404 (a schema-valid request, refused for what it names)
    assert refused.status_code == 404 and "You have no bot" in refused.json()["bot"][0]


def test_refusals_name_the_field(api: Any, body: dict[str, Any]) -> None:
    for change, field in [
        ({"opponents": []}, "opponents"),
        ({"opponents": [{"bot": 1}] * 6}, "opponents"),
        ({"ruleset": "chess"}, "ruleset"),
        ({"seating": "sideways"}, "seating"),
        ({"max_hands": 0}, "max_hands"),
    ]:
        answer = ask(api, "owner", {**body, **change})
        assert answer.status_code == 400 and field in answer.json(), (change, answer.json())
    missing = ask(api, "owner", {**body, "opponents": [{"bot": 999_999}]})
    assert missing.status_code == 404 and "opponents" in missing.json(), missing.json()
    form = api("owner").post("/api/challenges/", {"bot": body["bot"]})  # a form, not JSON
    assert form.status_code == 415


def test_past_the_quota_the_answer_is_429_with_retry_after(
    api: Any, body: dict[str, Any], settings: Any
) -> None:
    settings.GRASS_CHALLENGES_PER_DAY = 1
    first = ask(api, "owner", body)
    assert first.status_code == 201
    refused = ask(api, "owner", body)
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 24 * 3600
    assert "at most 1 in 24 hours" in refused.json()["detail"]
    again = api("owner").post(f"/api/challenges/{first.json()['id']}/rematch/")
    assert again.status_code == 429 and "Retry-After" in again
    assert Challenge.objects.count() == 1


def test_a_rematch_and_calling_one_off(api: Any, body: dict[str, Any]) -> None:
    made = ask(api, "owner", body).json()
    again = api("owner").post(f"/api/challenges/{made['id']}/rematch/")
    assert again.status_code == 201
    assert again.json()["rematch_of"] == made["id"]
    assert [s["version_id"] for s in again.json()["seats"]] == [
        s["version_id"] for s in made["seats"]
    ]
    off = api("owner").post(f"/api/challenges/{made['id']}/cancel/")
    assert off.status_code == 200 and off.json()["state"] == "cancelled"
    assert api("owner").post(f"/api/challenges/{made['id']}/cancel/").status_code == 409
    challenge_dispatch(capacity=4)  # sends the rematch
    sent = api("owner").post(f"/api/challenges/{again.json()['id']}/cancel/")
    assert sent.status_code == 409
