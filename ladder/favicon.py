"""`/favicon.ico`: browsers and crawlers ask for it at the site's root whatever the pages link
to, so it is answered here from the static file (ladder/static/ladder/favicon.ico), not with
a 404 in every log. Pages link the static copy (base.html); nothing comes from a CDN."""

from __future__ import annotations

from functools import cache

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_safe

ICON = settings.BASE_DIR / "ladder" / "static" / "ladder" / "favicon.ico"


@cache
def _icon() -> bytes:
    return ICON.read_bytes()


@require_safe
def favicon(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(_icon(), content_type="image/x-icon")
    # A day: the icon changes seldom, and a new one is seen by tomorrow.
    response["Cache-Control"] = "public, max-age=86400"
    return response
