"""Sending one webhook request to a checked address: HTTP POST, pinned, no redirects.

Built on the standard library's `http.client`, which does exactly what is asked and nothing
more: it never follows a redirect, never reads proxy settings from the environment, and lets a
connection be opened to a given address while the request names the host. The two connection
classes below connect to `Target.ip` (the address `guard.resolve_target` checked) instead of
resolving the name again, which closes the DNS-rebinding gap between check and connect. For
https the TLS handshake still sends the host name (SNI) and the certificate is verified against
that name with the system's trust store (`ssl.create_default_context`), so pinning the address
costs no security: a certificate for the name is still required.

The timeout applies to connecting and to each read; the body of the answer is not read beyond
a short excerpt. The task's time limit bounds a receiver that drips its headers byte by byte.
"""

from __future__ import annotations

import http.client
import socket
import ssl
from dataclasses import dataclass

from ladder.notifications.guard import Target

EXCERPT_BYTES = 512
"""How much of a failed answer's body is kept for the owner to read."""


@dataclass(frozen=True)
class Answer:
    status: int
    location: str
    """The Location header of a redirect (not followed), else empty."""
    excerpt: str
    """The start of the body, for the delivery's error when the status is not 2xx."""


class _PinnedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, target: Target, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self._ip = target.ip

    def connect(self) -> None:
        self.sock = socket.create_connection((self._ip, self.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, target: Target, timeout: float, context: ssl.SSLContext) -> None:
        super().__init__(target.host, target.port, timeout=timeout, context=context)
        self._ip = target.ip
        self._context = context

    def connect(self) -> None:
        sock = socket.create_connection((self._ip, self.port), self.timeout)
        # server_hostname: SNI, and the name the certificate must hold (check_hostname is on).
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def post(
    target: Target,
    body: bytes,
    headers: dict[str, str],
    *,
    timeout: float,
    context: ssl.SSLContext | None = None,
) -> Answer:
    """POST `body` to `target` and return the answer's status; raises OSError (refused,
    timed out, TLS failure...) or http.client.HTTPException (not HTTP) when there is none.
    `context` is for tests that bring their own certificate authority."""
    connection: http.client.HTTPConnection
    if target.scheme == "https":
        connection = _PinnedHTTPSConnection(
            target, timeout, context or ssl.create_default_context()
        )
    else:
        connection = _PinnedHTTPConnection(target, timeout)
    try:
        connection.request(
            "POST", target.path, body=body, headers={**headers, "Connection": "close"}
        )
        response = connection.getresponse()
        excerpt = response.read(EXCERPT_BYTES).decode("utf-8", "replace")
        return Answer(
            status=response.status, location=response.getheader("Location") or "", excerpt=excerpt
        )
    finally:
        connection.close()
