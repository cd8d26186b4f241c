"""Where a webhook may point (ladder/notifications/guard.py), the backoff schedule and the
milestones: plain functions, no database."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from ladder.notifications.backoff import MAX_ATTEMPTS, retry_delay
from ladder.notifications.events import milestone_reached
from ladder.notifications.guard import (
    UnresolvedHost,
    UnsafeUrl,
    address_is_public,
    check_url,
    host_allowed,
    resolve_target,
)


def dns(table: dict[str, list[str]]) -> Any:
    """A resolver answering from `table` (name -> addresses), like getaddrinfo."""

    def resolve(host: str, port: int, **_: Any) -> list[tuple[Any, ...]]:
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
            for a in table[host]
        ]

    return resolve


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://hooks.example/", "Only http:// and https://"),
        ("file:///etc/passwd", "Only http:// and https://"),
        ("gopher://hooks.example/", "Only http:// and https://"),
        ("https://user:pw@hooks.example/", "user name or password"),
        ("https://user@hooks.example/", "user name or password"),
        ("https:///path", "no host"),
        ("https://hooks.example:99999/", "port"),
        ("https://hooks.example/a b", "spaces"),
        ("https://hooks.example/\r\nX-Evil: 1", "spaces"),
        ("https://hooks.example/" + "a" * 500, "longer than 500"),
        ("https://hooks.example/café", "non-ASCII"),
    ],
)
def test_a_malformed_or_dangerous_url_is_refused_with_the_reason(url: str, why: str) -> None:
    with pytest.raises(UnsafeUrl, match=why):
        check_url(url)


def test_a_good_url_splits_into_its_parts() -> None:
    assert check_url("https://Hooks.Example/in?x=1") == ("https", "hooks.example", 443, "/in?x=1")
    assert check_url("http://hooks.example:8080") == ("http", "hooks.example", 8080, "/")
    assert check_url("http://[::1]:81/") == ("http", "::1", 81, "/")
    assert check_url("https://bücher.example/")[1] == "xn--bcher-kva.example"


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.1.2.3",
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "169.254.169.254",  # the cloud metadata service
        "100.64.0.1",  # carrier-grade NAT
        "0.0.0.0",
        "224.0.0.1",
        "240.0.0.1",
        "255.255.255.255",
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "fd12:3456::1",
        "ff02::1",
        "::ffff:127.0.0.1",  # IPv4 inside IPv6
        "::ffff:10.0.0.1",
        "2002:7f00:1::1",  # 6to4 of 127.0.0.1
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
        "192.0.2.1",  # documentation
        "2001:db8::1",
    ],
)
def test_non_public_addresses_are_not_public(address: str) -> None:
    assert not address_is_public(address)


@pytest.mark.parametrize(
    "address", ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "64:ff9b::5db8:d822"]
)
def test_public_addresses_are_public(address: str) -> None:
    assert address_is_public(address)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://localhost/",
        "http://2130706433/",  # 127.0.0.1 spelt as one number
        "http://0x7f.1/",
        "http://0/",
    ],
)
def test_urls_that_resolve_to_this_machine_or_network_are_refused(url: str) -> None:
    with pytest.raises(UnsafeUrl, match="non-public address"):
        resolve_target(url, allow_private=False)


def test_one_private_address_among_public_ones_is_enough_to_refuse() -> None:
    resolver = dns({"mixed.example": ["93.184.216.34", "10.1.2.3"]})
    with pytest.raises(UnsafeUrl, match=r"10\.1\.2\.3"):
        resolve_target("https://mixed.example/", allow_private=False, resolver=resolver)


def test_a_public_name_resolves_to_a_pinned_target() -> None:
    resolver = dns({"hooks.example": ["93.184.216.34", "93.184.216.35"]})
    target = resolve_target("https://hooks.example/in", allow_private=False, resolver=resolver)
    assert (target.scheme, target.host, target.port, target.path) == (
        "https",
        "hooks.example",
        443,
        "/in",
    )
    assert target.ip == "93.184.216.34"


def test_a_name_that_does_not_resolve_is_refused() -> None:
    # Refused (a webhook is not created with it), as a kind a delivery may try again later.
    with pytest.raises(UnresolvedHost, match="cannot be resolved"):
        resolve_target("https://nowhere.example/", allow_private=False, resolver=dns({}))
    with pytest.raises(UnresolvedHost, match="has no address"):
        resolve_target(
            "https://empty.example/", allow_private=False, resolver=dns({"empty.example": []})
        )
    # A refused address is not that kind: no later attempt will change it.
    with pytest.raises(UnsafeUrl) as refused:
        resolve_target(
            "https://inside.example/",
            allow_private=False,
            resolver=dns({"inside.example": ["10.0.0.7"]}),
        )
    assert not isinstance(refused.value, UnresolvedHost)


def test_the_operator_may_allow_private_addresses_or_some_hosts() -> None:
    resolver = dns({"hooks.internal": ["10.0.0.7"]})
    url = "http://hooks.internal:8080/x"
    assert resolve_target(url, allow_private=True, resolver=resolver).ip == "10.0.0.7"
    for patterns in (["hooks.internal"], ["hooks.internal:8080"], ["*.internal"]):
        target = resolve_target(url, allow_private=False, allowed_hosts=patterns, resolver=resolver)
        assert target.ip == "10.0.0.7"
    for patterns in (["hooks.internal:9090"], ["other.internal"], ["*.example"]):
        with pytest.raises(UnsafeUrl):
            resolve_target(url, allow_private=False, allowed_hosts=patterns, resolver=resolver)


def test_allow_list_patterns() -> None:
    assert host_allowed("a.corp.example", 443, ["*.corp.example"])
    assert not host_allowed("corp.example.evil", 443, ["*.corp.example"])
    assert host_allowed("127.0.0.1", 8000, ["127.0.0.1:8000"])
    assert not host_allowed("127.0.0.1", 8001, ["127.0.0.1:8000"])
    assert host_allowed("fd00::1", 8080, ["[fd00::1]:8080"])
    assert host_allowed("fd00::1", 9, ["[fd00::1]"])
    assert not host_allowed("fd00::2", 8080, ["[fd00::1]:8080"])


def test_the_backoff_schedule() -> None:
    assert [retry_delay(n) for n in range(1, MAX_ATTEMPTS + 1)] == [
        30,
        120,
        600,
        3600,
        21600,
        None,
    ]
    assert MAX_ATTEMPTS == 6
    assert retry_delay(7) is None
    with pytest.raises(ValueError):
        retry_delay(0)


@pytest.mark.parametrize(
    ("peak", "after", "expected"),
    [
        (1500.0, 1500.0, None),
        (1500.0, 1599.9, None),
        (1595.0, 1600.0, None),  # at 1600 is not above it
        (1590.0, 1604.2, 1600),
        (1500.0, 1530.0, None),  # a new bot's first win: above its start, no milestone
        (1612.0, 1640.0, None),  # been above 1600 before
        (1600.0, 1650.0, None),  # been at 1600: still counts as had
        (1690.0, 1812.0, 1800),  # a big jump reports the highest
        (1400.0, 1380.0, None),
    ],
)
def test_milestones_are_new_hundreds_above_the_best_so_far(
    peak: float, after: float, expected: int | None
) -> None:
    assert milestone_reached(peak_before=peak, after=after) == expected
