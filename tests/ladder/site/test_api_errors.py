"""Every error under /api/ is JSON and listed in the schema; query parameters are read as the
schema types them (issue 15, point 1). Schemathesis checks all of it at random
(test_schemathesis.py); these pin the cases that were seen."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/bots/abc/"),
        ("get", "/api/matches/1.5/log/"),
        ("post", "/api/tournaments/%C2%84/pause/"),
        ("delete", "/api/tournaments/null,null/entries/0/"),
        ("get", "/api/no-such-thing/"),
    ],
)
def test_a_path_no_api_has_is_a_json_404(method: str, path: str, owner: Any) -> None:
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(owner)  # a session cookie, as a browser would send: still no CSRF page
    response = getattr(client, method)(path)

    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert "No API at" in response.json()["detail"]


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/api/matches/", {"ruleset": ""}),
        ("/api/matches/", {"status": ""}),
        ("/api/leaderboard/", {"ruleset": ""}),
        ("/api/tournaments/", {"status": ""}),
        ("/api/bots/", {"owner": ""}),
        ("/api/bots/", {"page": ["1", ""]}),
    ],
)
def test_a_query_parameter_the_schema_refuses_is_a_400(path: str, query: dict[str, Any]) -> None:
    response = APIClient().get(path, query)

    assert response.status_code == 400, response.content
    assert set(response.json()) <= {"ruleset", "status", "owner", "page"}


def test_a_time_with_an_offset_postgresql_cannot_store_is_read_in_utc() -> None:
    # ISO 8601 allows -21:55; PostgreSQL refuses offsets past 15:59 (this was a 500).
    response = APIClient().get("/api/matches/", {"before": "0152-06-09T04:08:05.7-21:55"})

    assert response.status_code == 200


def test_the_schema_lists_the_errors_each_operation_answers() -> None:
    schema = APIClient().get("/api/schema/", {"format": "json"}).json()
    paths = schema["paths"]

    def codes(path: str, method: str) -> set[str]:
        return set(paths[path][method]["responses"])

    assert {"400", "201"} <= codes("/api/auth/signup/", "post")
    assert {"404"} <= codes("/api/leaderboard/", "get")  # ?page=0
    assert {"400", "401", "403", "409"} <= codes("/api/bots/", "post")
    assert {"401", "403", "404"} <= codes("/api/bots/{bot_id}/versions/", "post")
    assert {"403"} <= codes("/api/tournaments/", "post")
    for action in ("pause", "resume", "cancel"):
        operation = paths[f"/api/tournaments/{{tournament_id}}/{action}/"]["post"]
        (parameter,) = operation["parameters"]
        assert parameter["schema"]["type"] == "integer"
    ruleset = next(p for p in paths["/api/matches/"]["get"]["parameters"] if p["name"] == "ruleset")
    assert set(ruleset["schema"]["enum"]) == {"classic", "modern"}
    # Every error is a JSON object.
    for operations in paths.values():
        for operation in operations.values():
            for code, response in operation["responses"].items():
                if code >= "400":
                    assert "application/json" in response["content"], (code, operation)


def test_an_upload_answer_and_its_schema_agree_on_what_a_400_is() -> None:
    schema = APIClient().get("/api/schema/", {"format": "json"}).json()
    upload = schema["paths"]["/api/bots/{bot_id}/versions/"]["post"]["responses"]

    assert "Not a usable bot" not in upload["400"]["description"]
    assert "pending" in upload["201"]["description"]
    assert "invalid" in upload["201"]["description"]
