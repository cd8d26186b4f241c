"""Settings for the test suite (pyproject's pytest options name this module).

The tests run on PostgreSQL, like the servers: GRASS_TEST_DATABASE_URL, by default
`postgres://postgres@127.0.0.1:5432/grass_test_<checkout>` (pytest-django creates and drops a
`test_` database beside it; `<checkout>` names this checkout's folder, so that two checkouts
testing at once on one machine never drop each other's database mid-run). Importing this
module does not connect: tests that need no database run even where PostgreSQL is absent.
"""

from __future__ import annotations

import copy
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

# Set before the main settings read them; a developer's own DATABASE_URL stays out of the tests.
os.environ.setdefault("SECRET_KEY", "test-only-" + "x" * 32)

from ladder.env import database_from_url, env_str
from ladder.settings import *  # noqa: F403

_CHECKOUT = hashlib.sha1(str(Path(__file__).resolve().parents[1]).encode()).hexdigest()[:8]
DATABASES = {
    "default": database_from_url(
        "GRASS_TEST_DATABASE_URL",
        env_str(
            "GRASS_TEST_DATABASE_URL", f"postgres://postgres@127.0.0.1:5432/grass_test_{_CHECKOUT}"
        ),
    )
}
# The test run's own Redis (tests/redis_server.py): the first pytest process of a run starts a
# redis-server and hands its address to the others in GRASS_TEST_REDIS_URL; the tests never use
# (or empty) a Redis they did not start. Each test process takes REDIS_DATABASES_PER_PROCESS
# databases of it (gw0: 0-2, gw1: 3-5, ...), as each has its own test database: the end-to-end
# tests empty their broker's and count the workers on it.
REDIS_DATABASES_PER_PROCESS = 3
REDIS_ROLES = ("broker", "channels", "cache")
"""What each of a process's databases is for, in order; `cache` is kept for a Redis cache."""
TEST_REDIS_URL = os.environ.get("GRASS_TEST_REDIS_URL", "")
_XDIST_WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)


def redis_url_for(role: str, server: str = TEST_REDIS_URL, process: int = _XDIST_WORKER) -> str:
    """This test process's database of the run's Redis for `role` (REDIS_ROLES). Without a
    server (these settings imported outside a test run, or before the first process started
    it), an address where no Redis answers: nothing falls back to a developer's Redis."""
    if REDIS_DATABASES_PER_PROCESS * (process + 1) > 64:  # tests/redis_server.py's DATABASES
        raise RuntimeError(f"test process {process}: the run's Redis has databases for 21")
    if not server:
        server = "redis://127.0.0.1:1"  # a privileged port no Redis listens on: refused at once
    database = REDIS_DATABASES_PER_PROCESS * process + REDIS_ROLES.index(role)
    return f"{server}/{database}"


def redis_settings(server: str = TEST_REDIS_URL) -> dict[str, Any]:
    """The settings that name the run's Redis, for `server`: applied here, and again by the
    process that starts the server (tests/conftest.py), whose settings were read before."""
    layers = copy.deepcopy(CHANNEL_LAYERS)  # noqa: F405
    layers["default"]["CONFIG"]["hosts"][0]["address"] = redis_url_for("channels", server)
    return {"CELERY_BROKER_URL": redis_url_for("broker", server), "CHANNEL_LAYERS": layers}


globals().update(redis_settings())
# A connection per request, closed after it: a live server's threads must not keep sessions open,
# or the test database cannot be dropped at the end.
DATABASES["default"]["CONN_MAX_AGE"] = 0
# A cache of the test process's own, empty at the start of every run: locmem, not the site's
# Redis cache, since every test clears it (tests/ladder/conftest.py) and Redis's clear is a
# FLUSHDB of a database others may be using. Tests of the Redis cache itself point one at the
# tests' Redis with a key prefix of their own (tests/ladder/test_shared_cache.py).
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
# ... of the `now` pool (ladder.matches.lanes): a challenge and a first game ...
GRASS_NOW_CAPACITY = 2
# ... and of the table hosts: two people's games.
GRASS_TABLES_CAPACITY = 2
# No thread proving a stopped worker again in the test process (it would outlive the test and
# its database); the breaker's tests call `breaker.breaker_reprove` themselves, and the
# end-to-end workers run with the site's settings.
GRASS_BREAKER_PROOF_SECONDS = 0
# Uploads are validated during the request, as the upload tests expect the verdict in the answer.
GRASS_VALIDATE_INLINE = True
# The login limits (django-axes) stay on, as in production: their counts live in the database,
# which pytest-django rolls back (or flushes) after each test, so every test starts with none.
