"""Who is asking: the address of the client behind a request, as the site's own proxy saw it,
and the network a per-address limit counts it under.

The login limits (django-axes, `AXES_CLIENT_IP_CALLABLE`), the sign-up limit
(`ladder.accounts.services.signup_wait`) and the replay limits (`ladder.replays.throttle`)
count per client, so all must read the address the same way and none may believe an address
the client wrote itself. The login and sign-up limits count per network (`network_key`): one
IPv6 host holds a whole /64 and may pick any address in it for each request.
"""

from __future__ import annotations

import ipaddress

from django.http import HttpRequest
from rest_framework.request import Request

IPV6_NETWORK_BITS = 64
"""The prefix one IPv6 client is counted by: the /64 a site, a home or a phone is given (RFC
6177 and the RIRs' policies), in which a host makes up addresses at will (SLAAC, privacy
addresses). Counting single IPv6 addresses let one machine make 15 accounts from 15 of them."""
IPV6_SITE_BITS = 48
"""The prefix of an IPv6 site: what one organisation (or one cheap hosting account) is routed,
65,536 /64s. The sign-up limit counts it beside the /64 (12 of 12 sign-ups from 12 /64s of one
/48 were accepted with the /64 alone), and accounts made from one /48 are linked for seating."""


def client_address(request: HttpRequest | Request) -> str | None:
    """The client's IP address, or None if the request carries none.

    Behind nginx on the same host (deploy/nginx/grass.conf, gunicorn on 127.0.0.1) the
    connection comes from loopback and nginx appends the client's address to
    X-Forwarded-For: its last entry is the one nginx saw, which a client cannot forge (the
    entries before it are the client's own words). Anything that is not an IP address there
    is ignored (a client talking to gunicorn directly), leaving the connection's address.
    """
    address: str | None = request.META.get("REMOTE_ADDR") or None
    if address is None or not _is_loopback(address):
        return address
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")[-1].strip()
    try:
        return str(ipaddress.ip_address(forwarded))
    except ValueError:
        return address


def network_key(address: str | None, *, ipv6_bits: int = IPV6_NETWORK_BITS) -> str | None:
    """What a per-address limit counts `address` as: an IPv4 address itself; an IPv6 address
    its /64 network (or its /`ipv6_bits`), written as the network's first address
    (`2001:db8:7:1::`); an
    IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, what a dual-stack socket reports for an IPv4
    client) the IPv4 address it holds. Anything that is not an IP address (None, a Unix
    socket's empty or odd REMOTE_ADDR) is returned unchanged, so it is still counted alone.

    The key is itself an IP address, not `2001:db8:7:1::/64`: django-axes keeps it in an IP
    address column, shows it in the admin and takes it in `axes_reset_ip`.
    """
    if address is None:
        return None
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv4Address):
        return str(ip)
    # An IPv4 client reached over a tunnel of IPv6 (IPv4-mapped, 6to4, Teredo) is its IPv4
    # address: otherwise one IPv4 host would count as a /64 of its own per tunnel.
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    if ip.sixtofour is not None:
        return str(ip.sixtofour)
    if ip.teredo is not None:
        return str(ip.teredo[1])
    host_bits = 128 - ipv6_bits
    return str(ipaddress.IPv6Address(int(ip) >> host_bits << host_bits))


def client_network(request: HttpRequest | Request) -> str | None:
    """The client's network key (`network_key` of `client_address`): what the login limits
    (AXES_CLIENT_IP_CALLABLE) and the sign-up limit count, so that every address of one IPv6
    /64 shares one count and an IPv4 client counts by its address as before."""
    return network_key(client_address(request))


def is_loopback(address: str | None) -> bool:
    """Whether `address` is the machine itself (a development site, the tests, or a proxy that
    did not say who its client was): not a network that stands for one person."""
    return address is not None and _is_loopback(address)


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False
