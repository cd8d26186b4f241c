"""The replay viewer's URLs; ladder/urls.py includes them at the site's root."""

from django.urls import path

import ladder.converters  # noqa: F401  (registers <id:...>)
from ladder.replays.views import match_replay_json, replay_page, upload_replay_json

urlpatterns = [
    path("matches/<id:match_id>/replay.json", match_replay_json, name="match-replay"),
    path("replay/", replay_page, name="replay-page"),
    path("replay/upload.json", upload_replay_json, name="replay-upload"),
]
