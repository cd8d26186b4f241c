"""Settings for the test suite (pyproject's pytest options name this module).

The tests run on PostgreSQL, like the servers: GRASS_TEST_DATABASE_URL, by default
`postgres://postgres@127.0.0.1:5432/grass_test` (pytest-django creates and drops a `test_`
database beside it). Importing this module does not connect: tests that need no database run
even where PostgreSQL is absent.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

# Set before the main settings read them; a developer's own DATABASE_URL stays out of the tests.
os.environ.setdefault("SECRET_KEY", "test-only-" + "x" * 32)

from ladder.env import database_from_url, env_str
from ladder.settings import *  # noqa: F403

DATABASES = {
    "default": database_from_url(
        "GRASS_TEST_DATABASE_URL",
        env_str("GRASS_TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/grass_test"),
    )
}
# The tests' own Redis database, so a test run never feeds a developer's workers (or theirs);
# one per test process under pytest-xdist (gw0: 9, gw1: 10, ...), as each has its own test
# database: the end-to-end tests empty theirs and count the workers on it.
_XDIST_WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
if _XDIST_WORKER > 2:
    # Redis has databases 0-15: 9-11 for brokers and 13-15 for channel layers leave room for three.
    raise RuntimeError("the suite runs in at most 3 processes (pytest -n 3): Redis databases 9-15")
CELERY_BROKER_URL = env_str("GRASS_TEST_BROKER_URL", f"redis://127.0.0.1:6379/{9 + _XDIST_WORKER}")
# The live tables' channel layer: a Redis database of the tests' own per test process too
# (13, 14, 15, ...), emptied by the tests that use it.
CHANNEL_LAYERS["default"]["CONFIG"]["hosts"][0]["address"] = env_str(  # noqa: F405
    "GRASS_TEST_CHANNEL_LAYER_URL", f"redis://127.0.0.1:6379/{13 + _XDIST_WORKER}"
)
# A connection per request, closed after it: a live server's threads must not keep sessions open,
# or the test database cannot be dropped at the end.
DATABASES["default"]["CONN_MAX_AGE"] = 0
# A cache of the test process's own, empty at the start of every run (tests that count uploads
# clear it between tests).
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# Uploaded bots and logs of test runs land in a throw-away folder.
MEDIA_ROOT = Path(tempfile.mkdtemp(prefix="grass-test-media-"))
# The end-to-end tests' workers run as the worker's unprivileged user and write here too: the
# folders this process makes are anyone's to write (STORAGES' FileSystemStorage option).
STORAGES = {
    **STORAGES,  # noqa: F405
    "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"directory_permissions_mode": 0o777},
    },
}
# The fast hasher: the tests create users, they do not test password storage.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# A fixed matchmaker capacity: `auto` would ask the workers over the broker, and most tests run
# none (tests/ladder/matchmaking/test_matchmaker.py and tests/e2e test auto).
GRASS_MATCH_CAPACITY = 4
# Uploads are validated during the request, as the upload tests expect the verdict in the answer.
GRASS_VALIDATE_INLINE = True
# The login limits (django-axes) stay on, as in production: their counts live in the database,
# which pytest-django rolls back (or flushes) after each test, so every test starts with none.
