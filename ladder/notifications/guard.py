"""Where a webhook may point: the check that keeps an uploaded URL from turning the site into
a port scanner of its own network (server-side request forgery). No Django here.

The rule: the URL is http or https, carries no user name or password, and EVERY address its
host resolves to is a public one. An address that is private (10/8, 192.168/16, fc00::/7...),
loopback, link-local (169.254.169.254, the cloud metadata service), multicast, reserved,
unspecified or otherwise not global is refused, whatever the URL spells (`localhost`, `[::1]`,
`0x7f.1`, `2130706433`, a name whose DNS answers 127.0.0.1): the check is on what the resolver
returns, never on the text. The operator may allow private addresses altogether
(GRASS_WEBHOOK_ALLOW_PRIVATE, for development and tests) or only some hosts
(GRASS_WEBHOOK_ALLOWED_HOSTS, `host` or `host:port` patterns such as `hooks.internal:8080` or
`*.corp.example`).

Checking is not enough on its own: a name may resolve to a public address when checked and to
127.0.0.1 a second later (DNS rebinding). So `resolve_target` returns the checked address, and
the sender (`transport.py`) connects to exactly that address, never resolving the name again.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

MAX_URL_LENGTH = 500
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")

Resolver = Callable[..., list[tuple[Any, ...]]]
"""`socket.getaddrinfo`'s signature; tests pass their own to play DNS."""


class UnsafeUrl(ValueError):
    """The URL may not be used; the message says why, in words for the owner."""


class UnresolvedHost(UnsafeUrl):
    """The URL's host could not be resolved (or had no address): often a passing DNS failure,
    so a delivery tries again later, where a refused address fails it for good. A webhook is
    still not created with a URL whose host does not resolve now."""


@dataclass(frozen=True)
class Target:
    """A checked URL: where to connect (`ip`, `port`) and what to ask for (`host`, `path`)."""

    scheme: str
    host: str
    """The name as written (lower case, IPv6 without brackets): Host header and TLS name."""
    port: int
    path: str
    """Path and query, never empty ("/")."""
    ip: str
    """The checked address the request goes to."""


def check_url(url: str) -> tuple[str, str, int, str]:
    """The URL's scheme, host, port and path-with-query, or UnsafeUrl saying what is wrong
    with its text (resolving is `resolve_target`'s job)."""
    if len(url) > MAX_URL_LENGTH:
        raise UnsafeUrl(f"The URL is longer than {MAX_URL_LENGTH} characters.")
    if any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise UnsafeUrl("The URL contains spaces or control characters.")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise UnsafeUrl("Only http:// and https:// URLs can receive webhooks.")
    if "@" in parts.netloc or parts.username is not None or parts.password is not None:
        raise UnsafeUrl("The URL must not contain a user name or password; use the secret.")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise UnsafeUrl("The URL has no host.")
    try:
        # An international name is sent (Host header, TLS name) and resolved in its ASCII form.
        host = host.encode("idna").decode("ascii")
    except UnicodeError:
        raise UnsafeUrl("The URL's host is not a valid name.") from None
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        raise UnsafeUrl("The URL's port is not a number from 1 to 65535.") from None
    if not 0 < port < 65536:
        raise UnsafeUrl("The URL's port is not a number from 1 to 65535.")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    if not path.isascii():
        raise UnsafeUrl("Percent-encode the URL's non-ASCII characters.")
    return scheme, host, port, path


def host_allowed(host: str, port: int, patterns: Sequence[str]) -> bool:
    """Whether the operator's allow-list names this host: a pattern `name` allows every port,
    `name:port` one port; `*` matches within names (`*.corp.example`). IPv6 patterns are
    written in brackets (`[fd00::1]:8080`)."""
    host = host.lower()
    for pattern in patterns:
        pattern = pattern.strip().lower()
        want_port: int | None = None
        if pattern.startswith("["):
            name, _, rest = pattern[1:].partition("]")
            if rest.startswith(":") and rest[1:].isdigit():
                want_port = int(rest[1:])
        else:
            name, sep, port_text = pattern.rpartition(":")
            if sep and port_text.isdigit() and ":" not in name:
                want_port = int(port_text)
            else:
                name = pattern
        if fnmatch.fnmatchcase(host, name) and want_port in (None, port):
            return True
    return False


def address_is_public(address: str) -> bool:
    """Whether `address` is on the public internet: not private, loopback, link-local,
    multicast, reserved, unspecified or otherwise special (carrier-grade NAT, documentation
    ranges...). An IPv6 address that carries an IPv4 one (`::ffff:127.0.0.1`, 6to4, NAT64) is
    judged by that one.
    """
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        # Forms that carry an IPv4 address, which a gateway may reach on the operator's
        # network: IPv4-mapped, 6to4 and the NAT64 prefix 64:ff9b::/96.
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is None and ip in NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None:
            return address_is_public(str(embedded))
    special = (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
    )
    return ip.is_global and not special


def resolve_target(
    url: str,
    *,
    allow_private: bool,
    allowed_hosts: Sequence[str] = (),
    resolver: Resolver | None = None,
) -> Target:
    """Check `url`, resolve its host once and return where to send, or raise UnsafeUrl.

    Every address the name resolves to must be public, not just the first: otherwise a name
    with one public and one private address would pass and the connection could still land
    on the private one. With `allow_private`, or a host in `allowed_hosts`, any address goes.
    """
    scheme, host, port, path = check_url(url)
    resolver = resolver or socket.getaddrinfo  # looked up now, so tests may stand in for DNS
    try:
        infos = resolver(host, port, type=socket.SOCK_STREAM)
    except UnicodeError as exc:  # Not a name at all: no later attempt can resolve it.
        raise UnsafeUrl(f"The host {host} cannot be resolved ({exc}).") from None
    except OSError as exc:
        raise UnresolvedHost(f"The host {host} cannot be resolved ({exc}).") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise UnresolvedHost(f"The host {host} has no address.")
    if not (allow_private or host_allowed(host, port, allowed_hosts)):
        for address in addresses:
            if not address_is_public(address):
                raise UnsafeUrl(
                    f"The host {host} resolves to {address}, a private, loopback or otherwise "
                    "non-public address; webhooks go to public addresses only."
                )
    return Target(scheme=scheme, host=host, port=port, path=path, ip=addresses[0])
