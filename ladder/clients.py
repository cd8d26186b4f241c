"""Who is asking: the address of the client behind a request, as the site's own proxy saw it.

The login limits (django-axes, `AXES_CLIENT_IP_CALLABLE`) and the replay limits
(`ladder.replays.throttle`) count per address, so both must read it the same way and neither
may believe an address the client wrote itself.
"""

from __future__ import annotations

import ipaddress

from django.http import HttpRequest
from rest_framework.request import Request


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


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False
