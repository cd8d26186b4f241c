"""POST /api/auth/signup/, POST /api/auth/token/ and GET /api/auth/me/."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

GOOD_PASSWORD = "correct horse battery staple"


def test_signup_creates_a_user_whose_token_works() -> None:
    response = APIClient().post(
        "/api/auth/signup/", {"username": "cy", "password": GOOD_PASSWORD}, format="json"
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["username"] == "cy" and body["token"]
    assert "password" not in body
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {body['token']}")
    assert client.post("/api/bots/", {"name": "first"}, format="json").status_code == 201


@pytest.mark.parametrize(
    ("password", "message"),
    [
        ("short", "too short"),
        ("password123", "too common"),
        ("84920174639", "entirely numeric"),
        ("cy-the-dealer", "too similar to the username"),
    ],
)
def test_signup_refuses_a_weak_password_and_says_why(password: str, message: str) -> None:
    response = APIClient().post(
        "/api/auth/signup/", {"username": "cy-the-dealer", "password": password}, format="json"
    )

    assert response.status_code == 400
    errors = response.json()["password"]
    assert any(message in error for error in errors), errors


def test_signup_refuses_a_taken_or_malformed_username(owner: Any) -> None:
    client = APIClient()
    taken = client.post("/api/auth/signup/", {"username": "ann", "password": GOOD_PASSWORD})
    assert taken.status_code == 409  # a clash with an account, not a malformed request
    assert "already exists" in taken.json()["username"][0]

    malformed = client.post("/api/auth/signup/", {"username": "a b", "password": GOOD_PASSWORD})
    assert malformed.status_code == 400
    assert "username" in malformed.json()

    missing = client.post("/api/auth/signup/", {"username": "dee"})
    assert missing.status_code == 400
    assert missing.json() == {"password": ["This field is required."]}


def test_a_token_for_a_username_and_password(owner: Any) -> None:
    client = APIClient()
    first = client.post("/api/auth/token/", {"username": "ann", "password": "pw"})
    again = client.post("/api/auth/token/", {"username": "ann", "password": "pw"})

    assert first.status_code == 200
    assert first.json()["token"] == again.json()["token"]


def test_a_wrong_password_gets_no_token(owner: Any) -> None:
    response = APIClient().post("/api/auth/token/", {"username": "ann", "password": "nope"})

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Token realm="api"'
    assert "Unable to log in" in response.json()["detail"]
    assert "token" not in response.json()


def test_a_session_works_too(owner: Any) -> None:
    client = APIClient()
    client.force_login(owner)
    assert client.post("/api/bots/", {"name": "via-session"}).status_code == 201


def test_me_says_whose_token_it_is() -> None:
    """`grass login --token` learns the username here, and that the token works."""
    body = (
        APIClient()
        .post("/api/auth/signup/", {"username": "di", "password": GOOD_PASSWORD}, format="json")
        .json()
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {body['token']}")
    answer = client.get("/api/auth/me/")
    assert answer.status_code == 200
    assert answer.json() == {"id": body["id"], "username": "di"}
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    assert stranger.get("/api/auth/me/").status_code == 401
    assert APIClient().get("/api/auth/me/").status_code == 401
