"""What a per-address limit counts a client as (`ladder.clients.network_key`): an IPv4 address
itself, an IPv6 address its /64, an IPv4-mapped IPv6 address its IPv4 address."""

from __future__ import annotations

import pytest

from ladder.clients import network_key


@pytest.mark.parametrize(
    ("address", "key"),
    [
        ("198.51.100.7", "198.51.100.7"),
        ("198.51.100.8", "198.51.100.8"),
        ("2001:db8:7:1::1", "2001:db8:7:1::"),
        ("2001:db8:7:1:5e:77:a1:9", "2001:db8:7:1::"),
        ("2001:0DB8:0007:0001:FFFF:FFFF:FFFF:FFFF", "2001:db8:7:1::"),
        ("2001:db8:7:2::1", "2001:db8:7:2::"),
        ("fe80::1%eth0", "fe80::"),
        ("::ffff:198.51.100.7", "198.51.100.7"),
        ("::1", "::"),
        ("", ""),
        ("unix-socket", "unix-socket"),
        (None, None),
    ],
)
def test_network_key(address: str | None, key: str | None) -> None:
    assert network_key(address) == key
