"""GET /api/schema/ (OpenAPI 3) and /api/docs/ (Swagger UI, served without a CDN)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.staticfiles import finders
from openapi_spec_validator import validate
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

PATHS = {
    "/api/auth/signup/": {"post"},
    "/api/auth/token/": {"post"},
    "/api/auth/me/": {"get"},
    "/api/bots/": {"get", "post"},
    "/api/bots/{bot_id}/": {"get", "patch"},
    "/api/bots/{bot_id}/versions/": {"get", "post"},
    "/api/versions/{version_id}/": {"get"},
    "/api/versions/{version_id}/source/": {"get"},
    "/api/matches/": {"get"},
    "/api/matches/{match_id}/": {"get"},
    "/api/matches/{match_id}/log/": {"get"},
    "/api/matches/{match_id}/debug/": {"get"},
    "/api/leaderboard/": {"get"},
    "/api/games/": {"get", "post"},
    "/api/challenges/": {"get", "post"},
    "/api/challenges/{challenge_id}/": {"get"},
    "/api/challenges/{challenge_id}/rematch/": {"post"},
    "/api/challenges/{challenge_id}/cancel/": {"post"},
    "/api/tournaments/": {"get", "post"},
    "/api/tournaments/{tournament_id}/": {"get"},
    "/api/tournaments/{tournament_id}/entries/": {"post"},
    "/api/tournaments/{tournament_id}/entries/{entry_id}/": {"delete"},
    "/api/tournaments/{tournament_id}/pause/": {"post"},
    "/api/tournaments/{tournament_id}/resume/": {"post"},
    "/api/tournaments/{tournament_id}/cancel/": {"post"},
    "/api/tournaments/{tournament_id}/archive/": {"get"},
    "/api/webhooks/": {"get", "post"},
    "/api/webhooks/{webhook_id}/": {"delete"},
    "/api/webhooks/{webhook_id}/deliveries/": {"get"},
    "/api/webhooks/{webhook_id}/test/": {"post"},
}
BODILESS_POSTS = {
    "/api/tournaments/{tournament_id}/pause/",
    "/api/tournaments/{tournament_id}/resume/",
    "/api/tournaments/{tournament_id}/cancel/",
    "/api/webhooks/{webhook_id}/test/",
    "/api/challenges/{challenge_id}/rematch/",
    "/api/challenges/{challenge_id}/cancel/",
}
"""Posts that take no body: the organiser's pause, resume and cancel; a webhook's test ping;
a challenge's rematch and calling it off."""


@pytest.fixture
def schema() -> dict[str, Any]:
    response = APIClient().get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return response.json()  # type: ignore[no-any-return]


def test_the_schema_is_valid_openapi_3_with_every_endpoint(schema: dict[str, Any]) -> None:
    validate(schema)
    assert schema["openapi"].startswith("3.")
    assert {path: set(ops) for path, ops in schema["paths"].items()} == PATHS


def test_every_operation_has_its_bodies(schema: dict[str, Any]) -> None:
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            where = f"{method.upper()} {path}"
            assert operation["responses"], where
            success = next(code for code in operation["responses"] if code.startswith("2"))
            assert operation["responses"][success].get("content"), where
            if method == "post" and path not in BODILESS_POSTS:
                assert operation["requestBody"]["content"], where
    upload = schema["paths"]["/api/bots/{bot_id}/versions/"]["post"]["requestBody"]["content"]
    assert set(upload) == {"multipart/form-data"}
    listing = schema["paths"]["/api/matches/"]["get"]
    assert {p["name"] for p in listing["parameters"]} >= {
        "bot",
        "ruleset",
        "status",
        "after",
        "before",
        "page",
    }


def test_the_docs_page_loads_nothing_from_another_site() -> None:
    response = APIClient().get("/api/docs/")

    assert response.status_code == 200
    html = response.content.decode()
    assert "swagger-ui" in html
    external = re.findall(r"(?:https?:)?//[\w.-]+\.[a-z]{2,}[^\s\"'<>]*", html)
    assert external == [], external
    # Every asset it names is served by this site (drf-spectacular-sidecar's static files).
    static = re.findall(r"/static/([^\"'?\s]+)", html)
    assert static
    for asset in static:
        assert finders.find(asset), asset


def test_every_body_is_offered_under_one_content_type(schema: dict[str, Any]) -> None:
    """Three content types per body make generated clients offer three bodies (and
    openapi-python-client's code then does not import): JSON, or multipart for the upload."""
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if "requestBody" in operation:
                content = set(operation["requestBody"]["content"])
                assert content in ({"application/json"}, {"multipart/form-data"}), (
                    method,
                    path,
                    content,
                )


@pytest.mark.parametrize(
    ("path", "media_type"),
    [
        ("/api/matches/{match_id}/log/", "application/gzip"),
        ("/api/tournaments/{tournament_id}/archive/", "application/zip"),
    ],
)
def test_files_are_binary_responses_every_client_reads_as_bytes(
    schema: dict[str, Any], path: str, media_type: str
) -> None:
    content = schema["paths"][path]["get"]["responses"]["200"]["content"]
    binary = {"type": "string", "format": "binary"}
    assert content == {
        media_type: {"schema": binary},
        "application/octet-stream": {"schema": binary},
    }


def test_the_token_schemes_are_named(schema: dict[str, Any]) -> None:
    schemes = schema["components"]["securitySchemes"]
    assert schemes["tokenAuth"]["name"] == "Authorization"
    assert 'prefix "Token"' in schemes["tokenAuth"]["description"]
    assert {k: schemes["bearerAuth"][k] for k in ("type", "scheme")} == {
        "type": "http",
        "scheme": "bearer",
    }
    create = schema["paths"]["/api/bots/"]["post"]["security"]
    assert {"tokenAuth": []} in create and {"bearerAuth": []} in create


def test_the_same_token_works_as_token_and_as_bearer(owner: Any) -> None:
    from ladder.accounts.services import token_get_or_create

    key = token_get_or_create(user=owner).key
    for header in (f"Token {key}", f"Bearer {key}"):
        me = APIClient().get("/api/auth/me/", HTTP_AUTHORIZATION=header)
        assert me.status_code == 200 and me.json()["username"] == "ann", header
    wrong = APIClient().get("/api/auth/me/", HTTP_AUTHORIZATION="Bearer not-a-key")
    assert wrong.status_code == 401
