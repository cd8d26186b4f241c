from django.apps import AppConfig


class LiveConfig(AppConfig):
    """Games people play in the browser, and running tables watched as they are played: the
    Play page, and the WebSocket consumers of the live tables (ladder/asgi.py)."""

    name = "ladder.live"
    label = "live"
