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


# Schemathesis (`--checks all`) on SQLite, `make run`'s database (issue 36): a 500 for a huge id,
# a NUL in a password, an empty multipart upload answered 400 with no body.


def test_an_id_past_what_a_row_can_have_matches_no_path(owner: Any) -> None:
    """SQLite raised OverflowError for an id past 2**63 - 1 (a 500); PostgreSQL answered 404.
    `<id:...>` (ladder/converters.py) takes no such id, on every database."""
    from django.urls import resolve

    from ladder.converters import MAX_ID

    assert resolve(f"/api/tournaments/{MAX_ID}/entries/{MAX_ID}/").kwargs == {
        "tournament_id": MAX_ID,
        "entry_id": MAX_ID,
    }
    client = APIClient()
    client.force_authenticate(owner)
    for path in (
        "/api/tournaments/338060565122353987584/entries/18014398509481983/",
        f"/api/tournaments/1/entries/{MAX_ID + 1}/",
        f"/api/bots/{MAX_ID + 1}/",
        f"/matches/{MAX_ID + 1}/replay.json",
    ):
        response = client.delete(path) if "entries" in path else client.get(path)
        assert response.status_code == 404, path
    schema = APIClient().get("/api/schema/", {"format": "json"}).json()
    entry = schema["paths"]["/api/tournaments/{tournament_id}/entries/{entry_id}/"]["delete"]
    assert {p["name"]: p["schema"]["maximum"] for p in entry["parameters"]} == {
        "tournament_id": MAX_ID,
        "entry_id": MAX_ID,
    }


def test_an_id_in_a_query_or_a_body_is_bounded_and_named(owner: Any) -> None:
    client = APIClient()
    client.force_authenticate(owner)
    huge = 2**63
    response = client.get("/api/matches/", {"bot": huge})
    assert response.status_code == 400
    assert "bot" in response.json()
    from ladder.challenges.apis import ChallengesApi
    from ladder.tournaments.apis import TournamentEntriesApi

    entry = TournamentEntriesApi.InputSerializer(data={"bot": huge})
    assert not entry.is_valid() and "bot" in entry.errors
    challenge = ChallengesApi.InputSerializer(data={"bot": 1, "opponents": [{"bot": huge}]})
    assert not challenge.is_valid() and "opponents" in challenge.errors


def test_a_nul_in_a_password_is_a_400_naming_it_and_the_schema_says_so() -> None:
    import re

    client = APIClient()
    for path, body in (
        ("/api/auth/signup/", {"username": "zed", "password": "a long pass\x00phrase"}),
        ("/api/auth/token/", {"username": "zed", "password": "a long pass\x00phrase"}),
    ):
        response = client.post(path, body, format="json")
        assert response.status_code == 400, path
        assert response.json() == {"password": ["Null characters are not allowed."]}, path
    # The schema refuses what the API refuses, so a NUL is not schema-valid data refused.
    schemas = client.get("/api/schema/", {"format": "json"}).json()["components"]["schemas"]
    for name in ("SignupInputRequest", "TokenInputRequest"):
        pattern = schemas[name]["properties"]["password"]["pattern"]
        assert re.search(pattern, "a long pass phrase"), name
        assert not re.search(pattern, "a long pass\x00phrase"), name
    signup = schemas["SignupInputRequest"]["properties"]["password"]["pattern"]
    assert not re.search(signup, "1" * 9)  # all digits, as before


def test_an_empty_multipart_upload_is_a_400_whose_body_names_the_file(owner: Any) -> None:
    from ladder.bots.services import bot_create

    bot = bot_create(owner=owner, name="gus")
    client = APIClient()
    client.force_authenticate(owner)
    boundary = "c637e12e2b1a998d80d1b087531af51c"
    response = client.generic(
        "POST",
        f"/api/bots/{bot.pk}/versions/",
        f"--{boundary}--\r\n".encode(),
        content_type=f"multipart/form-data; boundary={boundary}",
    )
    assert response.status_code == 400
    assert response.json() == {"file": ["No file was submitted."]}


@pytest.mark.slow
def test_daphne_hands_an_empty_multipart_body_to_django(tmp_path: Any) -> None:
    """`make run` serves the site with daphne, under which Twisted parsed every multipart body
    itself and answered one it did not like (an empty form) 400 with no body, before Django
    saw it (ladder/daphne_bodies.py). Django answers it, with a body naming the fields."""
    import os
    import socket
    import subprocess
    import sys
    import time
    from pathlib import Path

    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    daphne = Path(sys.executable).with_name("daphne")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "ladder.settings",
        "DEBUG": "true",
        "DATABASE_URL": f"sqlite:///{tmp_path}/unused.sqlite3",
    }
    server = subprocess.Popen(
        [str(daphne), "-b", "127.0.0.1", "-p", str(port), "ladder.asgi:application"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    boundary = "c637e12e2b1a998d80d1b087531af51c"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                response = httpx.post(
                    f"http://127.0.0.1:{port}/api/auth/signup/",
                    content=f"--{boundary}--\r\n".encode(),
                    headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
                )
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "daphne did not start"
                time.sleep(0.5)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert response.status_code == 400
    assert response.headers["Content-Type"] == "application/json"
    assert set(response.json()) == {"username", "password"}


def test_an_empty_file_is_kept_as_an_invalid_version_saying_so(owner: Any) -> None:
    """A file of no bytes is schema-valid: taken (not a 400), and judged no bot (Schemathesis
    found the 400 with `--checks all`)."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from ladder.bots.services import bot_create

    bot = bot_create(owner=owner, name="gus")
    client = APIClient()
    client.force_authenticate(owner)
    response = client.post(
        f"/api/bots/{bot.pk}/versions/",
        {"file": SimpleUploadedFile("file", b"")},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    assert response.json()["status"] == "invalid"
    assert response.json()["validation_error"] == "file: the file is empty: no bot"
