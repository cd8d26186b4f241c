"""Django settings of the ladder site, read from the environment (see ladder/env.py).

| variable | default |
| --- | --- |
| DEBUG | false |
| SECRET_KEY | required, except with DEBUG (then a fixed development key) |
| ALLOWED_HOSTS | `localhost,127.0.0.1` |
| CSRF_TRUSTED_ORIGINS | none: other origins that may POST (`https://a.example`) |
| SITE_HTTPS | false: HTTPS via a proxy setting X-Forwarded-Proto (secure cookies, redirect) |
| SECURE_HSTS_SECONDS | 0: HSTS max-age, sent only with SITE_HTTPS (start small, then a year) |
| SECURE_HSTS_INCLUDE_SUBDOMAINS, SECURE_HSTS_PRELOAD | false, false |
| DATABASE_URL | `sqlite:///<repo>/.run/ladder.sqlite3` (make run's; tests use PostgreSQL) |
| CELERY_BROKER_URL | `redis://127.0.0.1:6379/0` |
| MEDIA_ROOT | `<repo>/media`: uploaded bots and match logs (shared by web and worker hosts) |
| MEDIA_STORAGE | `django.core.files.storage.FileSystemStorage` (at MEDIA_ROOT) |
| MEDIA_STORAGE_OPTIONS | `{}`: JSON object of the storage class's options |
| STATIC_ROOT | `<repo>/static`: where `collectstatic` puts the files nginx serves at /static/ |
| STATIC_STORAGE | `django.contrib.staticfiles.storage.StaticFilesStorage` |
| GRASS_CACHE_URL | `redis://127.0.0.1:6379/2`: the shared cache, a Redis database of its own |
| GRASS_CACHE_KEY_PREFIX | empty: a prefix of the cache's keys (sites sharing its database) |
| LOG_LEVEL | `INFO`: logs go to stderr (the journal under systemd) |
| CELERY_WORKER_CONCURRENCY | the machine's cores: matches a worker plays at once |
| GRASS_SANDBOXED | true: bots run in the OS sandbox (false only on a machine without root) |
| GRASS_RUNTIME_IMAGE | (this code's image): the bots' runtime image matches are played on |
| GRASS_MATCH_MAX_ATTEMPTS | 3: runs of one match before it is given up (failed for good) |
| GRASS_MATCH_STALE_SECONDS | 1800: a match claimed without a heartbeat this long ago is requeued |
| GRASS_MATCH_FILES_KEEP_DAYS | 0: days a ladder match's log is kept unless watched (0: forever) |
| GRASS_MATCH_HEARTBEAT_SECONDS | 10: how often a worker playing a match writes its heartbeat |
| GRASS_SANDBOX_PROOF_SECONDS | 600: how often a match worker proves its sandbox (known bots) |
| GRASS_HOST_FAULTS_IN_A_ROW | 3: host faults in a row that stop a worker taking work |
| GRASS_BREAKER_PROOF_SECONDS | 30: how often a stopped worker proves itself again |
| GRASS_MATCH_MAX_HOST_FAULTS | 10: host faults after which a match is failed for good |
| GRASS_MATCH_SILENT_SECONDS | 45: a running match with no heartbeat for this long is requeued |
| GRASS_MATCH_RESEND_SECONDS | 30: a match queued this long, with no message in Redis, is resent |
| GRASS_MATCH_SAVE_RETRY_SECONDS | 300: how long a played match's save is retried, database down |
| GRASS_RECOVER_ON_WORKER_START | false: a starting worker takes back running, queued matches |
| GRASS_MATCH_CAPACITY | `auto`: most queued + running matches; auto asks the live workers |
| GRASS_NOW_CAPACITY | `auto`: processes of the pool that plays what someone waits for (`-Q now`) |
| GRASS_TABLES_CAPACITY | `auto`: people's tables of the table hosts (`-Q tables -P threads`) |
| GRASS_MATCHES_PER_WORKER_PROCESS | 2: with auto capacity, matches allowed per worker process |
| GRASS_SEATS_PER_CORE | 8: with auto capacity, seats of queued + running matches per worker core |
| GRASS_LADDER_TABLES | `modern:2,...,modern:6,classic:4`: ruleset:seats of ladder games |
| GRASS_DISABLE_AFTER_FORFEITS | 5: forfeits in a row that take a bot off the ladder (0: never) |
| GRASS_PROVISIONAL_GAMES | 15: a rating is marked provisional (`1620?`) below this many games |
| GRASS_FAIRPLAY_PAIRS | 1000: pairs of bots the collusion test allows for (bar: 2 x this / 0.01) |
| GRASS_VALIDATE_INLINE | false: uploads are validated by a Celery task (true: during the request) |
| GRASS_VALIDATION_RESEND_SECONDS | 600: a version pending this long is sent to the workers again |
| GRASS_SITE_URL | `http://127.0.0.1:8000`: the site's address, for links in webhooks and emails |
| GRASS_LOGIN_FAILURE_LIMIT | 10: failed logins per account, per address (IPv6: /64) before a lock |
| GRASS_LOGIN_LOCKOUT_MINUTES | 15: how long the lock lasts after the last failure |
| GRASS_SIGNUPS_PER_HOUR | 10: accounts one address (IPv6: one /64) may create per hour (0: off) |
| GRASS_SIGNUPS_PER_HOUR_48 | 20: accounts one IPv6 /48 may create per hour, its /64s together |
| GRASS_LINK_SIGNUP_DAYS | 30: accounts made from one IPv4 address or /48 this close are linked |
| GRASS_UPLOADS_PER_HOUR | 20: bot versions one account may upload per hour (0: no limit) |
| GRASS_PENDING_VERSIONS_PER_ACCOUNT | 3: versions of one account pending validation at once |
| GRASS_CHALLENGES_PER_DAY | 50: challenges one account may ask for in 24 hours (0: no limit) |
| GRASS_CHALLENGES_WAITING_PER_ACCOUNT | 5: challenges of one account waiting for a place at once |
| GRASS_CHALLENGE_SHARE | 25: percent of the `now` pool challenges may hold (at least 1) |
| GRASS_FIRST_GAMES_SHARE | 25: percent of the `now` pool new versions' first rated games may hold |
| GRASS_REPLAY_UPLOADS_PER_HOUR | 60: logs one client may open at /replay/ per hour (0: no limit) |
| GRASS_REPLAY_COMPUTES_PER_HOUR | 300: uncached match replays computed for one client per hour |
| GRASS_CHANNEL_LAYER_URL | `redis://127.0.0.1:6379/1`: the Redis of live tables (Django Channels) |
| GRASS_LIVE_FRAMES_PER_SECOND | 4: frames a second a running match sends at most (0: none) |
| GRASS_PLAY_DECISION_SECONDS | 120: a person's time for each decision in the browser |
| GRASS_PLAY_MAX_HANDS | 5: most hands a person's game may be set to |
| GRASS_PLAY_GAMES_AT_ONCE | 1: a person's games queued or running at once |
| GRASS_PLAY_QUEUE | `tables`: the queue of people's games (the table host's; `now`: the now pool) |
| GRASS_PLAY_SHARE | 50: with GRASS_PLAY_QUEUE=now, percent of that pool people's games may hold |
| GRASS_PLAY_GAMES_MAX | 0: people's games at once on the whole site (0: the table hosts' threads) |
| GRASS_LIVE_MESSAGE_BYTES | 1024: the longest message a browser may send over a live socket |
| GRASS_LIVE_MESSAGES_PER_SECOND | 2: messages a socket may send a second (bursts of 10) |
| GRASS_WEBHOOK_ALLOW_PRIVATE | false: webhooks may reach private, loopback addresses (dev, tests) |
| GRASS_WEBHOOK_ALLOWED_HOSTS | none: `host[:port]` patterns webhooks may reach even if private |
| EMAIL_BACKEND | `django.core.mail.backends.console.EmailBackend` (SMTP: `...smtp.EmailBackend`) |
| EMAIL_HOST, EMAIL_PORT, EMAIL_USE_TLS | `localhost`, 25, false: the SMTP server |
| EMAIL_HOST_USER, EMAIL_HOST_PASSWORD | empty: the SMTP login |
| DEFAULT_FROM_EMAIL | `grass-ladder@localhost`: the sender of notification emails |

Importing this module never touches the database, so the non-Django tests can load it.
"""

from __future__ import annotations

import importlib.util
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from ladder.env import (
    database_from_url,
    env_bool,
    env_int,
    env_int_or_auto,
    env_json_object,
    env_ladder_tables,
    env_list,
    env_str,
)

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", False)
if DEBUG:
    SECRET_KEY = env_str("SECRET_KEY", "development-only-not-secret")
else:
    if not os.environ.get("SECRET_KEY"):
        # What a newcomer meets first when running manage.py by hand: say how to go on.
        raise ImproperlyConfigured(
            "the environment variable SECRET_KEY must be set. On a development machine, run "
            "with DEBUG=true as `make run` does (an admin: `sudo make admin`; another command: "
            "sudo deploy/as-worker.sh env DEBUG=true .venv/bin/python manage.py <command>); "
            "on a server, through deploy/manage.sh, which reads the site's environment file"
        )
    SECRET_KEY = env_str("SECRET_KEY")
    if len(SECRET_KEY) < 32:
        raise ImproperlyConfigured("SECRET_KEY must be at least 32 characters long")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# Production serves the site over HTTPS: nginx terminates TLS and passes the scheme to gunicorn
# in X-Forwarded-Proto, which it always overwrites (deploy/nginx/grass.conf), so a client cannot
# forge it. Trusting that header is only safe behind such a proxy, hence one switch for all.
SITE_HTTPS = env_bool("SITE_HTTPS", False)
if SITE_HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
# HSTS tells browsers never to use plain HTTP for this host again: a mistake sticks for max-age,
# so it is off unless asked for (SecurityMiddleware sends it on HTTPS responses only).
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)

INSTALLED_APPS = [
    # daphne first: its `runserver` serves the ASGI application (WebSockets included), so
    # `make run`'s web process serves the live tables as production's daphne does.
    "daphne",
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
    "ladder.matchmaking",
    "ladder.ratings",
    "ladder.tournaments",
    "ladder.challenges",
    "django_celery_beat",
    "ladder.replays",
    "ladder.notifications",
    "ladder.live",
    "ladder.fairplay",
    # Django Channels: the live tables' WebSockets (ladder/asgi.py, ladder/live/).
    "channels",
    # The benchmarks' management commands (bench/), when the checkout has them.
    *(["bench"] if importlib.util.find_spec("bench") else []),
    # django-axes: failed logins counted per account and per address (see AXES_* below).
    "axes",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as axes asks: turns a log-in form that axes refused into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "ladder.urls"
WSGI_APPLICATION = "ladder.wsgi.application"
# The live tables' WebSockets (and, under `runserver`, every page): ladder/asgi.py.
ASGI_APPLICATION = "ladder.asgi.application"

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
        "DATABASE_URL", env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / '.run' / 'ladder.sqlite3'}")
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The development database is shared by the web server, a worker and beat (`make run`):
    # writers wait for the lock (IMMEDIATE takes it at the start of a transaction, so a reader
    # never has to upgrade and fail) instead of failing with "database is locked".
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "transaction_mode": "IMMEDIATE"}
    )
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # The site's queries read a few index ranges each. On tables of millions of rows the
    # planner reaches for parallel workers, whose start costs more than such a query (10-40 ms
    # on a busy 2-core host: the 10M-match benchmark's slowest pages, docs/scale.md).
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
        "options", "-c max_parallel_workers_per_gather=0"
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Every password check goes through authenticate(): axes' backend comes first and refuses a
# locked-out account or address before the password is even looked at.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
GRASS_LOGIN_FAILURE_LIMIT = env_int("GRASS_LOGIN_FAILURE_LIMIT", 10)
"""Failed logins after which logging in is refused, counted apart for each account (from any
address: a password guessed from many machines) and for each address (for any account: one
machine trying many accounts; an IPv6 address counts as its /64, `ladder.clients.network_key`).
0 turns the limit off."""
GRASS_LOGIN_LOCKOUT_MINUTES = env_int("GRASS_LOGIN_LOCKOUT_MINUTES", 15)
"""How long the refusal lasts after the last failure that counted; failures older than this
are forgotten. Staff may lift it sooner (admin: Axes, Access attempts)."""
AXES_ENABLED = GRASS_LOGIN_FAILURE_LIMIT > 0
AXES_FAILURE_LIMIT = max(GRASS_LOGIN_FAILURE_LIMIT, 1)
AXES_COOLOFF_TIME = timedelta(minutes=GRASS_LOGIN_LOCKOUT_MINUTES)
# Two separate counts, not one per (account, address) pair: either one reaching the limit locks.
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
# A failure during a lockout does not extend it, so Retry-After tells the truth and the owner
# of an account someone is hammering gets back in when the lockout ends.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
# Not reset on success: a success would clear the address's count too, so an attacker could
# log in to an account of their own between guesses.
AXES_RESET_ON_SUCCESS = False
# The address nginx saw, never one the client wrote, and for IPv6 its /64 (ladder/clients.py):
# one host may use any address of its /64, so each must not get a count of its own. Axes
# keeps this key as the attempt's address (the /64's first address, e.g. 2001:db8:7:1::).
AXES_CLIENT_IP_CALLABLE = "ladder.clients.client_network"
AXES_LOCKOUT_CALLABLE = "ladder.accounts.lockout.lockout_response"
# Only failures are kept (and forgotten after the lockout time), not a log of every login.
AXES_DISABLE_ACCESS_LOG = True

# Under /api/ a failed CSRF check answers JSON like every other API error (ladder/api.py).
CSRF_FAILURE_VIEW = "ladder.api.csrf_failure"

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
STORAGES = {
    # Several machines read and write media (the web host stores uploads, workers store logs):
    # either MEDIA_ROOT is one shared mount (NFS), or MEDIA_STORAGE names an object store's
    # backend (e.g. django-storages, installed separately) with MEDIA_STORAGE_OPTIONS.
    "default": {
        "BACKEND": env_str("MEDIA_STORAGE", "django.core.files.storage.FileSystemStorage"),
        "OPTIONS": env_json_object("MEDIA_STORAGE_OPTIONS", {}),
    },
    # Production may use ManifestStaticFilesStorage (hashed names, cached for good by nginx);
    # it needs `collectstatic` before the site starts, so it is not the default.
    "staticfiles": {
        "BACKEND": env_str(
            "STATIC_STORAGE", "django.contrib.staticfiles.storage.StaticFilesStorage"
        ),
    },
}

# Everything is logged to stderr: under systemd that is the journal, under honcho the terminal.
# Without this, Django with DEBUG off sends a failed request's traceback only to ADMINS by mail.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "{levelname} {name}: {message}", "style": "{"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["stderr"], "level": env_str("LOG_LEVEL", "INFO").upper()},
}

# The cache is shared by every host (ladder/shared_cache.py): computed replays, the counts of
# the limits (sign-ups, replays), beat's kept leaderboard counts and anchors, the workers'
# capacity. It lives in the Redis the site already runs, in a database of its own: a file cache
# counted per host, and its default folder in /tmp could be made beforehand by any local user
# with a pickle in it that Django would have run. What is read back is signed with SECRET_KEY
# (`SignedSerializer`), since unpickling a value planted in Redis would run code too.
GRASS_CACHE_URL = env_str("GRASS_CACHE_URL", "redis://127.0.0.1:6379/2")
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": GRASS_CACHE_URL,
        # Sites (or test runs) sharing one Redis database keep apart by a prefix each.
        "KEY_PREFIX": env_str("GRASS_CACHE_KEY_PREFIX", ""),
        "OPTIONS": {
            "serializer": "ladder.shared_cache.SignedSerializer",
            # A Redis that does not answer costs a page a second at most per read, not a
            # hang: every use treats a failure as a miss (ladder/shared_cache.py).
            "socket_connect_timeout": 1,
            "socket_timeout": 3,
        },
    }
}
GRASS_REPLAY_COMPUTES_PER_HOUR = env_int("GRASS_REPLAY_COMPUTES_PER_HOUR", 300)
"""Match replays (a match and a view) one client may have computed per hour; replays already
in the cache are free, so only a client walking through hundreds of matches meets it (about
40 matches with all seven views). 0 turns the limit off."""
GRASS_SIGNUPS_PER_HOUR = env_int("GRASS_SIGNUPS_PER_HOUR", 10)
"""Accounts one address may create per clock hour (the sign-up page and the API share the
count, `ladder.accounts.services.signup_wait`); every address of one IPv6 /64 counts as one
(`ladder.clients.network_key`). 0 turns the limit off."""
GRASS_SIGNUPS_PER_HOUR_48 = env_int("GRASS_SIGNUPS_PER_HOUR_48", 20)
"""Accounts one IPv6 /48 may create per clock hour, counted beside the /64's limit: a /48 holds
65,536 /64s, so the /64 limit alone let one site make accounts by the thousand. 0 turns it off."""
GRASS_LINK_SIGNUP_DAYS = env_int("GRASS_LINK_SIGNUP_DAYS", 30)
"""Accounts signed up from one IPv4 address, or one IPv6 /48, within this many days of each other
are linked: their bots never share a rated table (`ladder.accounts.models.Seating`,
docs/fairplay.md). Loopback clients (the machine itself) are never linked. 0: only staff link."""
GRASS_UPLOADS_PER_HOUR = env_int("GRASS_UPLOADS_PER_HOUR", 20)
"""Bot versions one account may upload in an hour (the API and the upload page together, all of
its bots; `ladder.bots.services.bot_version_upload_check`): each costs a worker a build and a
validation game. Refused uploads (a bad file, a full disk) do not count. 0 turns it off."""
GRASS_PENDING_VERSIONS_PER_ACCOUNT = env_int("GRASS_PENDING_VERSIONS_PER_ACCOUNT", 3)
"""Versions of one account that may wait for their validation game at once; a further upload
is refused until one has its verdict, so one account cannot fill the workers' queue (a build
that sleeps holds a worker for its whole time limit). 0 turns it off."""
GRASS_REPLAY_UPLOADS_PER_HOUR = env_int("GRASS_REPLAY_UPLOADS_PER_HOUR", 60)
"""Logs one client may open at /replay/ in an hour (a client: a signed-in user, else an
address); each costs up to several seconds of engine work. 0 turns the limit off."""

REST_FRAMEWORK = {
    # Token first: DRF answers an anonymous request with the first class's challenge, and only
    # Token has one, so "not signed in" is a 401 (with Session first it would be a 403).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        # The same token as `Bearer <key>`, what generated clients send (ladder/accounts/
        # authentication.py).
        "ladder.accounts.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_PAGINATION_CLASS": "ladder.pagination.Pagination",
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
    # A row's id in a path (ladder/converters.py): an integer no larger than a row's id can be.
    "PATH_CONVERTER_OVERRIDES": {
        "id": {"type": "integer", "format": "int64", "minimum": 0, "maximum": 2**63 - 1}
    },
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
# Each worker process plays one match at a time, and a match keeps about one core busy (its bots
# think in turn): as many processes as cores. `--concurrency` on the command line wins.
CELERY_WORKER_CONCURRENCY = env_int("CELERY_WORKER_CONCURRENCY", 0) or None
# Four queues. `matches`: the ladder's background games, on the match workers (`-Q matches`),
# which the matchmaker keeps busy. `now`: the work someone waits for (a person's game, a
# challenge, a new version's first rated game: `ladder.matches.lanes`), on a pool of its own
# (`-Q now,challenges`) that never takes a background game, so none of it waits for a ladder
# game to end; each kind holds its share of that pool (GRASS_PLAY_SHARE, GRASS_CHALLENGE_SHARE,
# GRASS_FIRST_GAMES_SHARE) and is taken first by its message's priority. `challenges`: where
# challenges went before `now`; its pool still reads it, for messages sent before an upgrade.
# `celery` (the default queue, so every task not routed elsewhere): the quick work
# (validations, the matchmaker, the sweeps, webhook deliveries, tournaments' steps), on quick
# workers (`-Q celery`) that never take a match, so an upload's verdict waits for its own
# validation game only, however busy the ladder is. `make run` (Procfile) and deploy/systemd
# run the three pools; a worker without -Q (the tests) takes every queue.
CELERY_TASK_DEFAULT_QUEUE = "celery"
# People's games (`ladder.live`) go to GRASS_PLAY_QUEUE: `tables`, the table host's queue (a
# worker with a pool of threads, `-P threads`, one per table: a person's game mostly waits for
# the person, so it holds a thread, not a process; ladder/matches/lanes.py, docs/play.md). A
# site may send them to `now` instead, where they hold GRASS_PLAY_SHARE of that pool.
GRASS_PLAY_QUEUE = env_str("GRASS_PLAY_QUEUE", "tables")
CELERY_TASK_QUEUES = (
    Queue("celery"),
    Queue("matches"),
    Queue("now"),
    Queue("challenges"),
    Queue("tables"),
    *(
        [Queue(GRASS_PLAY_QUEUE)]
        if GRASS_PLAY_QUEUE not in ("celery", "matches", "now", "challenges", "tables")
        else []
    ),
)
CELERY_TASK_ROUTES = {"ladder.matches.tasks.run_match": {"queue": "matches"}}
# A worker started before Redis answers (a reboot of every host at once) waits for it.
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

GRASS_SANDBOXED = env_bool("GRASS_SANDBOXED", True)
"""Run bots in the OS sandbox. Off only for development on a machine without root."""
GRASS_RUNTIME_IMAGE = env_str("GRASS_RUNTIME_IMAGE", "")
"""The bots' runtime image the site plays on (`bots.runner.runtime.identity()`, for example
`1-493f7964e151`). Empty: the image of this code's bots/runtime. New matches carry it; a worker
whose image differs refuses matches and validations with an error saying so, so one rated
pool never mixes images (deploy/README.md, "Rolling out a new runtime image")."""

GRASS_MATCH_MAX_ATTEMPTS = env_int("GRASS_MATCH_MAX_ATTEMPTS", 3)
"""How many times one match is run (claimed) before it is failed for good; see
`ladder.matches.recovery.match_requeue_stale` and `match_retry_failed`."""
GRASS_MATCH_STALE_SECONDS = env_int("GRASS_MATCH_STALE_SECONDS", 30 * 60)
"""A running match claimed without a heartbeat (by a worker of an earlier release) this long
ago is requeued. A match whose worker beats is never taken back for its age, however long it
plays (issue 35: a person's long game was taken back and played twice); a hung run stops
beating by itself (`ladder.matches.heartbeat.Progress`). Also the fallback for lost messages
when the broker cannot be read."""
GRASS_SANDBOX_PROOF_SECONDS = env_int("GRASS_SANDBOX_PROOF_SECONDS", 600)
"""How often a match worker proves its sandbox again (the known bot of each language makes a
decision, `bots.runner.proof`): a worker whose host breaks while it runs stops taking matches
instead of failing them. It proves at start too, and after any match failed for a host fault."""
GRASS_HOST_FAULTS_IN_A_ROW = env_int("GRASS_HOST_FAULTS_IN_A_ROW", 3)
"""Host faults in a row (matches or validations, `bots.runner.faults`) after which a worker
stops taking work, even if its checks pass: a worker that fails work much faster than its
peers must not swallow the queue (`ladder.matches.breaker`)."""
GRASS_BREAKER_PROOF_SECONDS = env_int("GRASS_BREAKER_PROOF_SECONDS", 30)
"""How often a worker stopped by its breaker proves itself again (media, runtime image,
sandbox, known bots); it takes work again after the first proof that passes. 0: never (only
a restart takes it back)."""
GRASS_MATCH_MAX_HOST_FAULTS = env_int("GRASS_MATCH_MAX_HOST_FAULTS", 10)
"""Host faults after which one match is failed for good, unrated ("gave up after N host
faults"): a host fault does not use up its attempts, but a match that breaks every worker it
reaches (a fault this code does not foresee) must not go round them for ever."""
GRASS_MATCH_HEARTBEAT_SECONDS = env_int("GRASS_MATCH_HEARTBEAT_SECONDS", 10)
"""How often the worker playing a match writes its heartbeat into the match's row."""
GRASS_MATCH_SILENT_SECONDS = env_int("GRASS_MATCH_SILENT_SECONDS", 45)
"""A running match whose heartbeat is older than this lost its worker (killed, its host gone)
and the sweep takes it back: with the sweep every 15 s, within about a minute of the loss."""
if (
    GRASS_MATCH_HEARTBEAT_SECONDS < 1
    or GRASS_MATCH_SILENT_SECONDS < 3 * GRASS_MATCH_HEARTBEAT_SECONDS
):
    raise ImproperlyConfigured(
        "GRASS_MATCH_SILENT_SECONDS must be at least 3 x GRASS_MATCH_HEARTBEAT_SECONDS (>= 1), "
        "or a busy worker's match would be taken back while it plays"
    )
GRASS_MATCH_RESEND_SECONDS = env_int("GRASS_MATCH_RESEND_SECONDS", 30)
"""A match queued this long whose message is not waiting in the broker (a Redis restart lost
it, or a dead worker took it) is sent to the workers again by the sweep."""
GRASS_MATCH_SAVE_RETRY_SECONDS = env_int("GRASS_MATCH_SAVE_RETRY_SECONDS", 300)
"""How long a worker keeps trying to record a match it has played while the database
connection fails (a PostgreSQL restart or failover), reconnecting between tries, before it
gives the run up as failed (and the match is played again)."""
GRASS_MATCH_FILES_KEEP_DAYS = env_int("GRASS_MATCH_FILES_KEEP_DAYS", 0)
"""Retention of match files: the log (and a replay stored before replays were computed on
view) of a finished ladder match older than this many days, whose replay nobody opened in that
time, is deleted by the hourly `expire_match_files` (`matches.files.match_files_expire`).
Its result, seats and rating changes stay; tournament games' logs are never deleted. 0 keeps
every file (docs/scale.md, "Storage")."""
GRASS_RECOVER_ON_WORKER_START = env_bool("GRASS_RECOVER_ON_WORKER_START", False)
"""A match worker that starts puts every "running" match back in the queue and sends every
queued one again (a quick worker does nothing). Right only where one match worker serves the
site and nothing else was running (`make run`: Ctrl-C kills the matches in play, and a Redis
started with the site kept no messages); with several it would take matches from the living."""
GRASS_MATCH_CAPACITY = env_int_or_auto("GRASS_MATCH_CAPACITY", None)
"""The matchmaker never lets queued + running matches exceed this. None (`auto`): ask the live
workers how many processes they have (`ladder.matchmaking.capacity`) and allow
GRASS_MATCHES_PER_WORKER_PROCESS each, so a worker always finds its next match waiting, a
worker host added or lost changes the flow within a minute, and with no worker up nothing
is queued."""
GRASS_NOW_CAPACITY = env_int_or_auto("GRASS_NOW_CAPACITY", None)
"""The processes of the pool of the work someone waits for (the `now` queue,
`ladder.matches.lanes`), of which each lane holds its share. None (`auto`): the pool
processes of the live workers that read `now`."""
GRASS_TABLES_CAPACITY = env_int_or_auto("GRASS_TABLES_CAPACITY", None)
"""The people's tables of the table hosts (the people's queue, GRASS_PLAY_QUEUE, when it is
not `now`): how many people's games may be queued or running at once. None (`auto`): the pool
threads of the live workers that read that queue."""
GRASS_MATCHES_PER_WORKER_PROCESS = env_int("GRASS_MATCHES_PER_WORKER_PROCESS", 2)
GRASS_SEATS_PER_CORE = env_int("GRASS_SEATS_PER_CORE", 8)
"""With `auto` capacity, the seats of queued + running matches are also kept within this many
per CPU core of the live workers (a core serves about one four-seat table at a time, since
only the seat on turn runs; twice that keeps it busy): a worker with more processes than its
cores can serve queues the extra tables instead of slowing every match it runs."""
GRASS_LADDER_TABLES = env_ladder_tables(
    "GRASS_LADDER_TABLES",
    ["modern:2", "modern:3", "modern:4", "modern:5", "modern:6", "classic:4"],
)
"""The kinds of ladder game (ruleset, seats): each matchmaker run picks one at random, so every
ruleset's leaderboard fills and bots are rated at every table size they may meet."""
GRASS_DISABLE_AFTER_FORFEITS = env_int("GRASS_DISABLE_AFTER_FORFEITS", 5)
"""A bot that forfeits this many ladder games in a row is left out by the matchmaker until a new
version passes validation (0: never)."""
GRASS_PROVISIONAL_GAMES = env_int("GRASS_PROVISIONAL_GAMES", 15)
"""A rating is shown as provisional (`ratings.elo.provisional`) while the bot has played fewer
rated games than this in its ruleset, or its newest valid version has. 15 is where the rating
stops moving fast: K has fallen to a quarter of a first game's (200 to 50) and the band to half
its first width (+/-300 to +/-150, the spread of the whole ladder). docs/ratings.md."""
GRASS_FAIRPLAY_PAIRS = env_int("GRASS_FAIRPLAY_PAIRS", 1000)
"""How many pairs of bots the collusion test allows for (`ladder.fairplay.detect.bar`): a pair
of bots or of seating circles is flagged when its evidence reaches 2 x this / ALPHA (there are
no more pairs of circles under test than pairs of bots: `detect.watches`), so that the chance
any honest pair of either kind among this many is ever flagged stays under ALPHA
(docs/fairplay.md)."""
GRASS_CHALLENGES_PER_DAY = env_int("GRASS_CHALLENGES_PER_DAY", 50)
"""Challenges (unrated matches on demand, `ladder.challenges`) one account may ask for in any 24
hours, rematches included; past it the API answers 429 with Retry-After (0: no limit). Each
costs a worker a whole game."""
GRASS_CHALLENGES_WAITING_PER_ACCOUNT = env_int("GRASS_CHALLENGES_WAITING_PER_ACCOUNT", 5)
"""Challenges of one account waiting for a place at once (more: 429 until one is sent)."""
GRASS_CHALLENGE_SHARE = env_int("GRASS_CHALLENGE_SHARE", 25)
"""The percent of the `now` pool's processes (GRASS_NOW_CAPACITY, or sized from the live
workers) that challenges may hold, queued or running, at any time; at least one while that
pool is up. Challenges beyond it wait their turn, one account's after another's
(`ladder.challenges.services.challenge_dispatch`); people's games and first games keep their
own shares however many challenges wait."""
GRASS_FIRST_GAMES_SHARE = env_int("GRASS_FIRST_GAMES_SHARE", 25)
"""The percent of the `now` pool's processes that the fast lane may hold: the first rated game
in the home page's ruleset of a new bot or a new version, seated at once by the matchmaker
(`ladder.matchmaking.services.matchmaker_first_games`) instead of waiting for a background
game to end; at least one while that pool is up."""
GRASS_VALIDATE_INLINE = env_bool("GRASS_VALIDATE_INLINE", False)
"""Validate an upload during the request (the author gets the verdict at once) instead of in
the `validate_version` task. The tests turn it on; production enqueues the task."""
GRASS_VALIDATION_RESEND_SECONDS = env_int("GRASS_VALIDATION_RESEND_SECONDS", 10 * 60)
"""A version still pending this long after its validation was asked for (a lost task message,
a sandbox that would not start) is sent to the workers again, at most once per this period;
see `ladder.bots.services.bot_version_resend_pending`. Keep it longer than a validation with
its task's retries, or a slow version is validated twice (harmless, but wasted work)."""

# Live tables (ladder/live, ladder/relay): Django Channels with Redis as the channel layer. The
# workers publish each running match's frames there and hear people's actions from it; the
# ASGI server (daphne) serves the browsers' WebSockets from it. A Redis database of its own.
CHANNEL_LAYERS: dict[str, dict[str, Any]] = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {
            "hosts": [
                {
                    "address": env_str("GRASS_CHANNEL_LAYER_URL", "redis://127.0.0.1:6379/1"),
                    # The layer's receive blocks in Redis for up to 5 s (BZPOPMIN); redis-py 8
                    # reads with a 5 s timeout by default, so every idle receive would fail.
                    "socket_timeout": 30,
                    "socket_connect_timeout": 5,
                }
            ],
            # A watcher's socket that does not keep up holds at most this many frames; the
            # rest are dropped (frames are whole, so the next one catches it up).
            "capacity": 50,
            "expiry": 30,
        },
    }
}


def _redis_database(url: str) -> tuple[object, ...]:
    """Where a Redis URL points: host, port or socket, and database number."""
    from redis.connection import parse_url

    try:
        parts = parse_url(url)  # type: ignore[no-untyped-call]
    except ValueError as exc:
        raise ImproperlyConfigured(f"{url!r} is not a Redis URL: {exc}") from None
    return (
        parts.get("host", "localhost"),
        parts.get("port", 6379),
        parts.get("path"),
        parts.get("db", 0),
    )


# Clearing Django's Redis cache empties its whole database (FLUSHDB): sharing one with the
# broker would lose every queued match and validation, with the channel layer every live table.
if _redis_database(GRASS_CACHE_URL) in (
    _redis_database(CELERY_BROKER_URL),
    _redis_database(CHANNEL_LAYERS["default"]["CONFIG"]["hosts"][0]["address"]),
):
    raise ImproperlyConfigured(
        f"GRASS_CACHE_URL ({GRASS_CACHE_URL}) must name a Redis database of its own, not the "
        "broker's (CELERY_BROKER_URL) or the live tables' (GRASS_CHANNEL_LAYER_URL): clearing "
        "the cache empties its whole database"
    )

GRASS_LIVE_FRAMES_PER_SECOND = env_int("GRASS_LIVE_FRAMES_PER_SECOND", 4)
"""At most this many frames a second of each running match go to its watchers (a person's
game also sends one whenever the person is asked); 0 sends none for bots' games."""
GRASS_PLAY_DECISION_SECONDS = env_int("GRASS_PLAY_DECISION_SECONDS", 120)
"""A person's time for each decision of a game in the browser; then the safe default plays and
it is a strike, as for a bot (three strikes forfeit the game)."""
GRASS_PLAY_MAX_HANDS = env_int("GRASS_PLAY_MAX_HANDS", 5)
"""The most hands a person's game may be set to. (A game of any length is played once: its
worker's heartbeat keeps it, issue 35; on the table host it holds a thread, not a process.)"""
GRASS_PLAY_GAMES_AT_ONCE = env_int("GRASS_PLAY_GAMES_AT_ONCE", 1)
"""A person's games queued or running at once; the Play page refuses another until one ends."""
GRASS_PLAY_SHARE = env_int("GRASS_PLAY_SHARE", 50)
"""With GRASS_PLAY_QUEUE=now only: the percent of the `now` pool's processes
(GRASS_NOW_CAPACITY, or sized from the live workers) that people's games may hold, queued or
running, on the whole site; at least one game while that pool is up. There a person's game
holds a worker process while the person thinks, so, as with challenges (GRASS_CHALLENGE_SHARE),
the other lanes keep the rest however many people ask; the Play page refuses a game past it,
saying so (`ladder.matchmaking.capacity.person_places`). On the table host (the default) people's
games may hold as many tables as the live table hosts have threads."""
GRASS_PLAY_GAMES_MAX = env_int("GRASS_PLAY_GAMES_MAX", 0)
"""People's games queued or running at once on the whole site, when set (> 0), instead of
the table hosts' threads (or GRASS_PLAY_SHARE of the `now` pool): a cap below what the hosts
could hold (the bots' boxes of every table share the hosts' cores and memory)."""
GRASS_LIVE_MESSAGE_BYTES = env_int("GRASS_LIVE_MESSAGE_BYTES", 1024)
"""The longest message a browser may send on a live socket: a longer one closes the socket."""
GRASS_LIVE_MESSAGES_PER_SECOND = env_int("GRASS_LIVE_MESSAGES_PER_SECOND", 2)
"""Messages one socket may send a second on average, in bursts of up to five times that; the
rest are dropped, and a socket that keeps flooding is closed."""

GRASS_SITE_URL = env_str("GRASS_SITE_URL", "http://127.0.0.1:8000")
"""The site's public address: webhooks and emails link to its pages with it."""
GRASS_WEBHOOK_ALLOW_PRIVATE = env_bool("GRASS_WEBHOOK_ALLOW_PRIVATE", False)
"""Let webhooks reach private, loopback and link-local addresses. Off in production: an owner's
URL must not make the site probe its own network (ladder/notifications/guard.py)."""
GRASS_WEBHOOK_ALLOWED_HOSTS = env_list("GRASS_WEBHOOK_ALLOWED_HOSTS", [])
"""Hosts webhooks may reach whatever they resolve to: `name`, `name:port`, `*.corp.example`."""

# Notification emails; the console backend prints them (development), SMTP sends them.
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "grass-ladder@localhost")

# Celery beat (`celery -A ladder.celery beat`): the matchmaker keeps the queue filled, the sweep
# puts lost and failed matches back. Every tick expires after its own period: a tick that
# waited (a busy or absent quick worker) is dropped by the worker that finally takes it rather
# than run late, since the next one is already on its way, so the quick queue never grows with
# stale ticks. `expire_seconds`, not `expires`: beat's DatabaseScheduler (django-celery-beat)
# copies an entry into a PeriodicTask row and keeps only `expire_seconds` of its options
# (`ModelEntry._unpack_options`); it silently dropped `expires`, so no tick ever expired.
CELERY_BEAT_SCHEDULE = {
    "matchmaker": {
        "task": "ladder.matchmaking.tasks.matchmaker_tick",
        "schedule": 5.0,
        "options": {"expire_seconds": 5},
    },
    # Every 15 s: a match whose worker died is taken back within GRASS_MATCH_SILENT_SECONDS +
    # 15 s, one whose message was lost within GRASS_MATCH_RESEND_SECONDS + 15 s (each sweep
    # reads only the running and queued matches, and the matches queue in Redis).
    "sweep": {
        "task": "ladder.matches.tasks.sweep_matches",
        "schedule": 15.0,
        "options": {"expire_seconds": 15},
    },
    "match-files": {
        "task": "ladder.matches.tasks.expire_match_files",
        "schedule": 3600.0,
        "options": {"expire_seconds": 3600},
    },
    "tournaments": {
        "task": "ladder.tournaments.tasks.sweep_tournaments",
        "schedule": 30.0,
        "options": {"expire_seconds": 30},
    },
    # Versions left pending (a lost task message, a sandbox that would not start) are sent to
    # the workers again after GRASS_VALIDATION_RESEND_SECONDS; those whose message never
    # reached Redis (it was down at the upload) at the first sweep, so every 15 s: such an
    # upload is sent within 15 s of Redis's return (the sweep reads pending versions only).
    "validations": {
        "task": "ladder.bots.tasks.sweep_validations",
        "schedule": 15.0,
        "options": {"expire_seconds": 15},
    },
    # Challenges waiting for a place are sent once the workers have room for them (also done
    # at once when one is asked for and when a challenge's match settles).
    "challenges": {
        "task": "ladder.challenges.tasks.dispatch_challenges",
        "schedule": 10.0,
        "options": {"expire_seconds": 10},
    },
    # A big leaderboard's size and anchors, read again before the cache lets them go
    # (ladder.ratings.selectors.COUNT_SECONDS), so that no visitor's request pays for them.
    "leaderboards": {
        "task": "ladder.ratings.tasks.keep_leaderboards",
        "schedule": 30.0,
        "options": {"expire_seconds": 30},
    },
    # Webhook deliveries whose task message was lost (a broker restart) are sent again.
    "deliveries": {
        "task": "ladder.notifications.tasks.sweep_deliveries",
        "schedule": 300.0,
        "options": {"expire_seconds": 300},
    },
}
# Beat reads its schedule from the database (django-celery-beat): the entries above, and each
# tournament's open/close/start times, added by the site while beat runs.
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
