"""`/favicon.ico` is answered (it was a 404 in every browser's first visit), with the icon the
pages link, served from this site's own static files."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

pytestmark = pytest.mark.django_db


def test_the_favicon_is_served_at_the_root() -> None:
    response = Client().get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/x-icon"
    icon = response.content
    # An ICO file (reserved 0, type 1) holding one image.
    assert icon[:6] == b"\x00\x00\x01\x00\x01\x00"
    assert len(icon) < 4096
    found = finders.find("ladder/favicon.ico")
    assert isinstance(found, str)
    with open(found, "rb") as static:
        assert static.read() == icon
    assert Client().head("/favicon.ico").status_code == 200
    assert Client().post("/favicon.ico").status_code == 405


@pytest.mark.parametrize("path", ["/", "/login/", "/write-a-bot/", "/no-such-page/"])
def test_every_page_links_the_icon_from_this_site(path: str) -> None:
    html = Client().get(path).content.decode()
    link = re.search(r'<link rel="icon" href="([^"]+)"', html)
    assert link is not None, path
    assert link.group(1).startswith("/static/") and link.group(1).endswith("favicon.ico")
