"""Who opens a live table's WebSocket: a browser with its session, or a program with an API
token (`grass table`), told apart at the handshake (ladder/asgi.py mounts `SocketAuth`).

A handshake with an `Authorization` header is a program's: the header must carry an API
token (`Token <key>` or `Bearer <key>`, the REST API's, checked the same way), and the socket
is that token's user's, whatever cookie or Origin comes with it; any other value of the
header (another scheme, an unknown key, two headers) is refused before a consumer runs. A
page's script cannot set that header (the browsers' WebSocket API has no way to), so the
token is never ambient authority another site could borrow; the one Authorization a browser
may add by itself (`Basic`, from credentials written in the URL) is refused.

A handshake without one is a browser's: its session cookie makes the user, and only from a
page of this site (an Origin among ALLOWED_HOSTS), so that another site's page cannot open a
socket with a visitor's cookie.

Past the handshake both are the same consumer, with the same limits on every message
(`ladder.live.consumers`).
"""

from __future__ import annotations

from typing import Any

from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.security.websocket import AllowedHostsOriginValidator, WebsocketDenier

from ladder.accounts.selectors import token_header_user

Scope = dict[str, Any]


def authorization(scope: Scope) -> list[bytes]:
    """Every `Authorization` header of the handshake (ASGI gives names lower-cased)."""
    return [value for name, value in scope.get("headers", ()) if name == b"authorization"]


class TokenAuth:
    """The socket is the user of the API token in the handshake's one `Authorization` header;
    a handshake without a token that holds is refused (HTTP 403)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> Any:
        headers = authorization(scope)
        user = None
        if len(headers) == 1:
            user = await database_sync_to_async(token_header_user)(headers[0])
        if user is None:
            return await WebsocketDenier()(scope, receive, send)
        return await self.inner({**scope, "user": user}, receive, send)


class SocketAuth:
    """A program's handshake (an `Authorization` header) to `TokenAuth`, a browser's to its
    session, from pages of this site only."""

    def __init__(self, inner: Any) -> None:
        self.token = TokenAuth(inner)
        self.session = AllowedHostsOriginValidator(AuthMiddlewareStack(inner))

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> Any:
        if authorization(scope):
            return await self.token(scope, receive, send)
        return await self.session(scope, receive, send)
