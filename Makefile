# Development commands: the same ones the README gives.
#   make setup  set up this machine (deploy/setup.sh; as root on a fresh Debian 12)
#   make test   the whole test suite
#   make run    the whole site on this machine: web server, Celery worker and beat together
PYTHON := .venv/bin/python

.PHONY: setup test run

setup:
	bash deploy/setup.sh

test:
	$(PYTHON) -m pytest -q

# The development defaults of ladder/settings.py: the SQLite file ladder.sqlite3, local Redis.
# Uploads are validated by the worker, as in production: the upload answers at once and the
# bot's page shows the version pending until the verdict is in (it updates by itself). The example
# bots are created (and validated) on the first start; beat's matchmaker then queues their games
# every 5 s. Ctrl-C stops all three processes. WEB_ADDR sets the address (127.0.0.1:8000).
# When nothing answers on Redis's port (and CELERY_BROKER_URL is not set), a Redis that keeps
# nothing on disk is started with them, and stopped with them.
run: export DEBUG = true
# One worker serves this site: when it starts, it takes back the matches that the last Ctrl-C
# stopped mid-game (still "running") and those whose messages a restarted Redis lost.
run: export GRASS_RECOVER_ON_WORKER_START = true
run:
	$(PYTHON) manage.py migrate --noinput
	$(PYTHON) manage.py ladder_examples
	@if [ -n "$$CELERY_BROKER_URL" ] || $(PYTHON) -c "import redis; redis.Redis(socket_connect_timeout=1).ping()" 2>/dev/null; then \
		.venv/bin/honcho start -f Procfile web worker beat; \
	else \
		echo "make run: no Redis on 127.0.0.1:6379, starting one for this run"; \
		.venv/bin/honcho start -f Procfile redis web worker beat; \
	fi
