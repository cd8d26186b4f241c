"""ASGI entry point: `daphne ladder.asgi:application` (deploy/systemd/grass-live.service; in
development `manage.py runserver` serves it, daphne being the first installed app).

HTTP goes to Django as under WSGI; WebSockets (`/ws/...`) to the live tables' consumers
(`ladder.live.routing`), either with an API token in the handshake's `Authorization` header
(a program: `grass table`) or with the visitor's session (the same cookie as the pages) and
only from pages of this site: a browser's socket whose Origin is not one of ALLOWED_HOSTS is
refused, so another site cannot open one with a visitor's cookie (`ladder.live.handshake`).
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ladder.settings")
# Django is set up before the consumers (and the models they read) are imported.
django_application = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from ladder.daphne_bodies import install as daphne_bodies_untouched  # noqa: E402
from ladder.live.handshake import SocketAuth  # noqa: E402
from ladder.live.routing import websocket_urlpatterns  # noqa: E402

daphne_bodies_untouched()

application = ProtocolTypeRouter(
    {
        "http": django_application,
        "websocket": SocketAuth(URLRouter(websocket_urlpatterns)),
    }
)
