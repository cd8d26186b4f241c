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
# collector's sight. A page of matches leaves thousands of model instances in reference cycles
# (prefetched seats point back at their match), so a full collection runs every dozen such
# requests, and it walked the whole loaded site each time: 40-100 ms added to one request in
# thirteen (the p99 of `GET /api/matches/` in `manage.py bench_scale`, docs/benchmarks.md).
# Frozen, it walks only what requests left behind (7-28 ms).
gc.collect()
gc.freeze()
