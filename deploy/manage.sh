#!/usr/bin/env bash
# manage.py with the production environment: deploy/manage.sh migrate, collectstatic, ...
# Reads /etc/grass/grass.env (GRASS_ENV_FILE to use another), as the systemd units do.
#   sudo -u grass /opt/grass/deploy/manage.sh migrate          # the web host, as the site's user
#   sudo /opt/grass/deploy/manage.sh ladder_examples           # a worker host: plays in the sandbox
set -euo pipefail
cd "$(dirname "$0")/.."
env_file="${GRASS_ENV_FILE:-/etc/grass/grass.env}"
if [ ! -r "$env_file" ]; then
    echo "manage.sh: cannot read $env_file (see deploy/README.md)" >&2
    exit 1
fi
set -a
# shellcheck disable=SC1090
. "$env_file"
set +a
exec .venv/bin/python manage.py "$@"
