# Development commands: the same ones the README gives.
#   make setup  set up this machine (deploy/setup.sh; as root on a fresh Debian 12); both of
#               the commands below run it first, and it does nothing it has already done
#   make check  lint, types, import contracts and the fast tier of the tests (docs/testing.md)
#   make test   the whole test suite, as CI runs it
#   make soak   the whole test suite N times on a fresh clone (N=5), each run's failures
#   make run    the whole site on this machine: web server, Celery workers and beat together
#   make admin  an admin account in make run's database (asks for a username and a password)
PYTHON := .venv/bin/python
# make run's data: the SQLite database, uploads and logs, beat's schedule. Its processes run
# as the worker's unprivileged user (deploy/as-worker.sh), which owns this folder.
RUN_DIR := $(CURDIR)/.run
AS_WORKER := deploy/as-worker.sh
HONCHO := .venv/bin/honcho

# What deploy/setup.sh sets up from: `make check`, `make test` and `make run` run it again when
# one of these changed since it last ran to the end (or never did), and skip it otherwise.
SETUP_INPUTS := deploy/setup.sh deploy/install-box.sh deploy/runtime-image.sh \
	deploy/sudoers.d/grass-box pyproject.toml $(wildcard bots/runtime/*) $(wildcard bots/sandbox/*.py)
SETUP_DONE := .venv/.setup-done

.PHONY: setup check test soak run admin

setup:
	bash deploy/setup.sh
	touch $(SETUP_DONE)

$(SETUP_DONE): $(SETUP_INPUTS)
	bash deploy/setup.sh
	touch $(SETUP_DONE)

# The fast tier: every test but the slow kinds (tests/tiers.py: the guest, the browser, Celery,
# the live API, the OS sandbox, the single slow ones), property tests on Hypothesis' `quick`
# profile, in two processes (one per core: these tests compute, they do not wait).
# ruff, mypy and lint-imports run here as themselves, so their tests are left out (`lint`).
FAST := not (vm or browser or e2e or schema or sandbox or slow or lint)

BIN := $(dir $(PYTHON))

check: $(SETUP_DONE)
	$(BIN)ruff check .
	$(BIN)ruff format --check .
	$(BIN)mypy --strict engine bots
	$(BIN)mypy ladder
	$(BIN)mypy bench
	$(BIN)lint-imports
	$(PYTHON) -m pytest -q -n 2 -m "$(FAST)" --hypothesis-profile=quick

# The cgroup v2 guest runs after the rest, alone: its emulator (two busy vCPUs, run ahead of
# the host's other work) starved the Celery workers of the tests beside it on a 2-core machine,
# and their matches missed the tests' waits.
test: $(SETUP_DONE)
	$(PYTHON) -m pytest -q -m "not vm"
	$(PYTHON) -m pytest -q -n 0 -m vm tests/vm

# `make soak N=5`: README's `make test` N times in a row on a fresh clone of HEAD, each run's
# failures printed (tests/soak.sh; hours for N=5). TESTS=... runs those pytest arguments
# instead of the whole suite, to try it.
N ?= 5
soak:
	bash tests/soak.sh $(N) $(TESTS)

# The development defaults: a SQLite file in .run/ (and uploads, logs there), local Redis.
# Uploads are validated by the worker, as in production: the upload answers at once and the
# bot's page shows the version pending until the verdict is in (it updates by itself). The example
# bots are created (and validated) on the first start; beat's matchmaker then queues their games
# every 5 s. Ctrl-C stops them all. WEB_ADDR sets the address (127.0.0.1:8000).
# When nothing answers on Redis's port (and CELERY_BROKER_URL is not set), a Redis that keeps
# nothing on disk is started with them, and stopped with them.
run admin: export DEBUG = true
# Two workers serve this site (Procfile): `worker` plays the games, `quick` does the rest
# (validations, the matchmaker, sweeps, webhooks), so an upload is judged at once even while
# both game processes play. When the game worker starts, it takes back the matches that the
# last Ctrl-C stopped mid-game (still "running") and those whose messages a restarted Redis lost.
run admin: export GRASS_RECOVER_ON_WORKER_START = true
run admin: export DATABASE_URL ?= sqlite:///$(RUN_DIR)/ladder.sqlite3
run admin: export MEDIA_ROOT ?= $(RUN_DIR)/media
run admin: export GRASS_BEAT_SCHEDULE ?= $(RUN_DIR)/celerybeat-schedule
# Every process runs as the worker's user (root only through the box program's sudo rule).
# RUN_DIR holds the database, every uploaded bot's source and the match logs: its user's alone
# (mode 0700), and what the processes write is theirs alone too (umask 077), wherever
# MEDIA_ROOT points.
run: $(SETUP_DONE)
	@mkdir -p "$(RUN_DIR)"
	@chmod 700 "$(RUN_DIR)"
	@if [ "$$(id -u)" = 0 ]; then chown "$${GRASS_WORKER_USER:-grass}:" "$(RUN_DIR)"; fi
	umask 077 && $(AS_WORKER) $(PYTHON) manage.py migrate --noinput
	umask 077 && $(AS_WORKER) $(PYTHON) manage.py ladder_examples
	@# Ctrl-C ends honcho with status 130: the way to stop the site, not an error of make's.
	@umask 077; if [ -n "$$CELERY_BROKER_URL" ] || $(PYTHON) -c "import redis; redis.Redis(socket_connect_timeout=1).ping()" 2>/dev/null; then \
		$(HONCHO) start -f Procfile web worker now tables quick beat || [ $$? -eq 130 ]; \
	else \
		echo "make run: no Redis on 127.0.0.1:6379, starting one for this run"; \
		$(HONCHO) start -f Procfile redis web worker now tables quick beat || [ $$? -eq 130 ]; \
	fi

# An admin (staff with every permission, for /admin/) in make run's database, made as make run's
# processes run: as the worker's user, so the database stays theirs to write. ARGS go to
# createsuperuser (say ARGS=--noinput with DJANGO_SUPERUSER_USERNAME, _EMAIL and _PASSWORD set).
admin: $(SETUP_DONE)
	@mkdir -p "$(RUN_DIR)"
	@chmod 700 "$(RUN_DIR)"
	@if [ "$$(id -u)" = 0 ]; then chown "$${GRASS_WORKER_USER:-grass}:" "$(RUN_DIR)"; fi
	umask 077 && $(AS_WORKER) $(PYTHON) manage.py migrate --noinput
	@# The username offered by default: the person's (sudo's caller), not the worker's user.
	umask 077 && LOGNAME="$${SUDO_USER:-$$(id -un)}" $(AS_WORKER) $(PYTHON) manage.py createsuperuser $(ARGS)
