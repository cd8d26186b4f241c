"""Settings helpers: a value that is set but unreadable stops the site from starting."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from ladder.env import database_from_url, env_bool, env_list, env_str


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


def test_helpers_fail_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("X_BOOL", "maybe")
    monkeypatch.delenv("X_UNSET", raising=False)
    with pytest.raises(ImproperlyConfigured, match="X_BOOL"):
        env_bool("X_BOOL", False)
    with pytest.raises(ImproperlyConfigured, match="X_UNSET must be set"):
        env_str("X_UNSET")
    with pytest.raises(ImproperlyConfigured, match="DATABASE_URL"):
        database_from_url("DATABASE_URL", "nonsense://where")
