"""Accounts are limited per address: GRASS_SIGNUPS_PER_HOUR (10) a clock hour, counted for the
sign-up page and `POST /api/auth/signup/` together (`ladder.accounts.services.signup_wait`).

The attack: a script creating accounts by the thousand (each may upload bots that the workers
then play), from one address, or forging X-Forwarded-For to look like many. These tests run
the real limit on the test process's cache, emptied before each test
(tests/ladder/conftest.py).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from ladder.accounts.services import signup_counted, signup_wait
from ladder.hourly import WINDOW

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"
LIMIT = 10
HOME = "127.0.0.1"


def api_signup(username: str, address: str = HOME, **headers: str) -> Any:
    return APIClient(REMOTE_ADDR=address, **headers).post(
        "/api/auth/signup/", {"username": username, "password": PASSWORD}, format="json"
    )


def page_signup(username: str, address: str = HOME) -> Any:
    return Client(REMOTE_ADDR=address).post(
        "/signup/", {"username": username, "password": PASSWORD}
    )


def test_the_default_limit_is_the_documented_one() -> None:
    assert settings.GRASS_SIGNUPS_PER_HOUR == LIMIT


def test_a_flood_of_signups_from_one_address_stops_at_the_limit() -> None:
    codes = [api_signup(f"bot{i}").status_code for i in range(LIMIT + 5)]

    assert codes == [201] * LIMIT + [429] * 5
    assert get_user_model().objects.count() == LIMIT
    refused = api_signup("one-more")
    assert refused.status_code == 429
    assert "token" not in refused.json()
    assert "Too many accounts" in refused.json()["detail"]
    assert 0 < int(refused["Retry-After"]) <= WINDOW


def test_the_page_and_the_api_share_the_count_and_the_page_says_why() -> None:
    for i in range(LIMIT // 2):
        assert api_signup(f"api{i}").status_code == 201
    for i in range(LIMIT - LIMIT // 2):
        assert page_signup(f"page{i}").status_code == 302

    refused = page_signup("page-late")

    assert refused.status_code == 429
    assert "Too many accounts were created from your address" in refused.content.decode()
    assert int(refused["Retry-After"]) > 0
    assert not get_user_model().objects.filter(username="page-late").exists()
    assert api_signup("api-late").status_code == 429


def test_another_address_is_not_refused() -> None:
    for i in range(LIMIT):
        assert api_signup(f"a{i}").status_code == 201
    assert api_signup("b0", address="198.51.100.7").status_code == 201


def test_a_forged_forwarded_for_does_not_make_a_new_address() -> None:
    # From a non-loopback peer, X-Forwarded-For is the client's own words (ladder/clients.py).
    peer = "203.0.113.9"
    codes = [
        api_signup(f"f{i}", address=peer, HTTP_X_FORWARDED_FOR=f"10.0.{i}.1").status_code
        for i in range(LIMIT + 2)
    ]

    assert codes == [201] * LIMIT + [429] * 2


def test_behind_the_proxy_each_client_address_counts_alone() -> None:
    # nginx on the web host: the peer is loopback and the last entry is the address it saw.
    for i in range(LIMIT):
        assert api_signup(f"n{i}", HTTP_X_FORWARDED_FOR="192.0.2.1").status_code == 201
    assert api_signup("n-late", HTTP_X_FORWARDED_FOR="192.0.2.1").status_code == 429
    assert api_signup("other", HTTP_X_FORWARDED_FOR="192.0.2.2").status_code == 201


def test_a_refused_signup_costs_nothing() -> None:
    # A taken name or a weak password is not an account: the author may try again.
    assert api_signup("taken").status_code == 201
    for _ in range(LIMIT + 3):
        assert api_signup("taken").status_code == 409

    assert signup_wait(address=HOME) == 0


def test_the_count_starts_again_at_the_next_hour(settings: Any) -> None:
    now = (time.time() // WINDOW) * WINDOW + 10
    for _ in range(LIMIT):
        signup_counted(address=HOME, now=now)

    assert signup_wait(address=HOME, now=now) == WINDOW - 10
    assert signup_wait(address=HOME, now=now + WINDOW) == 0
    settings.GRASS_SIGNUPS_PER_HOUR = 0
    assert signup_wait(address=HOME, now=now) == 0


NETWORK = "2001:db8:7:1"
"""An IPv6 /64 (documentation prefix): one home, one host, as many addresses as it likes."""


def test_fifteen_addresses_of_one_ipv6_64_are_one_client() -> None:
    """The attack: one machine took a new address of its /64 for each account (15 accounts
    from 15 addresses). Addresses of one /64 share a count, privacy addresses included."""
    addresses = [f"{NETWORK}::{i + 1:x}" for i in range(8)] + [
        f"{NETWORK}:{i:x}a1:5e:77:{i + 3:x}" for i in range(7)
    ]
    codes = [api_signup(f"v6-{i}", address=a).status_code for i, a in enumerate(addresses)]

    assert codes == [201] * LIMIT + [429] * 5
    assert get_user_model().objects.count() == LIMIT
    # The page counts the same way.
    refused = page_signup("v6-page", address=f"{NETWORK}:ffff:ffff:ffff:ffff")
    assert refused.status_code == 429
    # The next /64 is someone else.
    assert api_signup("v6-neighbour", address="2001:db8:7:2::1").status_code == 201


def test_behind_the_proxy_an_ipv6_client_counts_by_its_64() -> None:
    for i in range(LIMIT):
        forwarded = {"HTTP_X_FORWARDED_FOR": f"{NETWORK}::{i + 1:x}"}
        assert api_signup(f"p{i}", **forwarded).status_code == 201
    late = api_signup("p-late", HTTP_X_FORWARDED_FOR=f"{NETWORK}::beef")
    assert late.status_code == 429
    assert api_signup("p-other", HTTP_X_FORWARDED_FOR="2001:db8:8::1").status_code == 201


def test_an_ipv4_client_seen_as_ipv4_mapped_ipv6_counts_as_its_ipv4_address() -> None:
    # A dual-stack socket reports an IPv4 client as ::ffff:a.b.c.d: the same client, one count.
    for i in range(LIMIT // 2):
        assert api_signup(f"m{i}", address="::ffff:198.51.100.7").status_code == 201
    for i in range(LIMIT - LIMIT // 2):
        assert api_signup(f"m4-{i}", address="198.51.100.7").status_code == 201
    assert api_signup("m-late", address="::ffff:198.51.100.7").status_code == 429
    assert api_signup("m-late4", address="198.51.100.7").status_code == 429
    # IPv4 stays per address: the next address, even in the same /24, is not refused.
    assert api_signup("m-next", address="198.51.100.8").status_code == 201
