"""Reading settings from the environment: small typed helpers that fail loudly.

A value that is set but cannot be read (``DEBUG=maybe``, ``DATABASE_URL=nonsense``) raises
ImproperlyConfigured naming the variable, so a misconfigured server refuses to start instead of
running with a default nobody chose.
"""

from __future__ import annotations

import json
import os
from typing import Any

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def env_str(name: str, default: str | None = None) -> str:
    """The variable's text; without a default, a missing or empty variable is an error."""
    value = os.environ.get(name, "")
    if value:
        return value
    if default is None:
        raise ImproperlyConfigured(f"the environment variable {name} must be set")
    return default


def env_bool(name: str, default: bool) -> bool:
    """`1/true/yes/on` or `0/false/no/off` (any case); unset or empty gives `default`."""
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return default
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean (use true or false)")


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not an integer") from None


def env_int_or_auto(name: str, default: int | None) -> int | None:
    """A whole number of at least 0, or `auto` (None: the caller works it out)."""
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    if value.lower() == "auto":
        return None
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is neither a whole number nor auto") from None
    if number < 0:
        raise ImproperlyConfigured(f"{name}={value!r} must not be negative")
    return number


def env_list(name: str, default: list[str]) -> list[str]:
    """Comma-separated values, blanks dropped; unset or empty gives `default`."""
    value = os.environ.get(name, "")
    if not value.strip():
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def env_json_object(name: str, default: dict[str, Any]) -> dict[str, Any]:
    """A JSON object (`{"location": "/srv/media"}`); unset or empty gives `default`."""
    value = os.environ.get(name, "").strip()
    if not value:
        return dict(default)
    try:
        parsed = json.loads(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} is not valid JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise ImproperlyConfigured(f"{name} must be a JSON object, got {value!r}")
    return parsed


def database_from_url(name: str, url: str) -> dict[str, Any]:
    """A Django DATABASES entry from a URL such as `postgres://user@host:5432/db` or
    `sqlite:///path/to/file.sqlite3` (`name` is the variable it came from, for the message)."""
    import dj_database_url

    try:
        config = dict(dj_database_url.parse(url, conn_max_age=60, conn_health_checks=True))
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} is not a usable database URL: {exc}") from None
    if not config.get("ENGINE"):
        raise ImproperlyConfigured(f"{name}={url!r}: unknown database scheme")
    return config


def env_ladder_tables(name: str, default: list[str]) -> list[tuple[str, int]]:
    """`ruleset:seats` pairs, comma-separated (`modern:4,classic:6`): the kinds of table the
    ladder's matchmaker sets. An unknown ruleset or a seat count outside 2-6 is an error."""
    from engine import RULESETS

    tables = []
    for item in env_list(name, default):
        ruleset, _, seats = item.partition(":")
        if ruleset not in RULESETS or not seats.strip().isdigit():
            raise ImproperlyConfigured(
                f"{name}: {item!r} is not ruleset:seats (rulesets: {', '.join(RULESETS)})"
            )
        if not 2 <= int(seats) <= 6:
            raise ImproperlyConfigured(f"{name}: {item!r} must have 2 to 6 seats")
        tables.append((ruleset, int(seats)))
    return tables
