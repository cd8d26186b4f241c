"""Failed logins are limited per account and per address (django-axes, ladder/settings.py).

GRASS_LOGIN_FAILURE_LIMIT (10) failures for one account, from anywhere, or from one address,
for any account, and logging in is refused for GRASS_LOGIN_LOCKOUT_MINUTES (15) even with the
right password: on the log-in page, the admin's and `POST /api/auth/token/`, which share the
counts. These tests run the real limits: every test starts with no failures counted (axes
keeps them in the test's database, rolled back after it).
"""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

HOME = "127.0.0.1"  # the test client's address
ELSEWHERE = "198.51.100.7"
LIMIT = 10


def token(username: str, password: str, address: str = HOME, **headers: str) -> Any:
    return APIClient(REMOTE_ADDR=address, **headers).post(
        "/api/auth/token/", {"username": username, "password": password}, format="json"
    )


def page_login(client: Client, username: str, password: str) -> Any:
    return client.post("/login/", {"username": username, "password": password})


def fail(times: int, username: str = "ann", address: str = HOME) -> list[int]:
    """`times` wrong passwords through the API; their status codes."""
    return [token(username, "wrong", address).status_code for _ in range(times)]


def test_the_default_limits_are_the_documented_ones() -> None:
    assert (settings.GRASS_LOGIN_FAILURE_LIMIT, settings.GRASS_LOGIN_LOCKOUT_MINUTES) == (10, 15)


def test_40_wrong_passwords_then_the_right_one_is_refused_by_the_api(owner: Any) -> None:
    codes = fail(40)

    assert codes == [401] * (LIMIT - 1) + [429] * (40 - LIMIT + 1)
    right = token("ann", "pw")
    assert right.status_code == 429
    assert "token" not in right.json()
    assert "Too many failed logins" in right.json()["detail"]
    assert right["Retry-After"] == str(15 * 60)


def test_40_wrong_passwords_then_the_right_one_is_refused_by_the_login_page(owner: Any) -> None:
    client = Client()
    codes = [page_login(client, "ann", "wrong").status_code for _ in range(40)]

    assert codes == [200] * (LIMIT - 1) + [429] * (40 - LIMIT + 1)  # 200: the form again
    right = page_login(client, "ann", "pw")
    assert right.status_code == 429
    assert right["Retry-After"] == str(15 * 60)
    html = right.content.decode()
    assert "Too many failed logins" in html and "15 minutes" in html
    assert "_auth_user_id" not in client.session  # not logged in


def test_a_few_typos_do_not_lock_anyone_out(owner: Any) -> None:
    assert fail(LIMIT - 1) == [401] * (LIMIT - 1)
    assert token("ann", "pw").status_code == 200
    assert page_login(Client(), "ann", "pw").status_code == 302


def test_the_account_is_locked_from_every_address(owner: Any, stranger: Any) -> None:
    """A password guessed from many machines: the account's own count locks it."""
    for i in range(LIMIT):
        token("ann", "wrong", address=f"203.0.113.{i + 1}")

    assert token("ann", "pw", address=ELSEWHERE).status_code == 429
    # That address has one failure of its own at most: another account logs in from it.
    assert token("bo", "pw", address=ELSEWHERE).status_code == 200


def test_the_address_is_locked_for_every_account(owner: Any, stranger: Any) -> None:
    """One machine trying many accounts: the address's count locks it."""
    for i in range(LIMIT):
        token(f"guess{i}", "wrong")

    assert token("bo", "pw").status_code == 429
    assert page_login(Client(), "ann", "pw").status_code == 429
    # The accounts themselves were not attacked: from elsewhere they log in.
    assert token("bo", "pw", address=ELSEWHERE).status_code == 200


def test_after_locking_an_account_from_one_address_both_counts_hold(
    owner: Any, stranger: Any
) -> None:
    """The brief's two questions: 40 failures for ann from one address lock ann from another
    address (the account's count) and bo from the same address (the address's count)."""
    fail(40)

    assert token("ann", "pw", address=ELSEWHERE).status_code == 429
    assert token("bo", "pw").status_code == 429
    assert token("bo", "pw", address=ELSEWHERE).status_code == 200


def test_the_page_the_admin_and_the_api_share_one_count(owner: Any) -> None:
    client = Client()
    for _ in range(4):
        page_login(client, "ann", "wrong")
    for _ in range(3):
        client.post("/admin/login/", {"username": "ann", "password": "wrong"})
    fail(2)

    assert token("ann", "pw").status_code == 200  # 9 failures: not yet
    fail(1)
    assert client.post("/admin/login/", {"username": "ann", "password": "pw"}).status_code == 429


def test_a_forged_forwarded_address_does_not_escape_the_address_count(stranger: Any) -> None:
    """Straight to the server, X-Forwarded-For is the client's own words and is ignored;
    behind nginx (a loopback peer) only its last entry, which nginx wrote, counts."""
    public = "192.0.2.50"
    for i in range(LIMIT):
        token(f"guess{i}", "wrong", address=public, HTTP_X_FORWARDED_FOR=f"10.0.0.{i}")
    assert token("bo", "pw", address=public, HTTP_X_FORWARDED_FOR="10.9.9.9").status_code == 429

    for i in range(LIMIT):
        forged = f"10.1.0.{i}, {ELSEWHERE}"
        token(f"guess{i}", "wrong", address=HOME, HTTP_X_FORWARDED_FOR=forged)
    behind_nginx = {"address": HOME, "HTTP_X_FORWARDED_FOR": f"10.2.2.2, {ELSEWHERE}"}
    assert token("bo", "pw", **behind_nginx).status_code == 429
    assert token("bo", "pw", address=HOME).status_code == 200  # nginx's own address: clean


def test_the_lockout_ends_after_its_time(owner: Any) -> None:
    fail(LIMIT)
    assert token("ann", "pw").status_code == 429
    # As if 15 minutes had passed since the last failure (and no more failures counted: the
    # refusals during the lockout did not extend it).
    attempts = AccessAttempt.objects.all()
    assert sum(a.failures_since_start for a in attempts) == LIMIT
    attempts.update(attempt_time=timezone.now() - timedelta(minutes=15, seconds=1))

    assert token("ann", "pw").status_code == 200


NETWORK = "2001:db8:7:1"
"""An IPv6 /64 (documentation prefix): one host may take any address in it."""


def test_addresses_of_one_ipv6_64_share_the_address_count(stranger: Any) -> None:
    """One machine trying many accounts, each guess from a new address of its /64: the /64's
    count locks it (django-axes counts `AXES_CLIENT_IP_CALLABLE`'s key, ladder/clients.py)."""
    for i in range(LIMIT):
        token(f"guess{i}", "wrong", address=f"{NETWORK}::{i + 1:x}")

    refused = token("bo", "pw", address=f"{NETWORK}:5e:77:a1:9")
    assert refused.status_code == 429
    assert refused["Retry-After"] == str(15 * 60)
    assert page_login(Client(REMOTE_ADDR=f"{NETWORK}::abcd"), "bo", "pw").status_code == 429
    # The next /64 is someone else, and so is an IPv4 client.
    assert token("bo", "pw", address="2001:db8:7:2::1").status_code == 200
    assert token("bo", "pw", address=ELSEWHERE).status_code == 200
    # What staff see in the admin and pass to `axes_reset_ip`: the /64's first address.
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {f"{NETWORK}::"}
    call_command("axes_reset_ip", f"{NETWORK}::", stdout=io.StringIO())
    assert token("bo", "pw", address=f"{NETWORK}::abcd").status_code == 200


def test_behind_the_proxy_an_ipv6_client_is_locked_by_its_64(stranger: Any) -> None:
    for i in range(LIMIT):
        token(f"guess{i}", "wrong", address=HOME, HTTP_X_FORWARDED_FOR=f"{NETWORK}::{i + 1:x}")

    behind_nginx = {"address": HOME, "HTTP_X_FORWARDED_FOR": f"{NETWORK}::beef"}
    assert token("bo", "pw", **behind_nginx).status_code == 429
    assert token("bo", "pw", address=HOME).status_code == 200  # nginx's own address: clean


def test_an_ipv4_client_seen_as_ipv4_mapped_ipv6_is_one_client(stranger: Any) -> None:
    for i in range(LIMIT // 2):
        token(f"guess{i}", "wrong", address=f"::ffff:{ELSEWHERE}")
    for i in range(LIMIT - LIMIT // 2):
        token(f"guess-four{i}", "wrong", address=ELSEWHERE)

    assert token("bo", "pw", address=ELSEWHERE).status_code == 429
    assert token("bo", "pw", address=f"::ffff:{ELSEWHERE}").status_code == 429
    # IPv4 stays per address.
    assert token("bo", "pw", address="198.51.100.8").status_code == 200
