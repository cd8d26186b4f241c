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
| CACHE_DIR | `<tmp>/grass-ladder-cache-<uid>`: the web host's file cache (computed replays) |
| LOG_LEVEL | `INFO`: logs go to stderr (the journal under systemd) |
| CELERY_WORKER_CONCURRENCY | the machine's cores: matches a worker plays at once |
| GRASS_SANDBOXED | true: bots run in the OS sandbox (false only on a machine without root) |
| GRASS_RUNTIME_IMAGE | (this code's image): the bots' runtime image matches are played on |
| GRASS_MATCH_MAX_ATTEMPTS | 3: runs of one match before it is given up (failed for good) |
| GRASS_MATCH_STALE_SECONDS | 1800: the longest a match may run; then it is requeued |
| GRASS_MATCH_FILES_KEEP_DAYS | 0: days a ladder match's log is kept unless watched (0: forever) |
| GRASS_MATCH_HEARTBEAT_SECONDS | 10: how often a worker playing a match writes its heartbeat |
| GRASS_SANDBOX_PROOF_SECONDS | 600: how often a match worker proves its sandbox (known bots) |
| GRASS_HOST_FAULTS_IN_A_ROW | 3: host-fault failures in a row that stop a worker's matches |
| GRASS_MATCH_SILENT_SECONDS | 45: a running match with no heartbeat for this long is requeued |
| GRASS_MATCH_RESEND_SECONDS | 30: a match queued this long, with no message in Redis, is resent |
| GRASS_MATCH_SAVE_RETRY_SECONDS | 300: how long a played match's save is retried, database down |
| GRASS_RECOVER_ON_WORKER_START | false: a starting worker takes back running, queued matches |
| GRASS_MATCH_CAPACITY | `auto`: most queued + running matches; auto asks the live workers |
| GRASS_MATCHES_PER_WORKER_PROCESS | 2: with auto capacity, matches allowed per worker process |
| GRASS_SEATS_PER_CORE | 8: with auto capacity, seats of queued + running matches per worker core |
| GRASS_LADDER_TABLES | `modern:2,...,modern:6,classic:4`: ruleset:seats of ladder games |
| GRASS_DISABLE_AFTER_FORFEITS | 5: forfeits in a row that take a bot off the ladder (0: never) |
| GRASS_VALIDATE_INLINE | false: uploads are validated by a Celery task (true: during the request) |
| GRASS_VALIDATION_RESEND_SECONDS | 600: a version pending this long is sent to the workers again |
| GRASS_SITE_URL | `http://127.0.0.1:8000`: the site's address, for links in webhooks and emails |
| GRASS_LOGIN_FAILURE_LIMIT | 10: failed logins per account, per address (IPv6: /64) before a lock |
| GRASS_LOGIN_LOCKOUT_MINUTES | 15: how long the lock lasts after the last failure |
| GRASS_SIGNUPS_PER_HOUR | 10: accounts one address (IPv6: one /64) may create per hour (0: off) |
| GRASS_UPLOADS_PER_HOUR | 20: bot versions one account may upload per hour (0: no limit) |
| GRASS_PENDING_VERSIONS_PER_ACCOUNT | 3: versions of one account pending validation at once |
| GRASS_CHALLENGES_PER_DAY | 50: challenges one account may ask for in 24 hours (0: no limit) |
| GRASS_CHALLENGES_WAITING_PER_ACCOUNT | 5: challenges of one account waiting for a place at once |
| GRASS_CHALLENGE_SHARE | 25: percent of the match capacity challenges may hold (at least 1) |
| GRASS_REPLAY_UPLOADS_PER_HOUR | 60: logs one client may open at /replay/ per hour (0: no limit) |
| GRASS_REPLAY_COMPUTES_PER_HOUR | 300: uncached match replays computed for one client per hour |
| GRASS_CHANNEL_LAYER_URL | `redis://127.0.0.1:6379/1`: the Redis of live tables (Django Channels) |
| GRASS_LIVE_FRAMES_PER_SECOND | 4: frames a second a running match sends at most (0: none) |
| GRASS_PLAY_DECISION_SECONDS | 120: a person's time for each decision in the browser |
| GRASS_PLAY_MAX_HANDS | 5: most hands a person's game may be set to |
| GRASS_PLAY_GAMES_AT_ONCE | 1: a person's games queued or running at once |
| GRASS_PLAY_QUEUE | `matches`: the Celery queue of people's games (`play`: a pool of their own) |
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
import tempfile
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

# The cache holds computed replays (seconds of engine work each, ladder/replays) and the counts
# that limit log uploads, so every gunicorn worker must share it: a directory on the web host
# (the service's own /tmp under PrivateTmp). A site with several web hosts would use Redis
# instead (django.core.cache.backends.redis.RedisCache, a database apart from the broker's).
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": env_str(
            "CACHE_DIR", str(Path(tempfile.gettempdir()) / f"grass-ladder-cache-{os.getuid()}")
        ),
        # A replay is up to about 1 MB gzipped: this keeps the directory under about 500 MB.
        "OPTIONS": {"MAX_ENTRIES": 500},
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
# Three queues. `matches`: the ladder's games, and `challenges`: authors' challenges, on match
# workers (`-Q matches,challenges`), which take them in turn, so a challenge is played soon
# however many ladder matches are queued, while the share of room challenges may hold
# (GRASS_CHALLENGE_SHARE) keeps them from crowding rated play out. `celery` (the default queue,
# so every task not routed elsewhere): the quick work (validations, the matchmaker, the sweeps,
# webhook deliveries, tournaments' steps), on quick workers (`-Q celery`) that never take a
# match, so an upload's verdict waits for its own validation game only, however busy the ladder
# is: a worker taking every queue had every process playing a game while validations and ticks
# piled up behind them. `make run` (Procfile) and deploy/systemd run both pools; a worker
# without -Q (the tests) takes all three.
CELERY_TASK_DEFAULT_QUEUE = "celery"
# People's games (`ladder.live`) go to GRASS_PLAY_QUEUE: `matches` unless the site says
# otherwise. They wait on a person most of their time, so a busy site may give them a pool of
# their own (GRASS_PLAY_QUEUE=play and workers with `-Q play` and more processes than cores),
# where they never hold a process meant for the ladder's games (docs/live-operations.md).
GRASS_PLAY_QUEUE = env_str("GRASS_PLAY_QUEUE", "matches")
CELERY_TASK_QUEUES = (
    Queue("celery"),
    Queue("matches"),
    Queue("challenges"),
    *(
        [Queue(GRASS_PLAY_QUEUE)]
        if GRASS_PLAY_QUEUE not in ("celery", "matches", "challenges")
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
`ladder.matches.services.match_requeue_stale` and `match_retry_failed`."""
GRASS_MATCH_STALE_SECONDS = env_int("GRASS_MATCH_STALE_SECONDS", 30 * 60)
"""The longest a match may run: one "running" for longer is requeued whatever its heartbeat
says (a worker hung mid-match). It must exceed the longest real match, or a slow match would be
played a second time. Also the fallback for lost messages when the broker cannot be read."""
GRASS_SANDBOX_PROOF_SECONDS = env_int("GRASS_SANDBOX_PROOF_SECONDS", 600)
"""How often a match worker proves its sandbox again (the known bot of each language makes a
decision, `bots.runner.proof`): a worker whose host breaks while it runs stops taking matches
instead of failing them. It proves at start too, and after any match failed for a host fault."""
GRASS_HOST_FAULTS_IN_A_ROW = env_int("GRASS_HOST_FAULTS_IN_A_ROW", 3)
"""Matches in a row failed for host faults after which a worker stops taking matches, even if
its sandbox proves sound: a worker that fails matches much faster than its peers must not
swallow the queue."""
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
time, is deleted by the hourly `expire_match_files` (`matches.services.match_files_expire`).
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
GRASS_CHALLENGES_PER_DAY = env_int("GRASS_CHALLENGES_PER_DAY", 50)
"""Challenges (unrated matches on demand, `ladder.challenges`) one account may ask for in any 24
hours, rematches included; past it the API answers 429 with Retry-After (0: no limit). Each
costs a worker a whole game."""
GRASS_CHALLENGES_WAITING_PER_ACCOUNT = env_int("GRASS_CHALLENGES_WAITING_PER_ACCOUNT", 5)
"""Challenges of one account waiting for a place at once (more: 429 until one is sent)."""
GRASS_CHALLENGE_SHARE = env_int("GRASS_CHALLENGE_SHARE", 25)
"""The percent of the match capacity (GRASS_MATCH_CAPACITY, or sized from the live workers)
that challenges may hold, queued or running, at any time; at least one match while a worker
is up. The matchmaker fills the rest with rated games, so rated play keeps the other 75%
however many challenges wait; challenges beyond the share wait their turn, one account's
after another's (`ladder.challenges.services.challenge_dispatch`)."""
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
GRASS_LIVE_FRAMES_PER_SECOND = env_int("GRASS_LIVE_FRAMES_PER_SECOND", 4)
"""At most this many frames a second of each running match go to its watchers (a person's
game also sends one whenever the person is asked); 0 sends none for bots' games."""
GRASS_PLAY_DECISION_SECONDS = env_int("GRASS_PLAY_DECISION_SECONDS", 120)
"""A person's time for each decision of a game in the browser; then the safe default plays and
it is a strike, as for a bot (three strikes forfeit the game)."""
GRASS_PLAY_MAX_HANDS = env_int("GRASS_PLAY_MAX_HANDS", 5)
"""The most hands a person's game may be set to: a game holds a worker process while the
person thinks, and must end well within GRASS_MATCH_STALE_SECONDS."""
GRASS_PLAY_GAMES_AT_ONCE = env_int("GRASS_PLAY_GAMES_AT_ONCE", 1)
"""A person's games queued or running at once; the Play page refuses another until one ends."""
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
    # the workers again after GRASS_VALIDATION_RESEND_SECONDS.
    "validations": {
        "task": "ladder.bots.tasks.sweep_validations",
        "schedule": 60.0,
        "options": {"expire_seconds": 60},
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
