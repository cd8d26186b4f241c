"""Django settings of the ladder site, read from the environment (see ladder/env.py).

| variable | default |
| --- | --- |
| DEBUG | false |
| SECRET_KEY | required, except with DEBUG (then a fixed development key) |
| ALLOWED_HOSTS | `localhost,127.0.0.1` |
| DATABASE_URL | `sqlite:///<repo>/ladder.sqlite3` (development; tests use PostgreSQL) |
| CELERY_BROKER_URL | `redis://127.0.0.1:6379/0` |
| MEDIA_ROOT | `<repo>/media`: uploaded bots and match logs |
| GRASS_SANDBOXED | true: bots run in the OS sandbox (false only on a machine without root) |
| GRASS_MATCH_MAX_ATTEMPTS | 3: runs of one match before it is given up (failed for good) |
| GRASS_MATCH_STALE_SECONDS | 1800: a match "running" longer than this lost its worker |
| GRASS_MATCH_CAPACITY | 4 (2 per worker, 2 workers): most queued + running matches |
| GRASS_VALIDATE_INLINE | false: uploads are validated by a Celery task (true: during the request) |

Importing this module never touches the database, so the non-Django tests can load it.
"""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from ladder.env import database_from_url, env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", False)
if DEBUG:
    SECRET_KEY = env_str("SECRET_KEY", "development-only-not-secret")
else:
    SECRET_KEY = env_str("SECRET_KEY")
    if len(SECRET_KEY) < 32:
        raise ImproperlyConfigured("SECRET_KEY must be at least 32 characters long")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "ladder.accounts",
    "ladder.bots",
    "ladder.matches",
    "ladder.ratings",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "ladder.urls"
WSGI_APPLICATION = "ladder.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # The site's templates: one base page, then a folder per app (ladder/templates/).
        "DIRS": [BASE_DIR / "ladder" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": database_from_url(
        "DATABASE_URL", env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'ladder.sqlite3'}")
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The development database is shared by the web server, a worker and beat (`make run`):
    # writers wait for the lock (IMMEDIATE takes it at the start of a transaction, so a reader
    # never has to upgrade and fail) instead of failing with "database is locked".
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "transaction_mode": "IMMEDIATE"}
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# The site's own stylesheet (ladder/static/ladder/site.css); nothing is loaded from a CDN.
STATICFILES_DIRS = [BASE_DIR / "ladder" / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "static")))
# Uploaded bots and match logs go through Django's storage API only, so moving them to an
# object store later is a STORAGES change, not a code change.
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(BASE_DIR / "media")))
MEDIA_URL = "media/"

REST_FRAMEWORK = {
    # Token first: DRF answers an anonymous request with the first class's challenge, and only
    # Token has one, so "not signed in" is a 401 (with Session first it would be a 403).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "ladder.api.AutoSchema",
    "EXCEPTION_HANDLER": "ladder.api.exception_handler",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Grass ladder API",
    "DESCRIPTION": "Bots, versions, matches and ratings of the Grass bot ladder.",
    "VERSION": "1",
    # The docs page's assets are served from drf-spectacular-sidecar, never from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Request bodies get their own components (a file upload is not the version it returns).
    "COMPONENT_SPLIT_REQUEST": True,
    "SERVE_INCLUDE_SCHEMA": False,
    "ENUM_NAME_OVERRIDES": {
        "MatchStatusEnum": "ladder.matches.models.Match.Status",
        "VersionStatusEnum": "ladder.bots.models.BotVersion.Status",
    },
}

CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
# Matches are long and few: a worker takes one at a time instead of hoarding queued ones.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Results live in the database (Match rows); nobody reads Celery's result backend.
CELERY_TASK_IGNORE_RESULT = True

GRASS_SANDBOXED = env_bool("GRASS_SANDBOXED", True)
"""Run bots in the OS sandbox. Off only for development on a machine without root."""

GRASS_MATCH_MAX_ATTEMPTS = env_int("GRASS_MATCH_MAX_ATTEMPTS", 3)
"""How many times one match is run (claimed) before it is failed for good; see
`ladder.matches.services.match_requeue_stale` and `match_retry_failed`."""
GRASS_MATCH_STALE_SECONDS = env_int("GRASS_MATCH_STALE_SECONDS", 30 * 60)
"""A match "running" for longer than this lost its worker (killed mid-match) and is requeued.
It must exceed the longest real match, or a slow match would be played a second time."""
GRASS_MATCH_CAPACITY = env_int("GRASS_MATCH_CAPACITY", 4)
"""The matchmaker never lets queued + running matches exceed this: about 2 per worker, so a
worker always finds the next match waiting and the queue never grows without bound."""
GRASS_VALIDATE_INLINE = env_bool("GRASS_VALIDATE_INLINE", False)
"""Validate an upload during the request (the author gets the verdict at once) instead of in
the `validate_version` task. The tests turn it on; production enqueues the task."""

# Celery beat (`celery -A ladder.celery beat`): the matchmaker keeps the queue filled, the sweep
# puts lost and failed matches back. `expires`: a tick that waited behind long matches is
# dropped rather than run late, since the next one is a few seconds away anyway.
CELERY_BEAT_SCHEDULE = {
    "matchmaker": {
        "task": "ladder.matches.tasks.matchmaker_tick",
        "schedule": 5.0,
        "options": {"expires": 5.0},
    },
    "sweep": {
        "task": "ladder.matches.tasks.sweep_matches",
        "schedule": 60.0,
        "options": {"expires": 60.0},
    },
}
