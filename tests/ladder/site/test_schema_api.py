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
    "/api/bots/{bot_id}/": {"get"},
    "/api/bots/{bot_id}/versions/": {"get", "post"},
    "/api/versions/{version_id}/source/": {"get"},
    "/api/matches/": {"get"},
    "/api/matches/{match_id}/": {"get"},
    "/api/matches/{match_id}/log/": {"get"},
    "/api/leaderboard/": {"get"},
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
}
"""Posts that take no body: the organiser's pause, resume and cancel; a webhook's test ping."""


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
