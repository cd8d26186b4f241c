"""Seating circles (`ladder.accounts.models.Seating`): which accounts the site counts as one
person at a rated table, and the per-/48 sign-up limit beside the /64 one.

The attack (docs/fairplay.md): one person makes several accounts, uploads a "feeder" on one and
a "partner" on another, and lets the ladder seat them together; or takes a fresh /64 of their
/48 for each account (12 of 12 sign-ups from 12 /64s of one /48 were accepted with the /64
limit alone).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from ladder.accounts.models import Seating
from ladder.accounts.selectors import circle_members
from ladder.accounts.services import (
    account_house_set,
    account_unlink,
    accounts_link,
    seating_signup_record,
)
from ladder.bots.selectors import bot_circles

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"
SITE = "2001:db8:7"
"""An IPv6 /48 (documentation prefix): 65,536 /64s of one organisation or hosting account."""


def api_signup(username: str, address: str) -> Any:
    return APIClient(REMOTE_ADDR=address).post(
        "/api/auth/signup/", {"username": username, "password": PASSWORD}, format="json"
    )


def circle_of(username: str) -> int:
    user = get_user_model().objects.get(username=username)
    return Seating.objects.get(user=user).circle


def test_twenty_64s_of_one_48_make_twenty_accounts_then_the_48_is_refused(
    settings: Any,
) -> None:
    assert settings.GRASS_SIGNUPS_PER_HOUR_48 == 20
    codes = [api_signup(f"s{i}", f"{SITE}:{i:x}::1").status_code for i in range(22)]
    assert codes == [201] * 20 + [429] * 2
    refused = api_signup("late", f"{SITE}:ffff::1")
    assert refused.status_code == 429 and "Too many accounts" in refused.json()["detail"]
    # Another /48 is another site.
    assert api_signup("elsewhere", "2001:db8:8::1").status_code == 201
    # IPv4 clients are counted by their address only, as before.
    assert api_signup("v4", "192.0.2.7").status_code == 201


def test_signups_from_one_48_or_one_ipv4_address_are_linked_and_loopback_never() -> None:
    for name, address in [
        ("a1", f"{SITE}:1::1"),
        ("a2", f"{SITE}:2::9"),  # another /64 of the same /48
        ("b1", "2001:db8:9:1::1"),
        ("c1", "192.0.2.1"),
        ("c2", "192.0.2.1"),
        ("d1", "192.0.2.2"),
        ("l1", "127.0.0.1"),
        ("l2", "127.0.0.1"),
    ]:
        assert api_signup(name, address).status_code == 201
    assert circle_of("a1") == circle_of("a2")
    assert circle_of("c1") == circle_of("c2")
    circles = {circle_of(n) for n in ("a1", "b1", "c1", "d1", "l1", "l2")}
    assert len(circles) == 6
    a2 = get_user_model().objects.get(username="a2")
    assert "signed up from 2001:db8:7::" in Seating.objects.get(user=a2).linked_reason


def test_signups_further_apart_than_the_window_are_not_linked(
    django_user_model: Any, settings: Any
) -> None:
    old, new, off = (django_user_model.objects.create_user(username=n) for n in "xyz")
    now = timezone.now()
    seating_signup_record(user=old, address="192.0.2.5", now=now - timedelta(days=31))
    assert seating_signup_record(user=new, address="192.0.2.5", now=now) == []
    settings.GRASS_LINK_SIGNUP_DAYS = 0
    assert seating_signup_record(user=off, address="192.0.2.5", now=now) == []
    settings.GRASS_LINK_SIGNUP_DAYS = 30
    assert seating_signup_record(user=off, address="192.0.2.5", now=now) == [new.pk]


def test_links_merge_whole_circles_and_unlink_takes_one_out(django_user_model: Any) -> None:
    a, b, c, d = (django_user_model.objects.create_user(username=n) for n in "abcd")
    accounts_link(user_ids=[c.pk, d.pk], reason="staff: one person")
    assert accounts_link(user_ids=[a.pk, b.pk], reason="staff") == a.pk
    # Linking b with d joins the two circles whole: c comes along.
    assert accounts_link(user_ids=[b.pk, d.pk], reason="staff") == a.pk
    assert circle_members(user_id=c.pk) == [a.pk, b.pk, c.pk, d.pk]

    account_unlink(user_id=a.pk, reason="staff: a mistake")
    assert circle_members(user_id=a.pk) == [a.pk]
    # The circle was named after a: the rest take the smallest of theirs.
    assert circle_members(user_id=b.pk) == [b.pk, c.pk, d.pk]
    assert {Seating.objects.get(user=u).circle for u in (b, c, d)} == {b.pk}


def test_the_house_is_never_linked_and_its_bots_sit_apart(
    django_user_model: Any, valid_version: Any, owner: Any
) -> None:
    house = django_user_model.objects.create_user(username="examples")
    account_house_set(user_id=house.pk)
    with pytest.raises(ValueError, match="never linked"):
        accounts_link(user_ids=[house.pk, owner.pk], reason="staff")
    greedy = valid_version("greedy", by=house)
    strong = valid_version("strong", by=house)
    mine = valid_version("mine")
    also_mine = valid_version("also-mine")
    circles = bot_circles(bot_ids=[v.bot_id for v in (greedy, strong, mine, also_mine)])
    assert circles[greedy.bot_id] != circles[strong.bot_id]
    assert circles[mine.bot_id] == circles[also_mine.bot_id] == owner.pk
    # A house signing up from the same address as others is not linked to them either.
    seating_signup_record(user=house, address="192.0.2.9")
    stray = django_user_model.objects.create_user(username="stray")
    assert seating_signup_record(user=stray, address="192.0.2.9") == []


def test_the_examples_command_makes_its_user_the_house() -> None:
    from ladder.bots.management.commands.ladder_examples import EXAMPLES_USER
    from ladder.bots.management.commands.ladder_examples import Command as Examples

    user_model = get_user_model()
    command = Examples()
    command._ensure_example = lambda user, name: None  # type: ignore[method-assign]
    command.handle()
    assert Seating.objects.get(user=user_model.objects.get(username=EXAMPLES_USER)).house


def test_staff_link_show_and_unlink_from_the_command_line(django_user_model: Any) -> None:
    from io import StringIO

    from django.core.management import CommandError, call_command

    for name in ("alice", "alias", "bob"):
        django_user_model.objects.create_user(username=name)
    out = StringIO()
    call_command("accounts_link", "alice", "alias", stdout=out)
    assert "linked into circle" in out.getvalue()
    call_command("accounts_link", "--show", "alias", stdout=out)
    assert "alias: alice, alias" in out.getvalue()
    with pytest.raises(CommandError, match="no such account: nobody"):
        call_command("accounts_link", "alice", "nobody")
    call_command("accounts_link", "--unlink", "alias", stdout=out)
    assert circle_of("alias") != circle_of("alice")


def test_the_admin_links_the_selected_accounts(client: Any, django_user_model: Any) -> None:
    staff = django_user_model.objects.create_superuser(username="staff", password="pw")
    a, b = (django_user_model.objects.create_user(username=n) for n in ("a", "b"))
    for user in (a, b):
        seating_signup_record(user=user, address=None)
    client.force_login(staff)
    answer = client.post(
        "/admin/accounts/seating/",
        {"action": "link", "_selected_action": [a.pk, b.pk]},
        follow=True,
    )
    assert answer.status_code == 200 and "2 accounts linked" in answer.content.decode()
    assert circle_members(user_id=b.pk) == [a.pk, b.pk]


def test_nobody_signs_up_as_the_house_nor_is_a_persons_account_made_the_house(
    django_user_model: Any,
) -> None:
    """The attack: on a site whose examples do not exist yet, sign up as "examples"; once the
    operator runs `ladder_examples`, every bot of that account would sit as a circle of its own
    (any number of one's own bots at one rated table)."""
    from django.core.management import CommandError, call_command

    taken = api_signup("Examples", "192.0.2.40")
    assert taken.status_code == 409
    squatter = django_user_model.objects.create_user(username="examples", password="pw")
    with pytest.raises(ValueError, match="a person's account"):
        account_house_set(user_id=squatter.pk)
    with pytest.raises(CommandError, match="rename or remove that account"):
        call_command("ladder_examples")
    assert not Seating.objects.filter(user=squatter, house=True).exists()


def test_an_ipv4_client_over_6to4_or_teredo_is_its_ipv4_address() -> None:
    """One IPv4 host could take a 6to4 /48 (2002:<its address>::/48) or a Teredo address for
    each account: each would have been a network of its own, neither limited nor linked."""
    from ladder.clients import network_key

    assert network_key("2002:cb00:7107:1::5") == "203.0.113.7"
    assert network_key("2001:0:4136:e378:8000:63bf:3fff:fdd2") == "192.0.2.45"
    for name, address in [
        ("plain", "203.0.113.7"),
        ("tunnel", "2002:cb00:7107:9::1"),
        ("teredo-a", "2001:0:4136:e378:8000:63bf:3fff:fdd2"),
        ("teredo-b", "192.0.2.45"),
    ]:
        assert api_signup(name, address).status_code == 201
    assert circle_of("plain") == circle_of("tunnel")
    assert circle_of("teredo-a") == circle_of("teredo-b") != circle_of("plain")


def test_staff_cannot_make_a_match_rated_by_hand(admin_client: Any, valid_version: Any) -> None:
    """An own-bots challenge (unrated, both bots one person's) made rated in the admin's form
    would count at the next ratings rebuild, seating rules skipped (red-team)."""
    from ladder.matches.services import match_create

    match = match_create(versions=[valid_version("a"), valid_version("b")], rated=False)
    page = admin_client.get(f"/admin/matches/match/{match.pk}/change/").content.decode()
    assert 'name="rated"' not in page
