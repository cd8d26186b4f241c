"""The WebSocket routes of the live tables (mounted by ladder/asgi.py)."""

from __future__ import annotations

from django.urls import path

from ladder.live.consumers import TableConsumer, TournamentConsumer

websocket_urlpatterns = [
    path("ws/matches/<int:match_id>/", TableConsumer.as_asgi()),
    path("ws/tournaments/<int:tournament_id>/", TournamentConsumer.as_asgi()),
]
