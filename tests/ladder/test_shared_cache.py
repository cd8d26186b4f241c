"""The shared cache (ladder/shared_cache.py): in Redis, what is read back is signed, a cache that
is down is a miss and never a 500, and no file cache is left in a folder anyone could make.

The suite's own cache is locmem (ladder/settings_test.py); the tests here that need the real
thing point the site at the test process's cache database of the run's own Redis
(`ladder.settings_test.redis_url_for`) under a key prefix of their own, and delete only their
own keys.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ladder import hourly, shared_cache
from ladder.settings_test import redis_url_for
from ladder.shared_cache import SignedSerializer, UnsignedValue
from tests.ladder.conftest import _unavailable

REPO = Path(__file__).resolve().parents[2]


class _Planted:
    """A pickle that, when loaded, writes a file: what an attacker would plant."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.write_text, (self.marker, "ran"))


def _site_cache(location: str, prefix: str) -> dict[str, Any]:
    import ladder.settings

    default = ladder.settings.CACHES["default"]
    return {"default": {**default, "LOCATION": location, "KEY_PREFIX": prefix}}


@pytest.fixture
def redis_cache(settings: Any) -> Iterator[tuple[Any, str]]:
    """The site's Redis cache on the tests' Redis: (a raw client of its database, the prefix)."""
    import redis

    location = redis_url_for("cache", settings.CELERY_BROKER_URL.rsplit("/", 1)[0])
    client = redis.Redis.from_url(location, socket_timeout=3)
    try:
        client.ping()
    except redis.RedisError as exc:
        _unavailable("Redis", exc)
    prefix = f"test-shared-cache-{uuid.uuid4().hex}"
    settings.CACHES = _site_cache(location, prefix)
    yield client, prefix
    for key in client.scan_iter(f"{prefix}:*"):
        client.delete(key)


def test_the_site_caches_in_redis_not_in_files() -> None:
    import ladder.settings

    assert ladder.settings.CACHES["default"]["BACKEND"] == (
        "django.core.cache.backends.redis.RedisCache"
    )
    assert ladder.settings.CACHES["default"]["OPTIONS"]["serializer"] == (
        "ladder.shared_cache.SignedSerializer"
    )
    # No file cache anywhere: not in the site, its deployment or its benchmarks.
    for folder in ("ladder", "deploy", "bench"):
        for path in (REPO / folder).rglob("*"):
            if path.is_file() and path.suffix in {".py", ".service", ".example", ".sh"}:
                text = path.read_text()
                assert "FileBasedCache" not in text, path
                assert "CACHE_DIR" not in text, path


def test_values_come_back_and_numbers_stay_bare() -> None:
    serializer = SignedSerializer()
    assert serializer.dumps(7) == 7  # Redis INCR works on it
    assert serializer.loads(b"7") == 7
    assert serializer.loads(serializer.dumps([(1.5, 2)])) == [(1.5, 2)]
    assert serializer.loads(serializer.dumps(True)) is True


def test_a_planted_pickle_is_never_unpickled(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    serializer = SignedSerializer()
    for planted in (
        pickle.dumps(_Planted(marker)),  # unsigned
        b"\0" * 32 + pickle.dumps(_Planted(marker)),  # a made-up signature
        serializer.dumps("x")[:32] + pickle.dumps(_Planted(marker)),  # another value's
    ):
        with pytest.raises(UnsignedValue):
            serializer.loads(planted)
    assert not marker.exists()
    # The control: the same pickle, signed, does run (so the test can fail).
    signed = serializer.dumps(_Planted(marker))
    serializer.loads(signed)
    assert marker.read_text() == "ran"


@pytest.mark.django_db
def test_a_pickle_planted_in_redis_reads_as_a_miss(
    redis_cache: tuple[Any, str], tmp_path: Path
) -> None:
    client, prefix = redis_cache
    marker = tmp_path / "ran"
    client.set(f"{prefix}:1:leaderboard:anchors", pickle.dumps(_Planted(marker)))
    assert shared_cache.get("leaderboard:anchors", "missed") == "missed"
    assert not marker.exists()
    shared_cache.put("leaderboard:anchors", [(1500.0, 0)], 60)
    assert shared_cache.get("leaderboard:anchors") == [(1500.0, 0)]


@pytest.mark.django_db
def test_beats_kept_counts_live_in_redis_for_every_host(
    redis_cache: tuple[Any, str], monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    from django.contrib.auth import get_user_model
    from django.core.cache import caches

    from ladder.bots.models import Bot
    from ladder.ratings import selectors
    from ladder.ratings.models import BotRating
    from ladder.ratings.tasks import keep_leaderboards

    client, prefix = redis_cache
    settings.GRASS_LADDER_TABLES = [("modern", 4)]
    monkeypatch.setattr(selectors, "CACHED_FROM", 3)
    owner = get_user_model().objects.create_user(username="many")
    for i in range(4):
        bot = Bot.objects.create(owner=owner, name=f"b{i}")
        BotRating.objects.create(bot=bot, ruleset="modern", mu=1500.0 + i, games=3)
    assert keep_leaderboards() == {"modern": 4}
    assert any(b"leaderboard:count" in key for key in client.scan_iter(f"{prefix}:*"))
    # Another host: a connection of its own; it finds the count beat kept.
    caches.close_all()
    BotRating.objects.filter(bot__name="b0").delete()
    assert len(selectors.leaderboard(ruleset="modern")) == 4


@pytest.mark.django_db
def test_the_hourly_limits_count_in_redis(redis_cache: tuple[Any, str]) -> None:
    spent = [
        hourly.spend(bucket="signup", limit=2, client="203.0.113.9", now=7200.5) for _ in "abc"
    ]
    assert spent[:2] == [0, 0] and spent[2] > 0
    assert hourly.wait(bucket="signup", limit=2, client="203.0.113.9", now=7201.0) > 0


@pytest.fixture
def redis_down(settings: Any) -> None:
    """The site's cache on a port where nothing listens: every call is refused."""
    settings.CACHES = _site_cache("redis://127.0.0.1:1/2", "down")


@pytest.mark.django_db
def test_a_redis_outage_is_a_miss_and_never_a_500(
    redis_down: None, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from ladder.bots.models import Bot
    from ladder.ratings import selectors
    from ladder.ratings.models import BotRating
    from ladder.ratings.tasks import keep_leaderboards

    settings.GRASS_LADDER_TABLES = [("modern", 4)]
    monkeypatch.setattr(selectors, "CACHED_FROM", 1)  # every board's count goes to the cache
    monkeypatch.setattr(selectors.Leaderboard, "deep", 0)
    monkeypatch.setattr(selectors, "ANCHOR_STEP", 1)
    owner = get_user_model().objects.create_user(username="owner")
    for i in range(3):
        bot = Bot.objects.create(owner=owner, name=f"b{i}")
        BotRating.objects.create(bot=bot, ruleset="modern", mu=1500.0 + i, games=3)
    assert keep_leaderboards() == {"modern": 3}
    client = Client()
    for url in ("/", "/?page=2", "/api/leaderboard/?offset=1", "/signup/"):
        assert client.get(url).status_code == 200, url
    # The limits open rather than lock everyone out (ladder/hourly.py).
    assert hourly.spend(bucket="signup", limit=1, client="x", now=1.0) == 0
    assert hourly.wait(bucket="signup", limit=1, client="x", now=1.0) == 0


def test_a_pickle_planted_in_the_old_cache_folder_is_never_read(tmp_path: Path) -> None:
    """The file cache's default folder was `<tmp>/grass-ladder-cache-<uid>`: any local user could
    make it first, with a pickle in it named for a key the site reads. Now nothing reads it."""
    marker = tmp_path / "ran"
    folder = tmp_path / f"grass-ladder-cache-{os.getuid()}"
    folder.mkdir()
    # FileBasedCache's file for the key "probe" (version 1, no prefix): a zlib'd pickle after
    # a pickled expiry; a plain pickle of the payload is what it unpickles first.
    name = hashlib.md5(b":1:probe", usedforsecurity=False).hexdigest() + ".djcache"
    (folder / name).write_bytes(pickle.dumps(_Planted(marker)))
    env = {
        "PATH": os.environ["PATH"],
        "TMPDIR": str(tmp_path),
        "DEBUG": "true",
        "DJANGO_SETTINGS_MODULE": "ladder.settings",
        "GRASS_CACHE_URL": "redis://127.0.0.1:1/2",  # refused: the cache is down, too
        "PYTHONPATH": str(REPO),
    }
    script = (
        "import django; django.setup()\n"
        "from ladder import shared_cache\n"
        "print(shared_cache.get('probe', 'missed'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().strip() == "missed"
    assert not marker.exists()


def test_the_cache_may_not_share_the_brokers_database() -> None:
    env = {
        "PATH": os.environ["PATH"],
        "DEBUG": "true",
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/4",
        "GRASS_CACHE_URL": "redis://127.0.0.1:6379/4",
        "PYTHONPATH": str(REPO),
    }
    done = subprocess.run(
        [sys.executable, "-c", "import ladder.settings"],
        env=env,
        cwd=REPO,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "GRASS_CACHE_URL (redis://127.0.0.1:6379/4) must name a Redis database of its own" in (
        done.stderr.decode()
    )
