"""The WebSocket routes of the live tables (mounted by ladder/asgi.py)."""

from __future__ import annotations

from django.urls import path

import ladder.converters  # noqa: F401  (registers <id:...>)
from ladder.live.consumers import TableConsumer, TournamentConsumer

websocket_urlpatterns = [
    path("ws/matches/<id:match_id>/", TableConsumer.as_asgi()),
    path("ws/tournaments/<id:tournament_id>/", TournamentConsumer.as_asgi()),
]
