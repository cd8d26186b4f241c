"""WSGI entry point: `gunicorn ladder.wsgi`."""

import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ladder.settings")
application = get_wsgi_application()

# Every view, serializer and filter module is imported now rather than at the first request,
# so that what follows covers them too.
_urlpatterns = get_resolver().url_patterns

# Everything loaded so far lives as long as the process: freeze it out of the cyclic garbage
# collector's sight. A full collection walked the whole loaded site: 40-100 ms added to one
# match-list request in thirteen (the p99 of `GET /api/matches/` in `manage.py bench_scale`,
# docs/benchmarks.md). Frozen, it walks only what requests left behind; and the match pages
# leave little since `ladder.matches.selectors.release` unties their prefetched seats
# (`manage.py bench_tails` shows a slow request's time split).
gc.collect()
gc.freeze()
