"""Daphne passes request bodies to Django untouched (`make run`'s web server, and the live
tables' host).

Twisted, under daphne, parses every POST's multipart body itself before daphne sees the
request (`twisted.web.http.Request.requestReceived`), for `request.args`, which daphne never
reads; a body Twisted's parser does not like (an empty form, `--boundary--`; a field name it
refuses) was answered 400 with no body and no log line, where Django answers with JSON that
names the problem. It also held each upload in memory twice. Twisted lets a request skip that
parse (`parsePOSTFormSubmission`); daphne does not ask for it, so `install()` does.
"""

from __future__ import annotations

from typing import Any


def install() -> None:
    """Make daphne's requests skip Twisted's parse of form bodies (idempotent)."""
    from daphne.http_protocol import WebRequest  # type: ignore[import-untyped]

    if getattr(WebRequest, "_grass_bodies_untouched", False):
        return
    original = WebRequest.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self._parsePOSTFormSubmission = False

    WebRequest.__init__ = __init__
    WebRequest._grass_bodies_untouched = True
