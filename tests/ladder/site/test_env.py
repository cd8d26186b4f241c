"""Settings from the environment: the helpers (a value that is set but unreadable stops the site
from starting) and the production settings they feed."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured

from ladder.env import (
    database_from_url,
    env_bool,
    env_int_or_auto,
    env_json_object,
    env_ladder_tables,
    env_list,
    env_str,
)


def test_helpers_read_values_and_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("X_BOOL", "Yes")
    monkeypatch.setenv("X_LIST", "a.example, b.example,,")
    monkeypatch.delenv("X_UNSET", raising=False)
    assert env_bool("X_BOOL", False) is True
    assert env_bool("X_UNSET", True) is True
    assert env_list("X_LIST", []) == ["a.example", "b.example"]
    assert env_str("X_UNSET", "fallback") == "fallback"
    sqlite = database_from_url("X", "sqlite:////tmp/x.sqlite3")
    assert sqlite["ENGINE"] == "django.db.backends.sqlite3"
    postgres = database_from_url("X", "postgres://postgres@127.0.0.1:5432/grass")
    assert (postgres["ENGINE"], postgres["NAME"]) == ("django.db.backends.postgresql", "grass")


def test_a_number_or_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("X_CAP", raising=False)
    assert env_int_or_auto("X_CAP", None) is None
    assert env_int_or_auto("X_CAP", 3) == 3
    monkeypatch.setenv("X_CAP", " Auto ")
    assert env_int_or_auto("X_CAP", 3) is None
    monkeypatch.setenv("X_CAP", "12")
    assert env_int_or_auto("X_CAP", None) == 12
    for bad, why in (
        ("lots", "is neither a whole number nor auto"),
        ("-1", "must not be negative"),
    ):
        monkeypatch.setenv("X_CAP", bad)
        with pytest.raises(ImproperlyConfigured, match=f"X_CAP='{bad}' {why}"):
            env_int_or_auto("X_CAP", None)


def test_ladder_tables_are_ruleset_seat_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("X_TABLES", "classic:6, modern:2")
    monkeypatch.delenv("X_UNSET", raising=False)
    assert env_ladder_tables("X_TABLES", []) == [("classic", 6), ("modern", 2)]
    assert env_ladder_tables("X_UNSET", ["modern:4"]) == [("modern", 4)]
    for bad, message in [
        ("modern:7", "2 to 6 seats"),
        ("modern:1", "2 to 6 seats"),
        ("poker:4", "not ruleset:seats"),
        ("modern", "not ruleset:seats"),
        ("modern:four", "not ruleset:seats"),
    ]:
        monkeypatch.setenv("X_TABLES", bad)
        with pytest.raises(ImproperlyConfigured, match=f"X_TABLES: '{bad}'.*{message}"):
            env_ladder_tables("X_TABLES", [])


def test_helpers_fail_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("X_BOOL", "maybe")
    monkeypatch.delenv("X_UNSET", raising=False)
    with pytest.raises(ImproperlyConfigured, match="X_BOOL"):
        env_bool("X_BOOL", False)
    with pytest.raises(ImproperlyConfigured, match="X_UNSET must be set"):
        env_str("X_UNSET")
    with pytest.raises(ImproperlyConfigured, match="DATABASE_URL"):
        database_from_url("DATABASE_URL", "nonsense://where")


# The production settings: ladder/settings.py run afresh under a given environment.

SETTINGS = Path(__file__).resolve().parents[3] / "ladder" / "settings.py"
PRODUCTION_VARIABLES = (
    "DEBUG",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "CSRF_TRUSTED_ORIGINS",
    "SITE_HTTPS",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "MEDIA_STORAGE",
    "MEDIA_STORAGE_OPTIONS",
    "STATIC_STORAGE",
    "LOG_LEVEL",
    "CELERY_WORKER_CONCURRENCY",
)


def load_settings(monkeypatch: pytest.MonkeyPatch, **env: str) -> dict[str, Any]:
    """The settings module's names under exactly `env` (plus a valid SECRET_KEY)."""
    for name in PRODUCTION_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SECRET_KEY", "s" * 50)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(SETTINGS))


def test_settings_defaults_trust_no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    s = load_settings(monkeypatch)
    assert s["SITE_HTTPS"] is False
    # Without a proxy that overwrites X-Forwarded-Proto, trusting it would let a client claim
    # HTTPS; plain-HTTP development must keep working, so cookies are not HTTPS-only.
    for name in ("SECURE_PROXY_SSL_HEADER", "SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE"):
        assert name not in s
    assert s["SECURE_HSTS_SECONDS"] == 0
    assert s["CSRF_TRUSTED_ORIGINS"] == []
    assert s["STORAGES"]["default"] == {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {},
    }
    assert s["STORAGES"]["staticfiles"]["BACKEND"].endswith(".StaticFilesStorage")
    assert s["LOGGING"]["root"]["level"] == "INFO"
    assert s["CELERY_WORKER_CONCURRENCY"] is None  # Celery then uses the machine's cores


def test_settings_production_values_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    s = load_settings(
        monkeypatch,
        ALLOWED_HOSTS="ladder.example.org",
        CSRF_TRUSTED_ORIGINS="https://ladder.example.org,https://admin.example.org",
        SITE_HTTPS="true",
        SECURE_HSTS_SECONDS="3600",
        SECURE_HSTS_INCLUDE_SUBDOMAINS="yes",
        SECURE_HSTS_PRELOAD="on",
        MEDIA_STORAGE="storages.backends.s3.S3Storage",
        MEDIA_STORAGE_OPTIONS='{"bucket_name": "grass-media"}',
        STATIC_STORAGE="django.contrib.staticfiles.storage.ManifestStaticFilesStorage",
        LOG_LEVEL="warning",
        CELERY_WORKER_CONCURRENCY="3",
    )
    assert s["ALLOWED_HOSTS"] == ["ladder.example.org"]
    assert s["CSRF_TRUSTED_ORIGINS"] == ["https://ladder.example.org", "https://admin.example.org"]
    assert s["SECURE_PROXY_SSL_HEADER"] == ("HTTP_X_FORWARDED_PROTO", "https")
    assert s["SECURE_SSL_REDIRECT"] and s["SESSION_COOKIE_SECURE"] and s["CSRF_COOKIE_SECURE"]
    assert (s["SECURE_HSTS_SECONDS"], s["SECURE_HSTS_INCLUDE_SUBDOMAINS"]) == (3600, True)
    assert s["SECURE_HSTS_PRELOAD"] is True
    assert s["STORAGES"]["default"] == {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {"bucket_name": "grass-media"},
    }
    assert s["STORAGES"]["staticfiles"]["BACKEND"].endswith(".ManifestStaticFilesStorage")
    assert s["LOGGING"]["root"]["level"] == "WARNING"
    assert s["CELERY_WORKER_CONCURRENCY"] == 3


def test_settings_refuse_unreadable_production_values(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ImproperlyConfigured, match="MEDIA_STORAGE_OPTIONS must be a JSON object"):
        load_settings(monkeypatch, MEDIA_STORAGE_OPTIONS='["bucket"]')
    with pytest.raises(ImproperlyConfigured, match="MEDIA_STORAGE_OPTIONS is not valid JSON"):
        load_settings(monkeypatch, MEDIA_STORAGE_OPTIONS="{bucket_name: x}")
    with pytest.raises(ImproperlyConfigured, match="SITE_HTTPS"):
        load_settings(monkeypatch, SITE_HTTPS="sometimes")
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY must be at least 32"):
        load_settings(monkeypatch, SECRET_KEY="short")


def test_env_json_object(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("X_JSON", ' {"a": 1} ')
    monkeypatch.delenv("X_UNSET", raising=False)
    assert env_json_object("X_JSON", {}) == {"a": 1}
    assert env_json_object("X_UNSET", {"b": 2}) == {"b": 2}
